"""Baseline recipes that regenerate reference submissions (open_clip, diffusers).

Importing this package is light (no torch): the engine's CLI finds `add_cli` here through
`vlbench.registry.cli_plugins`; torch and open_clip load only when a recipe runs.
"""

from typing import Any


def add_cli(commands: Any, groups: dict[str, Any]) -> None:
    from .cli import add_cli as add

    add(commands, groups)
