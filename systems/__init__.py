"""The built-in systems' plug-ins: one package per system, each declaring its :class:`clusteremu.emulator.systems.System`
(``SYSTEM``) and holding what belongs to the system at the top layer (its ``decide`` adapter, its sweep suites).

They are registered through the ``clusteremu.systems`` entry point group in ``pyproject.toml``, exactly as a
third-party system would be; nothing in the kernel, the tools or the CLI imports them by name.
"""
