"""vlbench: benchmark harness for vision-language models (validation, scoring, results, CLI).

The Python API (`score`, `validate`, `benchmarks`, see `vlbench.api`) is loaded on first use, so
`import vlbench` stays light: no numpy, jsonschema or task module is imported until it is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:
    from vlbench.api import (
        InvalidSubmission,
        Issue,
        ResultRecord,
        UsageError,
        ValidationReport,
        benchmarks,
        score,
        validate,
    )


def __getattr__(name: str) -> Any:
    if name in _API:
        from vlbench import api

        return getattr(api, name)
    raise AttributeError(f"module 'vlbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})


__all__ = [
    "InvalidSubmission",
    "Issue",
    "ResultRecord",
    "UsageError",
    "ValidationReport",
    "__version__",
    "benchmarks",
    "score",
    "validate",
]

# What `vlbench.api` offers, loaded on first use (`__getattr__`); it is the list above, in one place.
_API = frozenset(__all__) - {"__version__"}
