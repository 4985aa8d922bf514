"""Leaderboard build: cache, reproducibility, ranks, markers, escaping, atomic swap, lock, permissions,
push, reported rows, and the committed leaderboard/ matching a build of the committed submissions/."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import stat
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from tests.harness.leaderboard.conftest import (
    REPO,
    forbid_network,
    make_submissions,
    mini_random,
    watchdog,
    write_json,
)
from vlbench import leaderboard
from vlbench.cli import main
from vlbench.errors import UsageError
from vlbench.item_table import ItemTable
from vlbench.leaderboard.build import Board, Entry, rank_board
from vlbench.leaderboard.render import http_url
from vlbench.registry import registry
from vlbench.results import ResultRecord

publish_module = importlib.import_module("vlbench.leaderboard.publish")
TEST_TIMEOUT_S = 300  # each test here takes seconds; a CI run once stalled for 90 minutes near here


@pytest.fixture(autouse=True)
def bounded_and_offline(monkeypatch: pytest.MonkeyPatch):
    """Every test here runs offline (a network attempt fails at once) under a watchdog."""
    attempts = forbid_network(monkeypatch)
    with watchdog(TEST_TIMEOUT_S, "a leaderboard test"):
        yield attempts
    assert attempts == [], f"tried to reach the network: {attempts}"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A constructed submissions folder and its published leaderboard (cache filled)."""
    root = tmp_path_factory.mktemp("small")
    subs = make_submissions(root / "submissions")
    with watchdog(TEST_TIMEOUT_S, "building the small leaderboard"):
        leaderboard.build_and_publish(subs, root / "lb", resamples=100, quiet=True)
    return subs, root / "lb"


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_cache_rescores_only_changed_files(small: tuple[Path, Path], tmp_path: Path) -> None:
    subs, lb = small
    copy_subs, copy_lb = tmp_path / "s", tmp_path / "lb"
    shutil.copytree(subs, copy_subs)
    shutil.copytree(lb, copy_lb)
    doc = json.loads((copy_subs / "mini-retrieval" / "beta.json").read_text())
    doc["meta"]["method"] = "Beta v2"
    write_json(copy_subs / "mini-retrieval" / "beta.json", doc)
    report, _ = leaderboard.build_and_publish(copy_subs, copy_lb, resamples=100, quiet=True)
    assert report.scored == ["mini-retrieval/beta.json"]
    assert report.cache.hits == 4  # gamma, broken (cached errors), decorrelated gamma, alpha
    report, _ = leaderboard.build_and_publish(copy_subs, copy_lb, resamples=100, quiet=True, rebuild=True)
    assert len(report.scored) == 5
    # the cache holds exactly the entries of the files on the board now
    assert len(list((copy_lb / "cache").rglob("*.json"))) == 5


def test_two_builds_give_identical_bytes(small: tuple[Path, Path], tmp_path: Path) -> None:
    subs, lb = small
    leaderboard.build_and_publish(subs, tmp_path / "fresh", resamples=100, quiet=True, rebuild=True)
    assert _files(tmp_path / "fresh") == _files(lb)


def test_build_without_java_keeps_published_meteor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subs = tmp_path / "s"
    (subs / "mini-captions").mkdir(parents=True)
    shutil.copy(REPO / "submissions" / "mini-captions" / "random.json", subs / "mini-captions" / "random.json")
    lb = tmp_path / "lb"
    shutil.copytree(REPO / "leaderboard", lb)  # the published board and its cache (made with Java)
    # (allow_drop: this folder holds only the captions board of the published leaderboard)
    # the published build's bootstrap settings, so that the committed cache entry is the one used
    report, _ = leaderboard.build_and_publish(subs, lb, quiet=True, resamples=1000, allow_drop=True)
    if report.scored and json.loads((lb / "leaderboard.json").read_text())["boards"][0]["entries"][0]["scores"]["METEOR"] is None:
        pytest.skip("no Java here and the committed cache does not cover this submission")
    monkeypatch.setenv("VLBENCH_JAVA", "none")  # as if Java were not installed
    report, _ = leaderboard.build_and_publish(subs, lb, quiet=True, resamples=1000, allow_drop=True)
    assert report.scored == []  # from the cache
    meteor = json.loads((lb / "leaderboard.json").read_text())["boards"][0]["entries"][0]["scores"]["METEOR"]
    assert meteor is not None and meteor > 0
    # a rebuild without Java computes METEOR in Python: the published value, to the last bit
    leaderboard.build_and_publish(subs, lb, quiet=True, resamples=1000, rebuild=True, allow_drop=True)
    assert json.loads((lb / "leaderboard.json").read_text())["boards"][0]["entries"][0]["scores"]["METEOR"] == meteor


