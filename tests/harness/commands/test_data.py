"""`vlbench.commands.data`: `data prepare` and the bare `import` and `data` groups."""

from __future__ import annotations

import json
import os
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


@pytest.fixture(scope="module")
def mini_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The v2 mini world's annotation files: a source mini-retrieval prepares from without --force."""
    from vlbench.tasks.mini import write_mini_benchmark
    from vlbench.tasks.mini.build import world_config

    out = tmp_path_factory.mktemp("mini-source") / "world"
    write_mini_benchmark(out, config=world_config("v2"), images=False)
    return out


def test_data_prepare_follows_the_output_rule(capsys, tmp_path: Path, mini_source: Path) -> None:
    """A ground-truth file is replaced only if vlbench prepared it (listed with its sha256 in the
    folder's marker, or read by the task as its ground truth); --force replaces anything; a
    missing parent of --data-dir is refused and not made."""
    from tests.output_rule_checks import listing
    from vlbench.cli import main

    def prepare(data: Path, *force: str) -> int:
        code = main(["data", "prepare", "mini-retrieval", "--source", str(mini_source), "--data-dir", str(data), *force])
        capsys.readouterr()
        return code

    data = tmp_path / "data"
    target = data / "mini-retrieval" / "mini-retrieval.json"
    assert prepare(data) == 0 and prepare(data) == 0  # made inside an existing folder; then its own, replaced
    good = target.read_bytes()
    marker = json.loads((target.parent / ".vlbench-folder.json").read_text())
    assert marker["written_by"] == "vlbench data prepare" and marker["files"] == ["mini-retrieval.json"]
    (target.parent / ".vlbench-folder.json").unlink()  # prepared before markers: told by the task's reader
    assert prepare(data) == 0
    for theirs in (b"my own notes", good.replace(b"]", b", 1]", 1)):  # someone's file; ours, edited since
        target.write_bytes(theirs)
        before = listing(data)
        assert prepare(data) == 2 and listing(data) == before
        assert prepare(data, "--force") == 0 and target.read_bytes() == good
    target.unlink()
    os.symlink(tmp_path / "elsewhere.json", target)
    assert prepare(data) == 2 and target.is_symlink() and not (tmp_path / "elsewhere.json").exists()
    target.unlink()
    target.mkdir()
    assert prepare(data) == 2 and target.is_dir()
    assert prepare(tmp_path / "no" / "data") == 2 and not (tmp_path / "no").exists()
