"""`python -m tealeaves`: the CLI (Ctrl-C at any point ends with one line)."""

import sys

from tealeaves_launch import main

sys.exit(main())
