"""Schema layer: messages, the violation cap, and validating only a task's suspect subtrees."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vlbench.errors import IssueList
from vlbench.registry import registry
from vlbench.schema import MAX_SCHEMA_ERRORS, _along, schema_issues, validator_for

REPO = Path(__file__).resolve().parents[2]
GROUNDING = json.loads((REPO / "submissions" / "mini-grounding" / "random.json").read_text())["predictions"]
TASK = registry().tasks["grounding"]
BENCHMARK = registry().benchmark("mini-grounding")

odd = (st.none() | st.booleans() | st.integers(-5, 10**20) | st.floats(allow_nan=False) | st.text(max_size=5)
       | st.builds(list) | st.builds(dict) | st.lists(st.integers(0, 9), max_size=5))
keys = st.sampled_from(["abc", "", "01", "9" * 30, "x", "boxes", "scores", "phrase_id", "1"])


# A few images keep the whole-document validation (the reference here) quick.
SMALL = {k: GROUNDING[k] for k in list(GROUNDING)[:4]}


@st.composite
def damaged_grounding(draw: st.DrawFn) -> dict:
    """The few images with one to four places damaged: a value, a box, a coordinate, a key."""
    doc = copy.deepcopy(SMALL)
    for _ in range(draw(st.integers(1, 4))):
        path = [draw(st.sampled_from(list(doc)))]
        node = doc[path[0]]
        while isinstance(node, dict) and node and draw(st.booleans()):
            key = draw(st.sampled_from(list(node)))
            path.append(key)
            node = node[key]
        if isinstance(node, dict) and "boxes" in node and isinstance(node["boxes"], list) and node["boxes"] \
                and draw(st.booleans()):
            box = node["boxes"][0]
            if isinstance(box, list) and box and draw(st.booleans()):
                box[draw(st.integers(0, len(box) - 1))] = draw(odd)
            else:
                node["boxes"][0] = draw(odd)
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            parent[draw(keys)] = draw(odd)
        else:
            parent[path[-1]] = draw(odd)
    return doc


def _issues(doc: dict, only) -> list[tuple[str, str, str]]:
    issues = IssueList(limit=10_000)
    schema_issues(doc, TASK.schema_path(), issues, prefix=("predictions",), only=only)
    return sorted((i.code, i.pointer, i.message) for i in issues)


@settings(max_examples=60, deadline=None)
@given(doc=damaged_grounding())
def test_suspect_subtrees_give_what_the_whole_document_gives(doc: dict) -> None:
    structure = TASK.fast_structure(doc, BENCHMARK)
    full = _issues(doc, None)
    if structure.ok:
        assert not full
        return
    assert _issues(doc, structure.suspects) == full


def test_paths_through_refs_and_unsplittable_schemas() -> None:
    root = validator_for(str(TASK.schema_path())).schema
    parent, schema = _along(root, ("1", "0", "0"))
    assert schema == root["$defs"]["phrase"] and "propertyNames" in parent
    assert _along(root, ("1", "0", "0", "boxes", 0))[1] == root["$defs"]["box"]
    assert _along({"anyOf": [{"type": "object"}]}, ("a",)) is None
    assert _along({"type": "object", "additionalProperties": False}, ("a",)) is None


def test_violations_are_capped_with_a_note() -> None:
    issues = IssueList()
    schema_issues([None] * (MAX_SCHEMA_ERRORS * 3), REPO / "tasks" / "captioning" / "predictions.schema.json", issues)
    assert issues.total == MAX_SCHEMA_ERRORS and issues.notes and "stopped" in issues.report()
