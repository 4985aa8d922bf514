"""What a user is told about METEOR: one way to get it (`pip install 'vlbench[captions]'`), no Java
needed, and where the first run's paraphrase index went, how big it is and how to clear it."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from paraphrase_tables import entries_of_every_kind, write_table

from vlbench.cli import main
from vlbench.tasks.captioning import java
from vlbench.tasks.captioning.meteor import paraphrase_index as PI
from vlbench.tasks.captioning.meteor import process as meteor

REPO = Path(__file__).resolve().parents[3]
CAPTIONS = REPO / "submissions" / "mini-captions" / "random.json"
EXTRA = "pip install 'vlbench[captions]'"


def test_without_the_captions_extra_the_notes_name_the_extra(capsys, monkeypatch) -> None:
    """The core install: the notes name the extra, never pycocoevalcap alone (which lacks the
    stemmers METEOR needs, so that installing it led to a second note)."""
    monkeypatch.setattr(java, "pycocoevalcap_dir", lambda: None)
    assert main(["score", str(CAPTIONS), "--bootstrap", "0"]) == 0
    err = capsys.readouterr().err
    assert f"note: METEOR unavailable: the Meteor 1.5 jar not found: it comes with the captions extra, which is not installed ({EXTRA})" in err
    assert "pycocoevalcap==" not in err


def test_without_the_stemmers_the_note_names_the_extra(capsys, monkeypatch) -> None:
    def no_stemmer(*args, **kwargs):  # noqa: ANN002, ANN003
        raise ModuleNotFoundError("No module named 'snowballstemmer'", name="snowballstemmer")

    monkeypatch.setattr(meteor, "PythonMeteor", no_stemmer)
    monkeypatch.setattr(PI, "open_index", lambda *args, **kwargs: object())  # no index built for this
    assert main(["score", str(CAPTIONS), "--bootstrap", "0"]) == 0
    err = capsys.readouterr().err
    assert f"METEOR unavailable: METEOR needs the captions extra, which is not installed ({EXTRA}; missing: snowballstemmer)" in err


def test_no_message_or_page_gives_another_install_command() -> None:
    """Every place that tells how to get METEOR says the captions extra; none says that METEOR
    needs Java."""
    places = [*REPO.glob("harness/**/*.py"), *REPO.glob("tasks/**/*.py"), *REPO.glob("baselines/**/*.py"),
              REPO / "README.md", REPO / "HACKING.md", *REPO.glob("tasks/*/README.md")]
    for path in places:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install [\"']?pycocoevalcap", text), path
        assert not re.search(r"without Java[^.]{0,40}METEOR (as|is) unavailable", " ".join(text.split())), path


def test_the_run_that_builds_the_index_says_where_and_how_big(tmp_path: Path, capsys) -> None:
    table = tmp_path / "paraphrase-en.gz"
    write_table(table, entries_of_every_kind(random.Random(0), 300))
    process = meteor.MeteorProcess(backend="python")
    build = PI.open_index(table, tmp_path / "cache")
    assert isinstance(build, PI.IndexBuild)
    process._build = build  # what start() keeps on a machine's first run
    process.close()
    err = capsys.readouterr().err
    root = build.wait().root
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20
    assert err == (f"note: METEOR built its paraphrase index, once for this machine: {size:,.0f} MiB in {root} "
                   "(VLBENCH_METEOR_CACHE sets another folder; delete this one to free the space, and the next run "
                   "builds it again)\n")
    again = meteor.MeteorProcess(backend="python")
    loaded = PI.open_index(table, tmp_path / "cache")
    assert isinstance(loaded, PI.ParaphraseIndex)  # a later run: read from the cache, nothing said
    again.close()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("root", [None, "missing"])
def test_an_index_that_was_not_saved_is_not_announced(tmp_path: Path, capsys, root) -> None:
    meteor._say_where(None if root is None else tmp_path / root)
    assert capsys.readouterr().err == ""
