"""The Python API: score and validate from a notebook or a training loop.

    import vlbench
    record = vlbench.score("submissions/mini-retrieval/random.json")
    record = vlbench.score({"image_to_text": ..., "text_to_image": ...}, benchmark="coco-5k")

The same pipeline as the command line, with the same checks and the same `ResultRecord`. An
in-memory document (a dict or list, numpy/torch values allowed) is read exactly as a file written
by `json.dump` would be, without a temporary file. Errors are the CLI's: `UsageError` (bad
arguments, missing file or ground truth: the CLI's exit code 2) and `InvalidSubmission`
(every problem found, in `.issues`: exit code 1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from vlbench import _API
from vlbench.benchmark import Benchmark
from vlbench.bounded_read import refuse_past_caps
from vlbench.errors import InvalidSubmission, Issue, IssueList, UsageError, plural, shorten
from vlbench.jsonio import DEFAULT_MAX_BYTES, DEFAULT_MAX_DECOMPRESSED, LoadedJson, load_document
from vlbench.limits import DEFAULT_MAX_ERRORS, MAX_ERRORS, MAX_FILE_BYTES, MAX_RESAMPLES, MAX_SEED
from vlbench.registry import registry
from vlbench.results import ResultRecord

if TYPE_CHECKING:
    from typing_extensions import TypedDict, Unpack

    from vlbench.submission import ValidationOptions

    class InputOptions(TypedDict, total=False):
        """The keywords `validate` and `score` share: how the input is read and checked (their
        defaults and meaning are `_input_options`'s)."""

        benchmark: str | None
        data_dir: str | os.PathLike | None
        references: str | os.PathLike | None
        subset: bool
        format: str | None
        strict: bool
        max_bytes: int
        max_decompressed: int
        max_errors: int

Source = Union[str, os.PathLike, dict, list]  # a runtime alias: Union, not |, for Python 3.9


@dataclass
class ValidationReport:
    """What `validate` found. True when valid; `str()` is the CLI's report."""

    source: str
    valid: bool
    benchmark: str | None
    errors: list[Issue] = field(default_factory=list)
    error_count: int = 0
    counts_by_code: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _report: str = field(default="", repr=False)

    def __bool__(self) -> bool:
        return self.valid

    def __str__(self) -> str:
        if self.valid:
            return f"VALID: {self.source} is a valid {self.benchmark} submission"
        return f"INVALID: {self.source}: {plural(self.error_count, 'problem')} found\n{self._report}"


def check_count(name: str, value: Any, low: int, high: int) -> int:
    """A whole number in [low, high], else a UsageError naming the option."""
    if isinstance(value, bool) or not isinstance(value, int):
        # numpy integers are fine; anything else (floats included) is refused, not rounded
        if type(value).__module__ == "numpy" and hasattr(value, "item") and isinstance(value.item(), int):
            value = value.item()
        else:
            raise UsageError(f"{name} must be a whole number, not {shorten(value, 40)}")
    if not low <= value <= high:
        raise UsageError(f"{name} is {value}; it must be between {low:,} and {high:,}")
    return value


def benchmarks() -> list[Benchmark]:
    """Every registered benchmark (id, task, version, metrics, main score, ...), by task and id."""
    return sorted(registry().benchmarks.values(), key=lambda b: (b.task, b.id))


def _options(function: str, given: dict[str, Any]) -> ValidationOptions:
    """The input options of `validate` and `score` (`given`, their keywords other than their
    own), checked as the command line checks its options of the same names. An unknown keyword is
    a TypeError naming the public `function` (e.g. `vlbench.score()`), as Python names a function
    in that error, with the nearest known keyword."""
    unknown = [k for k in given if k not in _INPUT_KEYWORDS]
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], [*_INPUT_KEYWORDS, *_OWN_KEYWORDS.get(function, ())], n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f"; its keywords: {', '.join(_keywords(function))}"
        raise TypeError(f"vlbench.{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    return _input_options(**given)


def _keywords(function: str) -> list[str]:
    return [*_OWN_KEYWORDS.get(function, ()), *_INPUT_KEYWORDS]


def _input_options(
    *,
    benchmark: str | None = None,
    data_dir: str | os.PathLike | None = None,
    references: str | os.PathLike | None = None,
    subset: bool = False,
    format: str | None = None,  # noqa: A002 - the CLI's option name
    strict: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
    max_errors: int = DEFAULT_MAX_ERRORS,
) -> ValidationOptions:
    """The input options, as the command line's options of the same names: the benchmark of a
    bare predictions document, the data folder, a references file (captioning) and `subset` (score
    the images the results caption, as pycocoevalcap does), another tool's format, `--strict`,
    the size caps and how many problems to list."""
    input_format = format
    if benchmark is not None and not isinstance(benchmark, str):
        raise UsageError(f"benchmark must be a benchmark id (a string), not {shorten(benchmark, 40)}")
    if input_format is not None and not isinstance(input_format, str):
        raise UsageError(f"format must be a string, not {shorten(input_format, 40)}")
    for name, value in (("data_dir", data_dir), ("references", references)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise UsageError(f"{name} must be a path, not {shorten(value, 40)}")
    for name, flag in (("subset", subset), ("strict", strict)):
        if not isinstance(flag, bool):
            raise UsageError(f"{name} must be True or False, not {shorten(flag, 40)}")
    max_bytes = check_count("max_bytes", max_bytes, 1, MAX_FILE_BYTES)
    max_decompressed = check_count("max_decompressed", max_decompressed, 1, MAX_FILE_BYTES)
    override = None
    if references is None and subset:
        raise UsageError("subset=True needs references=FILE: a benchmark is scored on all its images (for part "
                         "of one, give its references file with references=)")
    if references is not None:
        task = registry().references_task()
        if task is None:
            raise UsageError("references needs the captioning task, which is not installed")
        override = task.references_benchmark(Path(references), subset=subset)
        refuse_past_caps(references, max_bytes, max_decompressed, "references")
    from vlbench.submission import ValidationOptions

    return ValidationOptions(
        benchmark_id=benchmark,
        data_dir=data_dir,
        max_bytes=max_bytes,
        max_decompressed=max_decompressed,
        max_errors=check_count("max_errors", max_errors, 1, MAX_ERRORS),
        benchmark_override=override,
        input_format=input_format,
        strict=strict,
    )


# The keywords of `_input_options` (what `validate` and `score` share), and each function's own.
_INPUT_KEYWORDS = ("benchmark", "data_dir", "references", "subset", "format", "strict", "max_bytes",
                   "max_decompressed", "max_errors")
_OWN_KEYWORDS = {"score": ("bootstrap", "seed", "out", "force"), "validate": ()}


def _input(source: Source, options: ValidationOptions) -> str | os.PathLike | LoadedJson:
    """A path as it is; a dict or list read through the file reader's checks, in memory."""
    if isinstance(source, (str, os.PathLike)):
        return source
    if isinstance(source, (bytes, bytearray)):
        raise UsageError("pass a path or a parsed document (dict or list), not bytes: "
                         "decode JSON text with json.loads first")
    if not isinstance(source, (dict, list, tuple)):
        raise UsageError(f"expected a path or a document (dict or list), not a {type(source).__name__}")
    from vlbench.submission import IN_MEMORY

    issues = IssueList(limit=options.max_errors)
    loaded = load_document(source, issues, options.max_bytes)
    if loaded is None:
        raise _annotated(InvalidSubmission(issues, IN_MEMORY))
    return loaded


def _annotated(exc: InvalidSubmission) -> InvalidSubmission:
    # A notebook shows str(exc) (the header) and the notes: put the listed problems there.
    if hasattr(exc, "add_note") and not getattr(exc, "__notes__", None):
        exc.add_note(exc.issues.report())
    return exc


def validate(predictions_or_path: Source, **input_options: Unpack[InputOptions]) -> ValidationReport:
    """Check a submission (a path, or an envelope / bare predictions document in memory).

    Returns a report (falsy when invalid) listing every problem, as `vlbench validate` does.
    A bare predictions document needs `benchmark`. `input_options`: see `_input_options`. Raises
    `UsageError` for what is not the submission's fault (unknown benchmark, missing file or
    ground truth, bad arguments).
    """
    from vlbench.submission import IN_MEMORY
    from vlbench.submission import validate as validate_submission

    options = _options("validate", input_options)
    benchmark = options.benchmark_id
    try:
        sub = validate_submission(_input(predictions_or_path, options), options)
    except InvalidSubmission as exc:
        d = exc.issues.to_dict()
        return ValidationReport(
            source=exc.source,
            valid=False,
            benchmark=benchmark,
            errors=list(exc.issues),
            error_count=exc.issues.total,
            counts_by_code=d["counts_by_code"],
            notes=list(exc.issues.notes),
            _report=exc.issues.report(),
        )
    name = str(predictions_or_path) if isinstance(predictions_or_path, (str, os.PathLike)) else IN_MEMORY
    return ValidationReport(source=name, valid=True, benchmark=sub.benchmark.id)


def score(
    predictions_or_path: Source,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    out: str | os.PathLike | None = None,
    force: bool = False,
    **input_options: Unpack[InputOptions],
) -> ResultRecord:
    """Validate and score a submission; returns the `ResultRecord` that `vlbench score` writes.

    `bootstrap` resamples give `ci95` (0: none), seeded by `seed`. With `out`, the record and its
    per-item file are written as `vlbench score --out` writes them (both or neither).
    `input_options`: as for `validate` (see `_input_options`). Raises `InvalidSubmission` (every problem
    in `.issues`) or `UsageError`.
    """
    from vlbench.scoring import check_evaluation_target, score_file, write_evaluation

    options = _options("score", input_options)
    bootstrap = check_count("bootstrap", bootstrap, 0, MAX_RESAMPLES)
    seed = check_count("seed", seed, 0, MAX_SEED)
    if out is not None:
        if not isinstance(out, (str, os.PathLike)):
            raise UsageError(f"out must be a path, not {shorten(out, 40)}")
        check_evaluation_target(out, force=bool(force), option="out", force_hint="force=True")
    try:
        evaluation = score_file(_input(predictions_or_path, options), options, bootstrap=bootstrap, seed=seed, out=out)
    except InvalidSubmission as exc:
        raise _annotated(exc) from None
    if out is not None:
        write_evaluation(evaluation, out, force=bool(force))
    return evaluation.result


__all__ = sorted(_API)  # the names `import vlbench` offers (it loads this module on first use)
