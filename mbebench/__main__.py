import sys

from mbebench.cli import main

sys.exit(main())
