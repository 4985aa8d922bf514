import sys

from vlbench.cli import main

sys.exit(main())
