"""One module per CLI verb.

Each module defines ``add_parser(subparsers)``, which adds its sub-command and sets ``func`` on it to a
``run(args) -> int`` callable. ``run`` raises :class:`clusteremu.base.errors.InputError` for bad input (exit 2).
"""
