"""`python -m opforge ...` is the `opforge` command."""
import sys

from opforge.cli import main

sys.exit(main())
