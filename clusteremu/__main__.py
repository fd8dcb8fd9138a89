import sys

from clusteremu.emulator.cli import main

sys.exit(main())
