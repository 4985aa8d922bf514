"""`vlbench.commands.output`: what the commands print."""

from __future__ import annotations

import json

from tabulate import tabulate

from vlbench.benchmark import Metric
from vlbench.commands.output import describe_counts, metric_for, print_issues, simple_table
from vlbench.errors import InvalidSubmission, IssueList
from vlbench.registry import registry


def test_counts_read_as_words() -> None:
    assert describe_counts({"images": 250, "folds": 1, "captions": 1_250}) == "250 images, 1 fold, 1,250 captions"
    assert describe_counts({"query_images": 1, "loss": 1, "coverage": "full"}) == "1 query image, 1 loss, full coverage"
    assert describe_counts({"classes": 1, "queries": 1, "boxes": 1, "phrases": 1, "matches": 1}) == (
        "1 class, 1 query, 1 box, 1 phrase, 1 match")
    assert describe_counts({"classes": 2, "queries": 3}) == "2 classes, 3 queries"


def test_simple_table_is_tabulate_s_simple_format() -> None:
    rows = [["i2t_R@1 *", "50.0%", "[40.0, 60.0]"], ["RSUM", "300.0", ""]]
    headers = ["metric", "value", "95% CI"]
    assert simple_table(rows, headers) == tabulate(rows, headers=headers, disable_numparse=True)


def test_a_key_the_benchmark_does_not_declare_is_shown_plainly() -> None:
    b = registry().benchmark("coco-5k")
    assert metric_for(b, "i2t_R@1") is b.metric("i2t_R@1")
    assert metric_for(b, "extra_key") == Metric("extra_key", "")


def test_issues_go_to_stderr_or_as_json_to_stdout(capsys) -> None:
    issues = IssueList()
    issues.add("schema.type", "/predictions", "expected an object", "see the schema")
    exc = InvalidSubmission(issues, source="x.json")
    print_issues(exc, as_json=True)
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert err == "" and doc["source"] == "x.json" and doc["error_count"] == 1
    assert doc["errors"][0]["code"] == "schema.type"
    print_issues(exc, as_json=False)
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("INVALID: x.json: 1 problem found") and "expected an object" in err
