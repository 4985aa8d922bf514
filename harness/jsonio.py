"""Reading JSON: untrusted submissions, and trusted ground truth (writing is `atomic_files.py`).

Submissions are hostile until validated. Reading enforces, before anything is scored:
- a size cap on plain files and a separate cap on the decompressed size of `.json.gz`, counted
  while reading in bounded memory (`bounded_read.py`), so an oversized file or a compression bomb
  is refused without being held;
- strict UTF-8;
- no duplicate object keys (the stdlib keeps the last one silently);
- no `NaN`, `Infinity` or `-Infinity` literals (the stdlib accepts them; JSON does not).
Problems are reported as issues (exit code 1), not exceptions with tracebacks. An in-memory
document from the API goes through the same checks (`load_document`). The module is one piece (over
400 lines): every check that a submission's bytes pass before they are scored, in reading order.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlbench import bounded_read

# open_regular and read_regular_capped: re-exported, task packages read untrusted files through them
from vlbench.bounded_read import GZIP_MAGIC, open_regular, read_regular_capped  # noqa: F401
from vlbench.errors import InvalidSubmission, IssueList, pointer, shorten
from vlbench.hashing import sha256_bytes

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_DECOMPRESSED = 1024 * 1024 * 1024


@dataclass(frozen=True)
class LoadedJson:
    """A parsed document with the sha256 of the bytes as submitted (compressed, if it was)."""

    data: Any
    sha256: str
    size: int


# A `\\uD800`-`\\uDFFF` escape in the raw text; only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogates(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Paths of strings (values or keys) that hold unpaired UTF-16 surrogates."""
    found: list[tuple[str | int, ...]] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if _LONE_SURROGATE.search(value):
                found.append(where)
        elif isinstance(value, dict):
            for k, v in value.items():
                if _LONE_SURROGATE.search(k):
                    found.append((*where, k.encode("utf-8", "backslashreplace").decode()))
                stack.append((v, (*where, k)))
        elif isinstance(value, list):
            stack.extend((v, (*where, i)) for i, v in enumerate(value))
    return found


class _DuplicateKey(ValueError):
    pass


class _NonFinite(ValueError):
    pass


def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _position_of_duplicate(text: str, key: str) -> str:
    needle = json.dumps(key)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    if second < 0:
        return ""
    line, col = _line_col(text, second)
    return f" (second occurrence at line {line}, column {col})"


def syntax_problem(text: str, exc: json.JSONDecodeError) -> tuple[str, str]:
    """(message, hint) for a JSON syntax error, in the user's terms: an empty file, a file that is
    not JSON at all (CSV, text), one that stops in the middle (truncated), or the parser's words."""
    body = text.strip()
    if not body:
        what = "empty" if not text else "only whitespace"
        return (f"the file is {what}: there is no JSON document in it",
                "an empty file usually means the program that wrote it failed; write the file again")
    if body[0] not in '{["-0123456789tfn':
        first = body.splitlines()[0]
        looks = ("CSV" if ("," in first or "\t" in first or ";" in first) and not first.startswith(("<", "#"))
                 else "HTML or XML" if first.startswith("<") else "text")
        return (f"the file is not JSON (it looks like {looks}; it starts with {shorten(first, 40)})",
                "vlbench reads JSON documents (a submission's layout: README, Submission format); convert the file to JSON")
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return (f"the file ends in the middle of the JSON document (line {exc.lineno}, column {exc.colno}, "
                f"after {len(text.encode('utf-8', 'surrogatepass')):,} bytes): it looks truncated",
                "check that the program that wrote it finished, and copy or download it again")
    return (f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            "check the file with a JSON linter (python -m json.tool FILE)")


