"""vlbench harness: submission envelope, validation, scoring dispatch, results, statistics, CLI."""

__version__ = "0.1.0"
