"""Layer 1 of validation: JSON Schema (Draft 2020-12) with errors turned into issues.

Messages are written here rather than taken from jsonschema: its messages embed the whole
offending value (a 10 MB string, a list of a million items), and cutting them loses the part that
matters. Ours name what was expected in full and show the value found shortened.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from vlbench.errors import IssueList, pointer, shorten

ENVELOPE_SCHEMA = Path(__file__).parent / "schemas" / "envelope.schema.json"

# The schema layer stops after this many violations. Each costs jsonschema tens of microseconds,
# so a list of a million wrong values would take half a minute to report in full; the first
# thousand say what is wrong, and the report says the count is a lower bound.
MAX_SCHEMA_ERRORS = 1000

_HINTS = {
    "type": "check the value's JSON type against the task's submission format (README)",
    "required": "add the missing field",
    "additionalProperties": "remove the field, or check its spelling",
    "const": "use the exact value the format requires",
    "enum": "use one of the allowed values",
    "minItems": "the list is too short",
    "maxItems": "the list is too long",
    "minLength": "the string is too short",
    "maxLength": "shorten the string",
    "pattern": "the string has characters or a shape the format does not allow",
    "minimum": "the number is below the allowed range",
    "maximum": "the number is above the allowed range",
    "uniqueItems": "remove the repeated entries",
    "propertyNames": "an object key has the wrong form",
}

_JSON_TYPE = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
              int: "integer", float: "number"}


@cache
def validator_for(path: str | Path) -> Draft202012Validator:
    schema = json.loads(Path(path).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def json_type(value: Any) -> str:
    for kind, name in _JSON_TYPE.items():
        if isinstance(value, kind) and (kind is not int or not isinstance(value, bool)):
            return name
    return type(value).__name__


def _found(value: Any) -> str:
    return f"{json_type(value)} {shorten(value)}"


def _expected_types(spec: Any) -> str:
    names = [spec] if isinstance(spec, str) else list(spec)
    return " or ".join(names)


def _message(error: ValidationError) -> str:
    """`expected ..., found ...` with the schema's side in full and the value shortened."""
    kind, spec, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        return f"expected {_expected_types(spec)}, found {_found(value)}"
    if kind == "required" and isinstance(value, dict):
        # jsonschema makes one error per missing field and names it only in its message
        missing = [k for k in spec if k not in value and error.message == f"{k!r} is a required property"]
        missing = missing or [k for k in spec if k not in value]
        return f"missing required field {', '.join(json.dumps(k) for k in missing)}"
    if kind == "additionalProperties" and isinstance(value, dict):
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extra = [k for k in value if k not in allowed]
        names = ", ".join(shorten(k, 40) for k in extra[:5]) + (f" and {len(extra) - 5:,} more" if len(extra) > 5 else "")
        known = ", ".join(json.dumps(k) for k in allowed)
        return f"unexpected field {names}" + (f" (allowed: {known})" if known else "")
    if kind == "const":
        return f"expected {json.dumps(spec)}, found {_found(value)}"
    if kind == "enum":
        return f"expected one of {', '.join(json.dumps(v) for v in spec)}, found {_found(value)}"
    if kind in ("minItems", "maxItems"):
        bound = "at least" if kind == "minItems" else "at most"
        return f"expected {bound} {spec:,} items, found {len(value):,}"
    if kind in ("minLength", "maxLength"):
        bound = "at least" if kind == "minLength" else "at most"
        return f"expected {bound} {spec:,} characters, found {len(value):,}: {shorten(value)}"
    if kind == "pattern":
        return f"expected a string matching {spec}, found {shorten(value)}"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kind]
        return f"expected a number {sign} {spec}, found {shorten(value)}"
    if kind == "uniqueItems":
        return "expected every item to be different; some repeat"
    if kind in ("minProperties", "maxProperties"):
        bound = "at least" if kind == "minProperties" else "at most"
        return f"expected {bound} {spec:,} fields, found {len(value):,}"
    if kind == "false":
        return f"no value is allowed here, found {_found(value)}"
    # Any other keyword: jsonschema's wording, without the value it embeds.
    return f"the value does not satisfy the schema's {kind!r} rule ({shorten(spec, 200)}), found {_found(value)}"


def _hint(error: ValidationError) -> str:
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "pattern" and description:
        return description
    return _HINTS.get(str(error.validator), "see the task's JSON Schema")


