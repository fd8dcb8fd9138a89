"""Command-line interface (filled in by the foundation work)."""
import sys


def main(argv=None) -> int:
    print("clusteremu: the CLI is being built", file=sys.stderr)
    return 2