def test_a_metric_this_machine_cannot_compute_is_never_published_as_na(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh folder (no cache) on a machine without Java: the build refuses, or, where METEOR
    is computed without Java, publishes a number; never n/a. The refusal itself is generic: any
    metric key a result holds without a value, and says is unavailable, refuses the build."""
    subs = tmp_path / "s"
    (subs / "mini-captions").mkdir(parents=True)
    shutil.copy(REPO / "submissions" / "mini-captions" / "random.json", subs / "mini-captions" / "random.json")
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    try:
        leaderboard.build_and_publish(subs, tmp_path / "lb", quiet=True, resamples=20)
    except UsageError as exc:
        assert "could not compute" in str(exc) and "METEOR" in str(exc)
        assert not (tmp_path / "lb").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["s"]
    else:
        doc = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())
        assert all(v is not None for b in doc["boards"] for e in b["entries"] for v in e["scores"].values())
        assert "n/a" not in (tmp_path / "lb" / "README.md").read_text()
    # generic: a made-up metric the task could not compute
    board = Board(registry().benchmark("mini-retrieval"), [_entry("A", [1.0, 0.0]), _entry("B", [0.0, 1.0])])
    board.entries[1].result.scores["i2t_R@5"] = None
    board.entries[1].result.extra["unavailable"] = {"i2t_R@5": "needs a GPU"}
    build_module = importlib.import_module("vlbench.leaderboard.build")
    with pytest.raises(UsageError, match=r"i2t_R@5 could not be computed for 1 file \(B.json\): needs a GPU\."):
        build_module._refuse_lost_metrics([board], {})
    board.entries[1].result.scores.pop("i2t_R@5")  # left out of the scores: no column, nothing to refuse
    board.entries[0].result.scores.pop("i2t_R@5")
    build_module._refuse_lost_metrics([board], {})
    with pytest.raises(UsageError, match="i2t_R@5"):  # ... unless the published board shows it
        build_module._refuse_lost_metrics([board], {"mini-retrieval": {"i2t_R@5"}})


def test_a_refusal_gives_each_cause_once() -> None:
    """A core-only maintainer (no captions extra) building a new board: three caption results could
    not get METEOR for one reason. One sentence for that cause naming the three files once, and the
    true fix (the captions extra; METEOR needs no Java)."""
    b = registry().benchmark("mini-captions")
    reason = ("the Meteor 1.5 jar not found: pycocoevalcap is not installed (pip install pycocoevalcap==1.2), "
              "or set VLBENCH_METEOR_JAR")
    entries = []
    for name in ("caption-nn.json", "caption-nn-consensus5.json", "random.json"):
        result = ResultRecord(b.id, b.task, b.version, "x", "s", "g", {"method": name}, {"BLEU-4": 0.1, "METEOR": None},
                              b.main_score, extra={"unavailable": {"METEOR": reason, "SPICE": "no java here"}})
        entries.append(Entry(f"mini-captions/{name}", result, {}))
    build_module = importlib.import_module("vlbench.leaderboard.build")
    with pytest.raises(UsageError) as refused:
        build_module._refuse_lost_metrics([Board(b, entries)], {})
    message = str(refused.value)
    assert message.count(reason) == 1 and message.count("METEOR could not be computed") == 1
    assert all(message.count(f"mini-captions/{n}") == 1 for n in ("caption-nn.json", "caption-nn-consensus5.json", "random.json"))
    assert "for 3 files (" in message and "SPICE" not in message  # SPICE is not a column: not refused
    assert "pip install 'vlbench[captions]'" in message and "Java 17" not in message
    assert len(message) < 700 and "\n" not in message
    # a reason that gives the fix already is not followed by it again
    for e in entries:
        e.result.extra["unavailable"]["METEOR"] = "METEOR needs the captions extra (pip install 'vlbench[captions]'): no module"
    with pytest.raises(UsageError) as refused:
        build_module._refuse_lost_metrics([Board(b, entries)], {})
    assert str(refused.value).count("pip install 'vlbench[captions]'") == 1


PUBLISHED = ("README.md", "index.html", "leaderboard.csv", "leaderboard.json", "plot.svg")


def test_published_files_do_not_depend_on_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scored from scratch on this machine, with Java and as if without (VLBENCH_JAVA=none), or taken
    from the committed cache (scored where the committed board was built): the same published bytes.
    Why this machine could not compute a metric (SPICE: no Java, no CoreNLP jars) is in the build's
    own output, never in a published file. CI runs this on the Python 3.9 core too (numpy 1.26),
    and the committed board itself is rebuilt byte for byte there (the test below)."""
    pytest.importorskip("pycocoevalcap")  # METEOR is computed in Python from the captions extra's data
    subs = tmp_path / "s"
    keep = ["mini-captions/caption-nn.json", "mini-captions/random.json", "mini-grounding/grounding-clip-regions.json",
            "mini-grounding/random.json", "mini-decorrelated/random.json",
            *(f"{b}/mini-odmap-{arm}-seed{s}.json" for b in ("mini-decorrelated", "mini-shapes-retrieval")
              for arm in ("biased", "synthetic") for s in (0, 1))]
    for path in keep:
        (subs / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "submissions" / path, subs / path)
    lines = (REPO / "submissions" / "REFERENCE_ENTRIES").read_text(encoding="utf-8").splitlines()
    (subs / "REFERENCE_ENTRIES").write_text("\n".join(x for x in lines if x.split(" ")[0] in keep) + "\n")
    committed, _ = leaderboard.build_and_publish(subs, tmp_path / "committed", quiet=True,
                                                 cache_dir=REPO / "leaderboard" / "cache")
    assert committed.scored == [], "the committed cache does not cover these files: run make leaderboard"
    here, _ = leaderboard.build_and_publish(subs, tmp_path / "here", quiet=True, rebuild=True)
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    without, _ = leaderboard.build_and_publish(subs, tmp_path / "no-java", quiet=True, rebuild=True)
    assert len(here.scored) == len(without.scored) == len(keep)
    for name in PUBLISHED:
        expected = (tmp_path / "committed" / name).read_bytes()
        assert (tmp_path / "here" / name).read_bytes() == expected, name
        assert (tmp_path / "no-java" / name).read_bytes() == expected, name
    # the local reason is the build's output: a note, not a published word
    notes = without.local_notes()
    assert any(n.startswith("SPICE not computed on this machine for 2 files (") and "VLBENCH_JAVA=none" in n
               for n in notes), notes
    doc = json.loads((tmp_path / "no-java" / "leaderboard.json").read_text(encoding="utf-8"))
    captions = next(b for b in doc["boards"] if b["benchmark"] == "mini-captions")
    assert {e["unavailable"]["SPICE"] for e in captions["entries"]} == {"not computed where this submission was scored"}
    for name in PUBLISHED:
        text = (tmp_path / "no-java" / name).read_text(encoding="utf-8")
        assert "VLBENCH_JAVA" not in text and "no java" not in text.lower() and str(REPO) not in text, name


def test_the_cli_prints_local_reasons_once_per_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    pytest.importorskip("pycocoevalcap")
    subs = tmp_path / "s"
    (subs / "mini-captions").mkdir(parents=True)
    for name in ("caption-nn.json", "random.json"):
        shutil.copy(REPO / "submissions" / "mini-captions" / name, subs / "mini-captions" / name)
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    assert main(["leaderboard", "build", "--submissions", str(subs), "--out", str(tmp_path / "lb"), "--bootstrap", "20"]) == 0
    err = capsys.readouterr().err
    assert err.count("note: SPICE not computed on this machine for 2 files (mini-captions/caption-nn.json, "
                     "mini-captions/random.json): no java: disabled by VLBENCH_JAVA=none") == 1, err


def _entry(name: str, hits: list[float]) -> Entry:
    b = registry().benchmark("mini-retrieval")
    mean = float(np.mean(hits))
    table = ItemTable(ids=[str(i) for i in range(len(hits))], columns=["R@1", "R@5", "R@10"],
                      values=np.array([[h, h, h] for h in hits], dtype=float))
    scores = {k: mean for k in ("i2t_R@1", "i2t_R@5", "i2t_R@10", "t2i_R@1", "t2i_R@5", "t2i_R@10")}
    scores["RSUM"] = 600 * mean
    result = ResultRecord(b.id, b.task, b.version, "x", "s", "g", {"method": name}, scores, b.main_score)
    return Entry(name + ".json", result, {"image_to_text": table, "text_to_image": table})


def test_tie_aware_ranks_on_constructed_cases() -> None:
    b = registry().benchmark("mini-retrieval")
    strong = [1.0] * 190 + [0.0] * 10
    close = [1.0] * 189 + [0.0] * 11  # one item apart: not separable
    weak = [1.0] * 20 + [0.0] * 180
    weak_twin = [1.0] * 20 + [0.0] * 180  # equal main score
    board = Board(b, [_entry("d", weak_twin), _entry("a", strong), _entry("c", weak), _entry("b", close)])
    rank_board(board, alpha=0.05, resamples=200, seed=0)
    assert [(e.path, e.rank) for e in board.entries] == [("a.json", 1), ("b.json", 1), ("c.json", 3), ("d.json", 3)]


def test_escaping_links_markers_reported_and_invalid(small: tuple[Path, Path]) -> None:
    _, lb = small
    page = (lb / "index.html").read_text()
    md = (lb / "README.md").read_text()
    doc = json.loads((lb / "leaderboard.json").read_text())
    assert 'Alpha &amp; &quot;friends&quot; &#x27;x&#x27;' in page and "a|b &amp; c" in page
    assert 'href="https://example.org/a?x=1&amp;y=2"' in page and "javascript:" not in page
    assert "Alpha &amp; \"friends\" 'x'" in md and "a\\|b &amp; c" in md
    assert "<script" in page and page.count("<script") == 1  # only ours
    assert "http-equiv=\"Content-Security-Policy\"" in page and 'name="viewport"' in page
    # marker: gamma is on the maintainers' list; alpha writes meta.reference itself and gets nothing
    entries = {e["submission"]: e for b in doc["boards"] for e in b["entries"]}
    assert entries["mini-retrieval/gamma.json"]["reference"] is True
    assert entries["mini-retrieval/alpha.json"]["reference"] is False
    assert entries["mini-decorrelated/gamma.json"]["reference"] is False  # same name, other path
    assert "Gamma †" in md and "Alpha &amp; \"friends\" 'x' †" not in md
    # invalid entries are listed with their errors, paths relative to the submissions folder
    assert [i["submission"] for i in doc["invalid"]] == ["mini-retrieval/broken.json"]
    assert doc["invalid"][0]["error_count"] == 3 and doc["invalid"][0]["errors"][0]["code"] == "schema.required"
    assert "mini-retrieval/broken.json" in page and "mini-retrieval/broken.json" in md
    # reported rows: copied from the paper, unranked, in the record's units
    coco = next(b for b in doc["boards"] if b["benchmark"] == "coco-5k")
    clip = next(r for r in coco["reported"] if r["method"] == "CLIP zero-shot")
    assert clip["rank"] is None and clip["as_printed_percent"]["i2t_R@1"] == "50.6"
    assert clip["scores"]["i2t_R@1"] == 0.506 and clip["scores"]["RSUM"] == 361.9
    assert "| – | CLIP zero-shot ‡ |" in md and "| 50.6 | 75.1 | 83.6 | 30.1 | 55.7 | 66.8 | 361.9 |" in md
    odmap = next(b for b in doc["boards"] if b["benchmark"] == "flickr30k-1k-decorrelated")
    blip = next(r for r in odmap["reported"] if r["method"] == "BLIP + ours")
    assert blip["as_printed_percent"] == {"ODmAP@1": "62.5", "ODmAP@5": "55.4", "ODmAP@10": "52.4"}
    assert (lb / "plot.svg").read_bytes().startswith(b"<svg ") and '<figure class="plot"' in page
    assert "<svg " + (lb / "plot.svg").read_text().split("<svg ", 1)[1] in page  # the same plot, inline
    csv = (lb / "leaderboard.csv").read_text()
    assert "'=cmd" in csv and ",reported,," in csv


def test_http_url_only() -> None:
    assert http_url("https://a.org/x") == "https://a.org/x"
    assert http_url("HTTP://a.org") == "HTTP://a.org"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.org", "ftp://a", "https://a.org/\nx", None, ""):
        assert http_url(bad) is None


def test_reference_list_pins_sha256(tmp_path: Path) -> None:
    subs = tmp_path / "s"
    write_json(subs / "mini-decorrelated" / "a.json", mini_random("mini-decorrelated", 0, {"method": "A"}))
    write_json(subs / "mini-decorrelated" / "new.json", mini_random("mini-decorrelated", 1, {"method": "N", "reference": True}))
    import hashlib

    digest = hashlib.sha256((subs / "mini-decorrelated" / "a.json").read_bytes()).hexdigest()
    (subs / "REFERENCE_ENTRIES").write_text(f"mini-decorrelated/a.json {digest}\n")
    report = leaderboard.build(subs, resamples=0, quiet=True)
    marks = {e.path: e.reference for e in report.boards[0].entries}
    assert marks == {"mini-decorrelated/a.json": True, "mini-decorrelated/new.json": False}
    (subs / "REFERENCE_ENTRIES").write_text(f"mini-decorrelated/a.json {'0' * 64}\n")  # file changed since the check
    report = leaderboard.build(subs, resamples=0, quiet=True)
    assert not any(e.reference for e in report.boards[0].entries)
    (subs / "REFERENCE_ENTRIES").write_text("mini-decorrelated/a.json not-a-sha\n")
    with pytest.raises(UsageError, match="line 1"):
        leaderboard.build(subs, resamples=0, quiet=True)
    # `floor`: a chance floor, with or without a pinned sha256; ranked, never a best mark
    (subs / "REFERENCE_ENTRIES").write_text(f"mini-decorrelated/a.json {digest} floor\nmini-decorrelated/new.json floor\n")
    report = leaderboard.build(subs, resamples=0, quiet=True)
    assert {e.path: (e.reference, e.floor) for e in report.boards[0].entries} == {
        "mini-decorrelated/a.json": (True, True), "mini-decorrelated/new.json": (True, True)}
    (subs / "REFERENCE_ENTRIES").write_text(f"mini-decorrelated/a.json {'0' * 64} floor\n")  # changed: neither
    report = leaderboard.build(subs, resamples=0, quiet=True)
    assert not any(e.reference or e.floor for e in report.boards[0].entries)
    for bad in ("mini-decorrelated/a.json floor floor", f"mini-decorrelated/a.json floor {digest}"):
        (subs / "REFERENCE_ENTRIES").write_text(bad + "\n")
        with pytest.raises(UsageError, match=r"line 1: expected 'PATH \[SHA256\] \[floor\]'"):
            leaderboard.build(subs, resamples=0, quiet=True)


def test_committed_reference_list_marks_only_listed_files() -> None:
    from vlbench.leaderboard.sources import read_reference_list

    pins = read_reference_list(REPO / "submissions").pins
    for path in pins:
        assert (REPO / "submissions" / path).is_file(), path


def test_injected_failure_leaves_old_leaderboard(small: tuple[Path, Path], tmp_path: Path) -> None:
    subs, lb = small
    target = tmp_path / "lb"
    shutil.copytree(lb, target)
    before = _files(target)

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    with mock.patch.object(publish_module, "to_csv", boom), pytest.raises(RuntimeError):
        leaderboard.build_and_publish(subs, target, resamples=100, quiet=True)
    assert _files(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lb"]  # no staging folder, no lock file left
    with mock.patch.object(publish_module.os, "rename", side_effect=[None, OSError("rename failed"), None]), \
            pytest.raises(OSError):
        publish_module.swap_in(tmp_path / "missing-new", target)
    assert _files(target) == before


def test_lock_refuses_a_second_build(small: tuple[Path, Path], tmp_path: Path) -> None:
    subs, _ = small
    out = tmp_path / "lb"
    with leaderboard.build_lock(out), pytest.raises(UsageError, match="another leaderboard build"):
        leaderboard.build_and_publish(subs, out, resamples=100, quiet=True)
    assert not out.exists()


def test_published_files_get_normal_permissions(small: tuple[Path, Path], tmp_path: Path) -> None:
    subs, _ = small
    old = os.umask(0o022)
    try:
        _, written = leaderboard.build_and_publish(subs, tmp_path / "lb", resamples=100, quiet=True)
        from vlbench.atomic_files import atomic_write_json

        atomic_write_json(tmp_path / "result.json", {"a": 1})
    finally:
        os.umask(old)
    for path in [*written, tmp_path / "result.json"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert stat.S_IMODE((tmp_path / "lb").stat().st_mode) == 0o755


def test_cli_build_exit_code_and_summary(small: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    subs, lb = small
    shutil.copytree(lb, tmp_path / "lb")
    args = ["leaderboard", "build", "--submissions", str(subs), "--out", str(tmp_path / "lb"), "--bootstrap", "100"]
    assert main(args) == 0  # one invalid entry: published anyway
    captured = capsys.readouterr()
    assert "1 invalid" in captured.out and "reused 5" in captured.out
    assert "invalid: mini-retrieval/broken.json" in captured.err
    assert main([*args, "--quiet"]) == 0 and capsys.readouterr().err == ""
    assert main(["leaderboard", "build", "--submissions", str(tmp_path / "nope"), "--out", str(tmp_path / "x")]) == 2


def test_push_dry_run_and_refusals(small: tuple[Path, Path], capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dry run lists what a push publishes (not the score cache); refusals before any upload.
    The real client against a stand-in hub: tests/harness/leaderboard/test_push.py."""
    pytest.importorskip("huggingface_hub")
    _, lb = small
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(lb), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would upload" in out and "dataset org/board" in out
    listed = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
    assert listed == {p.relative_to(lb).as_posix(): str(p.stat().st_size) for p in lb.rglob("*")
                      if p.is_file() and "cache" not in p.relative_to(lb).parts and not p.name.startswith(".")}
    assert "index.html" in listed and (lb / "cache" / "mini-retrieval").is_dir()
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)  # nor a saved `hf auth login` token
    with mock.patch("huggingface_hub.HfApi") as api:
        assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(lb)]) == 2
    api.assert_not_called()
    assert "HF_TOKEN" in capsys.readouterr().err
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    monkeypatch.setattr("huggingface_hub.get_token", lambda: os.environ.get("HF_TOKEN"))
    with mock.patch("huggingface_hub.HfApi") as api:  # the hub is unreachable: refused before uploading
        api.return_value.whoami.side_effect = ConnectionError("Name or service not known")
        assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(lb)]) == 2
    api.assert_called_once_with(token="hf_test")
    api.return_value.create_commit.assert_not_called()
    err = capsys.readouterr().err
    assert "cannot reach the Hugging Face hub" in err and "Name or service not known" in err and "Traceback" not in err
    with mock.patch("huggingface_hub.HfApi") as api:
        api.return_value.list_repo_files.return_value = []
        api.return_value.create_commit.side_effect = PermissionError("403 Forbidden")
        assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(lb)]) == 2
    err = capsys.readouterr().err
    assert "could not upload to dataset org/board: PermissionError: 403 Forbidden" in err and "Traceback" not in err
    assert main(["leaderboard", "push", "--repo-id", "x/y", "--folder", str(lb / "cache")]) == 2


def test_push_without_network_fails_at_once(small: tuple[Path, Path], capsys, monkeypatch: pytest.MonkeyPatch,
                                            bounded_and_offline: list) -> None:
    """The real client (no mock) on a machine with no network: one clear sentence, exit 2, no
    retries with backoff (the watchdog would stop a wait)."""
    pytest.importorskip("huggingface_hub")
    _, lb = small
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    assert main(["leaderboard", "push", "--repo-id", "org/board", "--folder", str(lb)]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Hugging Face hub" in err and "Traceback" not in err
    bounded_and_offline.clear()  # the attempt was the point; it was refused by the guard


def test_committed_leaderboard_is_what_build_produces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make leaderboard` output is committed: a build of the committed submissions, reusing the
    committed cache, must give exactly the committed files."""
    committed = REPO / "leaderboard"
    # All from the cache when the board is current; a stale board must fail fast, not start a
    # Meteor JVM to rescore the captions.
    monkeypatch.setenv("VLBENCH_JAVA", "none")
    report, _ = leaderboard.build_and_publish(REPO / "submissions", tmp_path / "lb", quiet=True,
                                              cache_dir=committed / "cache")
    assert report.scored == [], f"not in the committed cache (run make leaderboard): {report.scored}"
    # byte for byte on every interpreter and library version CI runs (the core's Python 3.9 run
    # too): nothing published depends on the machine that builds it
    built, published = _files(tmp_path / "lb"), _files(committed)
    assert built == published, "leaderboard/ is stale: run make leaderboard"


def test_retired_version_keeps_its_own_table(tmp_path: Path) -> None:
    """A result of a retired benchmark version is shown in its own table, never rescored, never
    mixed with the current version; a misplaced file is listed as skipped."""
    subs = tmp_path / "submissions"
    (subs / "mini-retrieval").mkdir(parents=True)
    shutil.copy(REPO / "submissions" / "mini-retrieval" / "random.json", subs / "mini-retrieval" / "random.json")
    retired = REPO / "submissions" / "retired" / "mini-decorrelated@1.0" / "random.json"
    (subs / "retired" / "mini-decorrelated@1.0").mkdir(parents=True)
    shutil.copy(retired, subs / "retired" / "mini-decorrelated@1.0" / "old.json")
    current = registry().benchmark("mini-decorrelated").version
    (subs / "retired" / f"mini-decorrelated@{current}").mkdir(parents=True)
    shutil.copy(retired, subs / "retired" / f"mini-decorrelated@{current}" / "wrong.json")
    (subs / "retired" / "no-such@1.0").mkdir(parents=True)
    write_json(subs / "retired" / "no-such@1.0" / "x.json", {})
    report = leaderboard.build(subs, resamples=50, quiet=True, cache_dir=tmp_path / "cache")
    old = [b for b in report.boards if b.benchmark.id == "mini-decorrelated"]
    assert [(b.benchmark.version, b.retired) for b in old] == [("1.0", True)]
    assert [e.path for e in old[0].entries] == ["retired/mini-decorrelated@1.0/old.json"]
    assert old[0].entries[0].result.benchmark_version == "1.0" and old[0].entries[0].rank == 1
    assert "Retired version 1.0" in old[0].benchmark.description
    assert report.scored == ["mini-retrieval/random.json"]  # the retired result is not rescored
    assert {p for p, _ in report.skipped} == {f"retired/mini-decorrelated@{current}/wrong.json", "retired/no-such@1.0/x.json"}


def test_retire_writes_what_a_build_scores_and_deletes_nothing(tmp_path: Path) -> None:
    """`vlbench.leaderboard.retire` keeps each current result as the build's own score record, in
    the folder the build reads as a retired table; it removes no submission, and refuses (writing
    nothing) when a record exists already or a submission is invalid."""
    from vlbench.leaderboard.retire import main as retire_main
    from vlbench.leaderboard.retire import retire

    subs = tmp_path / "submissions"
    (subs / "mini-retrieval").mkdir(parents=True)
    shutil.copy(REPO / "submissions" / "mini-retrieval" / "random.json", subs / "mini-retrieval" / "random.json")
    version = registry().benchmark("mini-retrieval").version
    target = subs / "retired" / f"mini-retrieval@{version}"
    assert retire(subs, "mini-retrieval", resamples=50) == [subs / "mini-retrieval" / "random.json"]
    assert (subs / "mini-retrieval" / "random.json").is_file()
    cached = leaderboard.build(subs, resamples=50, quiet=True, cache_dir=tmp_path / "cache")
    current = next(b for b in cached.boards if b.benchmark.id == "mini-retrieval")
    written = json.loads((target / "random.json").read_text())
    assert written["result"]["scores"] == current.entries[0].result.scores
    assert written["result"]["ci95"] == {k: list(v) for k, v in current.entries[0].result.ci95.items()}
    before = (target / "random.json").read_bytes()
    with pytest.raises(UsageError, match="exists already"):
        retire(subs, "mini-retrieval", resamples=50)
    assert (target / "random.json").read_bytes() == before
    write_json(subs / "mini-retrieval" / "broken.json", {"vlbench": 1})
    (target / "random.json").unlink()
    with pytest.raises(UsageError, match="broken.json is not a valid submission"):
        retire(subs, "mini-retrieval", resamples=50)
    assert not (target / "random.json").exists()
    (subs / "mini-retrieval" / "broken.json").unlink()
    os.symlink(tmp_path / "elsewhere.json", target / "random.json")  # a link, even one leading nowhere
    with pytest.raises(UsageError, match="exists already"):
        retire(subs, "mini-retrieval", resamples=50)
    assert (target / "random.json").is_symlink() and not (tmp_path / "elsewhere.json").exists()
    assert retire_main(["no-such-benchmark", "--submissions", str(subs)]) == 2
