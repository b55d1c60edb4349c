"""Command line (`rolemem …`, `python -m rolemem.cli …`): `main` parses and runs a command."""

from .main import main

__all__ = ["main"]
