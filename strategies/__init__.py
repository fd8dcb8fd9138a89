"""clusteremu: strategies."""