def _leaf_errors(error: ValidationError) -> list[ValidationError]:
    # For anyOf/oneOf, the sub-errors say more than "is not valid under any of the given schemas";
    # report the deepest ones (jsonschema's best_match heuristic picks one, we want all of them).
    if error.context:
        deepest = max(len(e.absolute_path) for e in error.context)
        return [e for e in error.context if len(e.absolute_path) == deepest]
    return [error]


def _about_a_key(error: ValidationError) -> bool:
    # Under propertyNames the instance is an object key; jsonschema points at the object.
    return "propertyNames" in error.absolute_schema_path and isinstance(error.instance, str)


# Keywords whose meaning depends on more than the one subschema along a path: where one occurs, a
# subtree cannot be validated on its own, and the whole document is.
_NOT_LOCAL = {"allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "prefixItems", "$dynamicRef",
              "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains"}


def _resolve(schema: Any, root: dict) -> Any:
    """Follow local `$ref`s (`#/...`); None for any other reference."""
    for _ in range(32):
        if not isinstance(schema, dict) or "$ref" not in schema:
            return schema
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#") or len(schema) > 1:
            return None
        node: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        schema = node
    return None


def _along(root: dict, path: tuple[str | int, ...]) -> tuple[Any, Any] | None:
    """(schema of the parent, schema of the value) at `path`, or None when the path cannot be
    followed by `properties`, `additionalProperties` and `items` alone."""
    parent, schema = None, _resolve(root, root)
    for part in path:
        if not isinstance(schema, dict) or _NOT_LOCAL & schema.keys():
            return None
        parent = schema
        if isinstance(part, str):
            child = schema.get("properties", {}).get(part, schema.get("additionalProperties", True))
        else:
            child = schema.get("items", True)
        schema = _resolve(child, root)
        if schema is None or schema is False:
            return None
    if isinstance(schema, dict) and _NOT_LOCAL & schema.keys():
        return None
    return parent, schema


def _value_at(instance: Any, path: tuple[str | int, ...]) -> tuple[bool, Any]:
    for part in path:
        try:
            instance = instance[part]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, instance


def schema_issues(
    instance: Any,
    schema_path: str | Path,
    issues: IssueList,
    prefix: tuple[str | int, ...] = (),
    only: Sequence[tuple[str | int, ...]] | None = None,
) -> None:
    """Validate `instance`; add one issue per schema violation, pointers prefixed with `prefix`.

    `only`: the paths where a task's fast structure check found something it could not prove
    (`task_type.Structure.suspects`): the value at each path and the key leading to it are all that
    is validated, so the error path costs what the suspects cost, not what the document costs.
    The whole document is validated when `only` is empty or the schema cannot be split there.
    """
    validator = validator_for(str(schema_path))
    if only:
        plan = []
        for path in only:
            found, value = _value_at(instance, path)
            along = _along(validator.schema, path) if found else None
            if along is None:
                plan = []
                break
            plan.append((path, value, *along))
        if plan:
            for path, value, parent, schema in plan:
                if path and isinstance(path[-1], str) and isinstance(parent, dict) and "propertyNames" in parent:
                    names = validator.evolve(schema=parent["propertyNames"]).iter_errors(path[-1])
                    if not _add(names, issues, (*prefix, *path[:-1]), key=path[-1]):
                        return
                if not _add(validator.evolve(schema=schema).iter_errors(value), issues, (*prefix, *path)):
                    return
            return
    _add(validator.iter_errors(instance), issues, prefix)


def _add(
    errors: Iterable[ValidationError], issues: IssueList, prefix: tuple[str | int, ...], key: str | None = None
) -> bool:
    """Add the errors as issues; False once MAX_SCHEMA_ERRORS were added in all (then stop).
    `key`: the errors are about this object key (validated against `propertyNames` alone)."""
    for error in errors:
        for leaf in _leaf_errors(error):
            parts = (*prefix, *leaf.absolute_path)
            message = _message(leaf)
            if key is not None or _about_a_key(leaf):
                parts, message = (*parts, leaf.instance), f"object key: {message}"
            issues.add(f"schema.{leaf.validator}", pointer(*parts), message, _hint(leaf))
            issues.schema_errors += 1
        if issues.schema_errors >= MAX_SCHEMA_ERRORS:
            issues.stop_note(
                f"the schema check stopped after the first {issues.schema_errors:,} violations; fix "
                "these and validate again to see whether more remain"
            )
            return False
    return True
