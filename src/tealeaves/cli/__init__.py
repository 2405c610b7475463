"""The `tealeaves` command (`main`). `main.py` builds the parser from the command groups, one module
each: heldout.py, compare.py, coherence.py, intrusion.py, evaluate.py, tools.py; options.py holds
the options they share, paths.py the checks of a command's input and output paths."""

from .main import main

__all__ = ["main"]
