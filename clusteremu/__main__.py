import sys

from clusteremu.cli import main

sys.exit(main())
