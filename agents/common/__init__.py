"""What the modelled systems share above the kernel.

The kernel (:mod:`clusteremu.emulator`) holds the mechanics (:mod:`clusteremu.emulator.jvm` for JVM agents,
:mod:`clusteremu.emulator.election` for metadata-store sessions and leader elections); this package holds the
pieces of a model's scenario description that those mechanics need and that the kernel, which imports no
scenario code, cannot build:

* :mod:`.jvm`: the ``gc`` scenario table and the JVM fault kinds' ``[[faults]]`` fields and checks;
* :mod:`.lifecycle`: cluster operations on server processes (the rolling restart) and their fault fields.
"""
