"""Reading untrusted bytes within caps, in bounded memory (harness/bounded_read.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vlbench import bounded_read
from vlbench.bounded_read import read_bytes_capped, read_regular_capped, refuse_past_caps
from vlbench.errors import IssueList, UsageError

REPO = Path(__file__).resolve().parents[2]
# What a refusal may cost at most (the issue's bound for a 2 GB EvalAI worker), in KiB of peak RSS.
PEAK_LIMIT_KIB = 300 * 1024


def _read(path: Path, max_bytes: int = 1 << 30, max_decompressed: int = 1 << 30) -> tuple[bytes | None, IssueList]:
    issues = IssueList()
    data, _, _ = read_bytes_capped(path, issues, max_bytes, max_decompressed)
    return data, issues


@pytest.fixture
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 5 bytes and at most 16 bytes kept while counting: every boundary case of the
    readers (a gzip member ending at a block's end, a second pass) in a few bytes."""
    monkeypatch.setattr(bounded_read, "_BLOCK", 5)
    monkeypatch.setattr(bounded_read, "KEEP_WHILE_COUNTING", 16)


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 100, 1000])
def test_plain_files_are_read_whole_in_one_or_two_passes(tmp_path: Path, tiny_blocks: None, size: int) -> None:
    body = bytes(range(256)) * 4
    path = tmp_path / "f.json"
    path.write_bytes(body[:size])
    issues = IssueList()
    data, digest, n = read_bytes_capped(path, issues, 10_000, 10_000)
    assert (data, digest, n) == (body[:size], hashlib.sha256(body[:size]).hexdigest(), size) and not issues
    assert read_regular_capped(path, 10_000) == (body[:size], size)


