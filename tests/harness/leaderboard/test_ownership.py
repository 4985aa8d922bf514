"""`leaderboard build --out` replaces only a folder a build wrote, and never drops rows silently.

Each case of the new-user report is here: a folder that is not a leaderboard, the submissions
folder, a file, one benchmark's folder given as --submissions, `--out .`; every refusal is one
sentence, exit 2, and leaves every byte around it as it was (the whole tree is compared)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.harness.leaderboard.conftest import forbid_network, watchdog
from vlbench import leaderboard
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.leaderboard import MARKER

RESAMPLES = 200  # the built_board fixture's, so that its cache covers every file


@pytest.fixture(autouse=True)
def bounded_and_offline(monkeypatch: pytest.MonkeyPatch):
    attempts = forbid_network(monkeypatch)
    with watchdog(300, "a leaderboard ownership test"):
        yield
    assert attempts == []


def snapshot(root: Path, skip: Path | None = None) -> dict[str, object]:
    """Every path under `root` (except under `skip`) with its kind and content."""
    seen: dict[str, object] = {}
    for top, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(top) / name
            if skip is not None and (path == skip or skip in path.parents):
                continue
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[key] = ("dir",)
            else:
                seen[key] = ("file", path.read_bytes(), path.stat().st_mode)
    return seen


@pytest.fixture
def world(built_board: Path, tmp_path: Path) -> Path:
    """tmp_path/{submissions, leaderboard (built, marked), thesis/ (someone's work)}."""
    shutil.copytree(built_board.parent / "submissions", tmp_path / "submissions")
    shutil.copytree(built_board, tmp_path / "leaderboard")
    (tmp_path / "thesis" / "sub").mkdir(parents=True)
    (tmp_path / "thesis" / "thesis.tex").write_text("\\documentclass{article}\n", encoding="utf-8")
    (tmp_path / "thesis" / "sub" / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# my project\n", encoding="utf-8")
    return tmp_path


def build_cli(world: Path, out: str | Path, *extra: str, submissions: str | Path | None = None) -> int:
    return main(["leaderboard", "build", "--submissions", str(submissions or world / "submissions"),
                 "--out", str(out), "--bootstrap", str(RESAMPLES), "--quiet", *extra])


def refused(world: Path, capsys: pytest.CaptureFixture[str], out: str | Path, *extra: str,
            submissions: str | Path | None = None) -> str:
    """Run a build that must be refused: exit 2, one sentence, no byte changed anywhere."""
    before = snapshot(world)
    assert build_cli(world, out, *extra, submissions=submissions) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert snapshot(world) == before
    return err


def test_a_folder_that_is_not_a_leaderboard_is_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(world, capsys, world / "thesis")
    assert "did not write" in err and MARKER in err and "thesis.tex" in err


def test_the_submissions_folder_and_its_parents_are_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is the submissions folder" in refused(world, capsys, world / "submissions")
    assert "contains the submissions folder" in refused(world, capsys, world)
    assert "inside the submissions folder" in refused(world, capsys, world / "submissions" / "lb")


def test_a_file_is_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is a file, not a folder" in refused(world, capsys, world / "README.md")


def test_the_current_folder_is_refused_and_no_lock_is_left(world: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(world / "leaderboard")
    err = refused(world, capsys, ".", submissions=world / "submissions")
    assert "is the current folder" in err
    monkeypatch.chdir(world / "thesis")
    assert "contains the current folder" in refused(world, capsys, world, submissions=world / "submissions")


def test_a_symbolic_link_is_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (world / "link").symlink_to(world / "leaderboard")
    assert "symbolic link" in refused(world, capsys, world / "link")


def test_one_benchmarks_folder_as_submissions_is_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(world, capsys, world / "leaderboard", submissions=world / "submissions" / "mini-retrieval")
    assert "holds submission files itself" in err
    # without the loose files the folder is empty of submissions: every board would go
    empty = world / "empty-submissions"
    empty.mkdir()
    err = refused(world, capsys, world / "leaderboard", submissions=empty)
    assert "would drop" in err and "the board mini-retrieval v" in err and "--allow-drop" in err


def test_extra_files_in_a_leaderboard_are_refused(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (world / "leaderboard" / "notes.txt").write_text("mine\n", encoding="utf-8")
    err = refused(world, capsys, world / "leaderboard")
    assert "1 file(s) the build did not write (notes.txt)" in err


def test_a_broken_marker_is_not_trusted(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (world / "leaderboard" / MARKER).write_text("{", encoding="utf-8")
    assert "did not write" in refused(world, capsys, world / "leaderboard")


def test_dropping_an_entry_needs_allow_drop(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (world / "submissions" / "mini-retrieval" / "beta.json").unlink()
    err = refused(world, capsys, world / "leaderboard")
    assert "would drop 1 thing(s)" in err and "mini-retrieval/beta.json on mini-retrieval v" in err
    outside = snapshot(world, skip=world / "leaderboard")
    assert build_cli(world, world / "leaderboard", "--allow-drop") == 0
    marker = json.loads((world / "leaderboard" / MARKER).read_text(encoding="utf-8"))
    rows = next(v for k, v in marker["boards"].items() if k.startswith("mini-retrieval v"))
    assert "mini-retrieval/beta.json" not in rows and "mini-retrieval/alpha.json" in rows
    assert snapshot(world, skip=world / "leaderboard") == outside


def test_rebuild_touches_nothing_outside_the_output_folder(world: Path) -> None:
    outside = snapshot(world, skip=world / "leaderboard")
    assert build_cli(world, world / "leaderboard") == 0
    assert snapshot(world, skip=world / "leaderboard") == outside  # no lock, staging or old folder left
    marker = json.loads((world / "leaderboard" / MARKER).read_text(encoding="utf-8"))
    assert marker["written_by"] == "vlbench leaderboard build" and marker["vlbench_version"]
    files = sorted(p.relative_to(world / "leaderboard").as_posix()
                   for p in (world / "leaderboard").rglob("*") if p.is_file())
    assert marker["files"] == files and "index.html" in files
    # a new folder under folders that do not exist yet, and an empty folder
    before = snapshot(world)
    assert build_cli(world, world / "new" / "deeper" / "lb") == 0
    assert snapshot(world, skip=world / "new") == before
    assert (world / "new" / "deeper" / "lb" / MARKER).is_file()
    (world / "empty").mkdir()
    assert build_cli(world, world / "empty") == 0 and (world / "empty" / MARKER).is_file()


def test_failed_build_removes_the_folders_it_made(world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(world)
    publish_module = __import__("vlbench.leaderboard.publish", fromlist=["x"])

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(publish_module, "to_csv", boom)
    with pytest.raises(RuntimeError):
        leaderboard.build_and_publish(world / "submissions", world / "a" / "b" / "lb", resamples=RESAMPLES,
                                      quiet=True, cache_dir=world / "leaderboard" / "cache")
    assert snapshot(world) == before


def test_a_folder_built_before_the_marker_is_recognised(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (world / "leaderboard" / MARKER).unlink()
    assert build_cli(world, world / "leaderboard") == 0 and (world / "leaderboard" / MARKER).is_file()
    (world / "leaderboard" / MARKER).unlink()
    (world / "submissions" / "mini-retrieval" / "gamma.json").unlink()  # its rows come from leaderboard.json
    assert "mini-retrieval/gamma.json on mini-retrieval v" in refused(world, capsys, world / "leaderboard")
    (world / "leaderboard" / "thesis.tex").write_text("x", encoding="utf-8")
    assert "did not write" in refused(world, capsys, world / "leaderboard")


def test_publish_itself_refuses(world: Path) -> None:
    report = leaderboard.build(world / "submissions", resamples=RESAMPLES, quiet=True,
                               cache_dir=world / "leaderboard" / "cache")
    before = snapshot(world)
    with pytest.raises(UsageError, match="did not write"):
        leaderboard.publish(report, world / "thesis")
    assert snapshot(world) == before
