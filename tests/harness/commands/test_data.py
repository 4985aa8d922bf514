"""`vlbench.commands.data`: `data prepare` and the bare `import` and `data` groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import karpathy_doc
from vlbench.cli import build_parser
from vlbench.commands.data import cmd_data, cmd_import
from vlbench.errors import UsageError


def test_the_bare_groups_say_what_to_name() -> None:
    with pytest.raises(UsageError, match="name the task"):
        cmd_import(build_parser().parse_args(["import"]))
    with pytest.raises(UsageError, match="name what to do"):
        cmd_data(build_parser().parse_args(["data"]))


def test_a_forced_deviation_is_printed_as_a_warning(capsys, tmp_path: Path) -> None:
    (tmp_path / "dataset_flickr30k.json").write_text(json.dumps(karpathy_doc(10, dataset="flickr30k")))
    args = build_parser().parse_args(["data", "prepare", "flickr30k-1k", "--source", str(tmp_path), "--data-dir",
                                      str(tmp_path / "d"), "--force"])
    assert cmd_data(args) == 0
    out, err = capsys.readouterr()
    written = tmp_path / "d" / "flickr30k-1k" / "ground_truth.json"
    assert written.exists() and f"wrote {written}" in out
    assert err.startswith("warning: --force") and "expected 1,000, found 10" in err