@pytest.mark.parametrize("members", [1, 2, 3])
def test_gzip_members_and_padding_at_any_block_boundary(tmp_path: Path, tiny_blocks: None, members: int) -> None:
    text = b'{"a": [1, 2, 3], "b": "' + b"x" * 40 + b'"}'
    parts = [text[i * len(text) // members:(i + 1) * len(text) // members] for i in range(members)]
    for padding in (b"", b"\x00" * 3):
        raw = b"".join(gzip.compress(p) for p in parts) + padding
        path = tmp_path / "f.json.gz"
        path.write_bytes(raw)
        data, issues = _read(path)
        assert data == text and not issues
        issues = IssueList()
        assert read_bytes_capped(path, issues, 10_000, 10_000)[1] == hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    ("name", "damage"),
    [("truncated", lambda raw: raw[:-6]), ("garbage after", lambda raw: raw + b"garbage"),
     ("lone magic byte after", lambda raw: raw + b"\x1f"), ("corrupt", lambda raw: raw[:12] + b"\xff" * 8 + raw[20:])],
)
def test_damaged_gzip_is_bad_gzip(tmp_path: Path, tiny_blocks: None, name: str, damage) -> None:
    path = tmp_path / "f.json.gz"
    path.write_bytes(damage(gzip.compress(b"[" + b"1, " * 50 + b"1]")))
    data, issues = _read(path)
    assert data is None and issues.codes() == {"bad_gzip"}, name
    with pytest.raises(UsageError, match="corrupt"):
        refuse_past_caps(path, 10_000, 10_000, "references")


def test_caps_while_counting(tmp_path: Path, tiny_blocks: None) -> None:
    path = tmp_path / "f.json.gz"
    path.write_bytes(gzip.compress(b" " * 1000))
    data, issues = _read(path, max_decompressed=999)
    assert data is None and issues.codes() == {"decompressed_too_large"}
    data, issues = _read(path, max_decompressed=1000)
    assert data == b" " * 1000 and not issues
    with pytest.raises(UsageError, match="inflates to more than 999 bytes"):
        refuse_past_caps(path, 10_000, 999, "references")
    refuse_past_caps(path, 10_000, 1000, "references")
    plain = tmp_path / "g.json"
    plain.write_bytes(b" " * 100)
    data, issues = _read(plain, max_bytes=99)
    assert data is None and issues.codes() == {"file_too_large"}
    with pytest.raises(UsageError, match="more than the limit of 99"):
        refuse_past_caps(plain, 99, 10_000, "references")


def test_a_file_that_changes_between_passes_is_refused(tmp_path: Path, tiny_blocks: None, monkeypatch) -> None:
    # a .json.gz inflating past what is kept while counting is read twice
    path = tmp_path / "f.json.gz"
    path.write_bytes(gzip.compress(b"a" * 100))
    calls = []
    original = bounded_read._RawBlocks.__call__

    def rewrite_before_second_pass(self):  # noqa: ANN001
        calls.append(1)
        if len(calls) == 2:
            path.write_bytes(gzip.compress(b"b" * 100))
        return original(self)

    monkeypatch.setattr(bounded_read._RawBlocks, "__call__", rewrite_before_second_pass)
    with pytest.raises(UsageError, match="changed while it was read"):
        _read(path)


def _bomb(path: Path, inflated: int) -> None:
    """A gzip file of many identical members (legal: gzip concatenates them) inflating to at least
    `inflated` bytes of spaces: about 1 KB per MiB."""
    member = gzip.compress(b" " * (64 << 20), compresslevel=9)
    with open(path, "wb") as fh:
        for _ in range(-(-inflated // (64 << 20))):
            fh.write(member)


def _peak_rss_kib(code: str, *args: str) -> tuple[int, str]:
    """Run `code` in a fresh interpreter; (its own peak resident memory in KiB, its stdout and stderr)."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("the peak memory of a process is read from /proc (Linux)")
    # VmHWM: the peak of this process's own memory since exec (ru_maxrss would also count the
    # forking parent's: the test process, which grows over a long session)
    script = textwrap.dedent(code) + textwrap.dedent("""
        with open("/proc/self/status") as status:
            print("PEAK", next(line.split()[1] for line in status if line.startswith("VmHWM:")))
    """)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True)
    peak = int(done.stdout.rsplit("PEAK", 1)[1])
    return peak, done.stdout + done.stderr


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.json.gz"
    _bomb(path, (1 << 30) + (64 << 20))  # past the default 1 GiB cap, from about 2 MB
    assert path.stat().st_size < 3_000_000
    return path


def test_a_gzip_bomb_is_refused_in_bounded_memory(bomb: Path) -> None:
    """The CLI, the API and the EvalAI worker refuse a 2 MB file that inflates past 1 GiB with a
    peak RSS under 300 MB (it used to inflate to the cap first: 2.1 GB)."""
    cli = """
        import sys
        from vlbench.cli import main
        print("EXIT", main(["validate", sys.argv[1], "--benchmark", "mini-retrieval"]))
    """
    peak, out = _peak_rss_kib(cli, str(bomb))
    assert "EXIT 1" in out and "decompressed_too_large" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"
    worker = """
        import sys
        from vlbench import evalai
        bundle = evalai.pack("mini-retrieval", sys.argv[2] + "/bundle.json", bootstrap=0)
        try:
            evalai.evaluate(str(bundle), sys.argv[1], "test")
        except evalai.EvaluationFailed as exc:
            print("REFUSED", exc.exit_code, str(exc)[:400])
    """
    peak, out = _peak_rss_kib(worker, str(bomb), str(bomb.parent))
    assert "REFUSED 1" in out and "decompressed_too_large" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"


def test_a_gzip_bomb_as_references_is_refused_in_bounded_memory(bomb: Path, tmp_path: Path) -> None:
    candidates = tmp_path / "c.json"
    candidates.write_text(json.dumps([{"image_id": 1, "caption": "a cat"}]))
    code = """
        import sys
        from vlbench.cli import main
        print("EXIT", main(["score", sys.argv[2], "--references", sys.argv[1], "--bootstrap", "0"]))
    """
    peak, out = _peak_rss_kib(code, str(bomb), str(candidates))
    assert "EXIT 2" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"


def test_an_oversized_file_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """Past --max-bytes, whatever the file holds: refused from its size, without reading it; and
    one whose size is not known in advance is counted, not held (at most KEEP_WHILE_COUNTING)."""
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: 600 MB that take no disk
        fh.truncate(600 << 20)
    code = """
        import sys
        from vlbench.cli import main
        print("EXIT", main(["validate", sys.argv[1], "--benchmark", "mini-retrieval"]))
    """
    peak, out = _peak_rss_kib(code, str(big))
    assert "EXIT 1" in out and "file_too_large" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"
    unreported = """
        import os, sys
        from vlbench import bounded_read
        from vlbench.errors import IssueList
        real = os.fstat
        def no_size(fd):  # a file system that reports 0 (as /proc does) and then delivers 600 MB
            info = real(fd)
            return os.stat_result((*info[:6], 0, *info[7:]))
        os.fstat = no_size
        issues = IssueList()
        data, _, _ = bounded_read.read_bytes_capped(sys.argv[1], issues, 512 << 20, 1 << 30)
        print("CODES", sorted(issues.codes()), data is None)
    """
    peak, out = _peak_rss_kib(unreported, str(big))
    assert "CODES ['file_too_large'] True" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"


def test_an_oversized_document_in_memory_is_refused_before_it_is_written_out() -> None:
    """An array of 20 million numbers (160 MB) past the byte cap: refused from a bound on its
    length as JSON, without making the 3 GB of Python floats and text that writing it needs."""
    code = """
        import numpy as np
        import vlbench
        array = np.ones(20_000_000)
        report = vlbench.validate({"image_to_text": array}, benchmark="mini-retrieval", max_bytes=50_000_000)
        print("CODES", [e.code for e in report.errors])
    """
    peak, out = _peak_rss_kib(code)
    assert "CODES ['file_too_large']" in out
    assert peak < PEAK_LIMIT_KIB, f"peak RSS {peak / 1024:.0f} MiB"


def test_a_document_in_memory_is_counted_once_per_container() -> None:
    from vlbench.jsonio import _longer_than

    shared = list(range(10))  # 30 bytes at least, counted once (a lower bound): 12 + 30
    assert not _longer_than({"a": shared, "b": shared}, 42)
    assert _longer_than({"a": shared, "b": list(range(10))}, 42)
    assert _longer_than({"a": list(range(100))}, 40)
    cycle: dict = {}
    cycle["self"] = cycle
    assert not _longer_than(cycle, 100)  # json.dumps reports the cycle
    assert _longer_than(["x" * 100], 50)
    assert not _longer_than(json.loads(json.dumps({"k": [[1, 2], {"z": None}]})), 1000)

