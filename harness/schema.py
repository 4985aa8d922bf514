"""Layer 1 of validation: JSON Schema (Draft 2020-12) with errors turned into issues."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from vlbench.errors import IssueList, pointer

ENVELOPE_SCHEMA = Path(__file__).parent / "schemas" / "envelope.schema.json"

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


@cache
def validator_for(path: str | Path) -> Draft202012Validator:
    schema = json.loads(Path(path).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _message(error: ValidationError) -> str:
    text = error.message
    return text if len(text) <= 300 else text[:297] + "..."


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


def schema_issues(
    instance: Any, schema_path: str | Path, issues: IssueList, prefix: tuple[str | int, ...] = ()
) -> None:
    """Validate `instance`; add one issue per schema violation, pointers prefixed with `prefix`."""
    validator = validator_for(str(schema_path))
    for error in validator.iter_errors(instance):
        for leaf in _leaf_errors(error):
            issues.add(
                f"schema.{leaf.validator}",
                pointer(*prefix, *leaf.absolute_path),
                _message(leaf),
                _hint(leaf),
            )
