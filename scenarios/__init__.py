"""clusteremu: scenarios."""
