"""The Pulsar cluster model: metadata store, brokers (leader election, load reporting, load manager, bundle
ownership) and clients (lookups, reconnects), as agents whose behaviour is SimPy processes."""
