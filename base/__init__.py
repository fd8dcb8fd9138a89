"""The bottom layer: what every other layer may import and which imports nothing of the project.

* :mod:`clusteremu.base.errors`: the errors the CLI maps to exit statuses (``InputError`` exit 2, ``RunFailure``
  exit 1);
* :mod:`clusteremu.base.java`: Java semantics the real systems' decisions depend on (hash-map iteration orders,
  string and double orderings, ...), shared by every modelled Java system.
"""
