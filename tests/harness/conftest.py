"""Markers of the harness tests."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "install: builds and installs the package into a temporary folder with pip (offline, a few "
        "seconds); deselect with -m 'not install'",
    )
