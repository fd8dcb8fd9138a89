"""clusteremu: agents.

* :mod:`.common`: what the modelled systems share above the kernel (the JVM's scenario tables and fault fields);
* :mod:`.heartbeat`: the kernel's own model;
* :mod:`.pulsar`: Pulsar's metadata store, brokers and clients.
"""
