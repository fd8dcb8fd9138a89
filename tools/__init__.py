"""clusteremu: tools."""
