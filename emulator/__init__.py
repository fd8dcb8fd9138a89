"""clusteremu: emulator."""