def loads_strict(text: str | bytes, issues: IssueList | None = None) -> Any:
    """Parse JSON, rejecting duplicate keys and non-finite literals.

    With `issues`, a problem is added there and `None` returned; without, `InvalidSubmission` is
    raised. Parsing stops at the first syntax problem: later text cannot be trusted.
    """
    own = issues is None
    issues = IssueList() if issues is None else issues
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            issues.add(
                "not_utf8",
                "",
                f"the file is not valid UTF-8 (byte {exc.start}: {exc.reason})",
                "save the file as UTF-8 JSON",
            )
            text = None
    if text is not None:
        if text.startswith("\ufeff"):
            text = text[1:]
        try:
            data = json.loads(
                text, object_pairs_hook=_pairs_no_duplicates, parse_constant=_reject_constant
            )
            if _SURROGATE_ESCAPE.search(text):
                for where in _lone_surrogates(data)[:20]:
                    issues.add(
                        "lone_surrogate",
                        pointer(*(str(p).encode("utf-8", "backslashreplace").decode() for p in where)),
                        "the string holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff)",
                        "write text as valid Unicode; escape characters outside the BMP as pairs",
                    )
            if not issues:
                return data
        except _DuplicateKey as exc:
            key = exc.args[0]
            issues.add(
                "duplicate_key",
                "",
                f"object key {json.dumps(key)[:80]} appears twice in one object"
                + _position_of_duplicate(text, key),
                "every key may appear once per object; duplicate keys silently lose data",
            )
        except _NonFinite as exc:
            issues.add(
                "non_finite_literal",
                "",
                f"the literal {exc.args[0]} is not valid JSON",
                "write finite numbers only; NaN and Infinity are not allowed",
            )
        except json.JSONDecodeError as exc:
            issues.add("json_syntax", "", *syntax_problem(text, exc))
        except ValueError as exc:
            # e.g. an integer literal longer than Python's int-conversion limit (4300 digits).
            issues.add(
                "json_number",
                "",
                f"a number in the file cannot be read: {str(exc)[:120]}",
                "ids and coordinates are short numbers; check how the file was produced",
            )
        except RecursionError:
            issues.add(
                "json_too_deep",
                "",
                "the JSON nesting is too deep to parse",
                "submissions are shallow documents; check how the file was produced",
            )
    if own and issues:
        raise InvalidSubmission(issues)
    return None


def read_bytes_capped(
    path: str | os.PathLike[str],
    issues: IssueList,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
) -> tuple[bytes | None, str, int]:
    """Read a `.json` or gzip file within the caps, in bounded memory (`bounded_read`).
    Returns (json bytes or None, sha256, size)."""
    return bounded_read.read_bytes_capped(path, issues, max_bytes, max_decompressed)


def load_submission_file(
    path: str | os.PathLike[str],
    issues: IssueList,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
) -> LoadedJson | None:
    """Read and parse an untrusted file; problems go to `issues` and `None` is returned."""
    raw, digest, size = read_bytes_capped(path, issues, max_bytes, max_decompressed)
    if raw is None:
        return None
    data = loads_strict(raw, issues)
    if issues:
        return None
    return LoadedJson(data, digest, size)


def _plain(value: Any) -> Any:
    # numpy and torch values (scalars, arrays, tensors) as the numbers and lists they hold
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and type(value).__module__.split(".")[0] in ("numpy", "torch"):
        return tolist()
    raise TypeError(f"a {type(value).__name__} is not JSON")


_JSON_KEYS = (str, int, float, bool, type(None))


def _first_unserializable(doc: Any) -> tuple[tuple[str | int, ...], str]:
    """Where and why `json.dumps` refused `doc` (the error path only: it walks the document)."""
    on_path: set[int] = set()

    def walk(value: Any, where: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], str] | None:
        if len(where) > 200:
            return where, "the document is nested more than 200 levels deep"
        if isinstance(value, float) and not math.isfinite(value):
            return where, f"{value} is not a finite number (JSON has no NaN or Infinity)"
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
            return where, "an integer with more than 4,300 digits cannot be written as JSON text"
        if isinstance(value, (str, int, float, bool)) or value is None:
            return None
        if id(value) in on_path:
            return where, "the document contains itself (a circular reference)"
        if isinstance(value, dict):
            on_path.add(id(value))
            for k, v in value.items():
                if not isinstance(k, _JSON_KEYS):
                    return where, f"a key of type {type(k).__name__} cannot be a JSON object key"
                found = walk(v, (*where, k if isinstance(k, str) else json.dumps(k)))
                if found:
                    return found
            on_path.discard(id(value))
            return None
        if isinstance(value, (list, tuple)):
            on_path.add(id(value))
            for i, v in enumerate(value):
                found = walk(v, (*where, i))
                if found:
                    return found
            on_path.discard(id(value))
            return None
        try:
            return walk(_plain(value), where)
        except TypeError:
            return where, f"a value of type {type(value).__name__} is not JSON (use dicts, lists, str, int, float, bool, None)"

    try:
        found = walk(doc, ())
    except RecursionError:
        found = ((), "the document is nested too deeply")
    return found or ((), "the document cannot be written as JSON")


