"""clusteremu: agents."""