_SCALARS = frozenset((int, float, bool, type(None)))


def _longer_than(doc: Any, limit: int) -> bool:
    """Whether `doc` written as JSON is certainly longer than `limit` bytes, from a lower bound of
    its length counted without writing it (each value of a list or an object takes at least one
    character and a separator, a string its characters, an array its elements), so that an
    oversized document is refused before its text (a numpy array's, many times its own size) is
    made. A walk in C where it can: lists and objects of numbers are counted, not visited."""
    total = 0
    stack = [doc]
    seen: set[int] = set()  # a container met twice is counted once (a cycle is json.dumps' to report)
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is list or kind is tuple or kind is dict:
            if id(value) in seen:
                continue
            seen.add(id(value))
            values = value.values() if kind is dict else value
            total += (6 if kind is dict else 3) * len(value) or 2
            if not _SCALARS.issuperset(map(type, values)):
                stack.extend(v for v in values if type(v) not in _SCALARS)
        elif kind is str:
            total += len(value)
        elif type(value).__module__.split(".")[0] in ("numpy", "torch"):
            size = value.numel() if callable(getattr(value, "numel", None)) else getattr(value, "size", 1)
            dtype = getattr(value, "dtype", None)
            floats = getattr(dtype, "kind", "") == "f" or getattr(dtype, "is_floating_point", False)
            total += (5 if floats else 3) * size if isinstance(size, int) else 1  # "0.0, "
        if total > limit:
            return True
    return False


def load_document(doc: Any, issues: IssueList, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedJson | None:
    """An in-memory document, read exactly as a file holding it would be.

    It is serialised as `json.dump(doc, file)` would write it (numpy and torch numbers and arrays
    become numbers and lists), then read back through `loads_strict`, so every check of the file
    reader applies and two keys that become one string (1 and "1") are duplicate keys. The sha256
    is that of the serialisation: scoring the object and scoring a file written by `json.dump`
    give the same record. No temporary file is made.
    """
    if _longer_than(doc, max_bytes):
        issues.add(
            "file_too_large",
            "",
            f"the document is more than {max_bytes:,} bytes as JSON, the limit",
            "submit top-K lists (K >= 10) rather than full rankings, or raise max_bytes",
        )
        return None
    try:
        text = json.dumps(doc, allow_nan=False, default=_plain)
    except (TypeError, ValueError, RecursionError):
        where, why = _first_unserializable(doc)
        issues.add("not_json", pointer(*where), why, "predictions must be made of dicts, lists, str, int, float, bool and None")
        return None
    raw = text.encode("ascii")
    if len(raw) > max_bytes:
        issues.add(
            "file_too_large",
            "",
            f"the document is {len(raw):,} bytes as JSON; the limit is {max_bytes:,}",
            "submit top-K lists (K >= 10) rather than full rankings, or raise max_bytes",
        )
        return None
    data = loads_strict(raw, issues)
    if issues:
        return None
    return LoadedJson(data, sha256_bytes(raw), len(raw))


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for a bulk load.

    Parsing a submission allocates hundreds of thousands of lists and numbers that all survive,
    so the collector walks them again and again as they pile up: about a fifth of the time of
    scoring a 30,000-query file. None of it is cyclic garbage; normal collection resumes after.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def read_trusted_json(path: str | os.PathLike[str]) -> Any:
    """Read a ground-truth or packaged file (trusted: plain json.loads, gzip by magic number)."""
    raw = Path(path).read_bytes()
    if raw.startswith(GZIP_MAGIC):
        raw = gzip.decompress(raw)
    return json.loads(raw)
