"""`MeteorProcess`: the Meteor 1.5 statistics of a run, computed in Python by default
(`python_meteor.py`, equal to the jar segment by segment; needs no Java, only the jar's data files
from pycocoevalcap), or with `VLBENCH_METEOR=jar` by the jar itself, as below.

The jar path: the Meteor 1.5 jar that pycocoevalcap ships, the `SCORE` statements pipelined (a
writer thread feeds stdin while the replies are read), stderr drained, and the per-image and corpus
scores computed in Python from the jar's 23 statistics exactly as the jar aggregates them (see
`scores.meteor_aggregate`).

Filtered paraphrase table (the default with the Meteor 1.5 jar): loading the 5.27M-entry
`paraphrase-en.gz` is most of a plain run's time. `stats()` instead gives each JVM (`-a`) the
entries that can match in this run's captions (`paraphrase.py` says why that is exact), from an
index built once per table under the vlbench data folder; the JVMs then start in about a second,
so the statements are split between `shards` JVMs (one per core, at most 2 by default). If the index
cannot be built or used, the plain jar runs as before, with a warning. `VLBENCH_METEOR_FILTER=0`
turns filtering off.

Plain mode: the JVM is started by `MeteorProcess.start()` before tokenization, so its start-up
(several seconds, mostly loading the paraphrase table) overlaps the rest of the scoring.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from vlbench.backports import strict_zip
from vlbench.hashing import sha256_file
from vlbench.tasks.captioning.java import JavaUnavailable, java_command, meteor_jar
from vlbench.tasks.captioning.meteor import paraphrase, paraphrase_index
from vlbench.tasks.captioning.meteor.python_meteor import PythonMeteor
from vlbench.tasks.captioning.meteor.scores import METEOR_STATS

# As pycocoevalcap: java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm
METEOR_ARGS = ["-", "-", "-stdio", "-l", "en", "-norm"]
# Serial GC and a large young generation: loading the whole paraphrase table allocates millions of
# short-lived objects, which a large young generation collects cheaply. The full JIT stays: the long
# table load is where its compiled code pays (C1 only, -XX:TieredStopAtLevel=1, measured slower).
JVM_FLAGS = ["-Xmx2G", "-Xms2G", "-Xmn1G", "-XX:+UseSerialGC"]
# With a filtered table the heap stays small; no need to commit 2G per JVM up front. C1 only: the
# run is then a few thousand statements, too short for C2's compile threads to earn back their CPU
# (measured: tasks/captioning/README.md).
FILTERED_JVM_FLAGS = ["-Xmx2G", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


class MeteorUnavailable(RuntimeError):
    pass


BACKENDS = ("python", "jar")


def default_backend() -> str:
    """VLBENCH_METEOR: "python" (default) or "jar"."""
    value = os.environ.get("VLBENCH_METEOR", "").strip().lower() or "python"
    if value not in BACKENDS:
        raise MeteorUnavailable(f"VLBENCH_METEOR={value!r} is not one of {', '.join(BACKENDS)}")
    return value


def score_line(hypothesis: str, references: Sequence[str]) -> str:
    """The statement pycocoevalcap sends: references as they are, '|||' removed from the
    hypothesis and double spaces replaced (str.replace: every non-overlapping occurrence)."""
    hyp = hypothesis.replace("|||", "").replace("  ", " ")
    return " ||| ".join(("SCORE", " ||| ".join(references), hyp))


def default_shards() -> int:
    return max(1, min(2, os.cpu_count() or 1))


@cache
def _is_meteor_15(jar: str, size: int, mtime_ns: int) -> bool:
    return sha256_file(Path(jar)) == paraphrase.METEOR_15_SHA256


class _Jvm:
    """One Meteor JVM: stderr drained, statements fed by a writer thread, replies parsed."""

    def __init__(self, cmd: list[str], cwd: str) -> None:
        try:
            self.proc = subprocess.Popen(
                cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise MeteorUnavailable(f"could not start java: {exc}") from None
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if len(self._stderr) < 200:
                self._stderr.append(line)

    def error(self, what: str) -> MeteorUnavailable:
        tail = b"".join(self._stderr[-20:]).decode(errors="replace").strip()
        return MeteorUnavailable(f"{what}{': ' + tail[-800:] if tail else ''}")

    def run(self, lines: Sequence[str], out: np.ndarray, errors: list[MeteorUnavailable]) -> None:
        """Score `lines` into `out` (len(lines), 23); a failure is appended to `errors`."""
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        n = len(lines)
        payload = "".join(line + "\n" for line in lines).encode("utf-8")

        def write() -> None:
            try:
                proc.stdin.write(payload)
                proc.stdin.flush()
            except (BrokenPipeError, OSError):  # the JVM died; reported below
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        # A JVM that stays alive but silent would block readline forever: a watchdog kills it,
        # which ends the read with EOF and a clear error (generous: the jar does ~1,000 lines/s).
        deadline = float(os.environ.get("VLBENCH_METEOR_TIMEOUT", "0")) or 300.0 + 0.05 * n
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            with contextlib.suppress(OSError):
                proc.kill()

        watchdog = threading.Timer(deadline, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            self._read(proc, n, out, errors, timed_out, deadline)
        finally:
            watchdog.cancel()
        writer.join(timeout=5)

    def _read(self, proc: subprocess.Popen, n: int, out: np.ndarray, errors: list[MeteorUnavailable],
              timed_out: threading.Event, deadline: float) -> None:
        assert proc.stdout is not None
        for i in range(n):
            line = proc.stdout.readline()
            if not line:
                if timed_out.is_set():
                    errors.append(MeteorUnavailable(
                        f"the Meteor JVM gave no answer within {deadline:.0f} s ({i} of {n} statements done); "
                        "set VLBENCH_METEOR_TIMEOUT (seconds) to wait longer"))
                else:
                    errors.append(self.error(f"the Meteor JVM stopped after {i} of {n} statements"))
                return
            fields = line.split()
            if len(fields) != METEOR_STATS:
                errors.append(self.error(f"unexpected reply from Meteor for statement {i}: {line[:200]!r}"))
                return
            out[i] = [float(x) for x in fields]

    def close(self) -> None:
        proc = self.proc
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _say_where(root: Path | None) -> None:
    """Once, on the run that built it: where the paraphrase index went, its size, how to clear it.
    On stderr, not in the result record (a record does not depend on the machine that made it)."""
    if root is None or not (root / "meta.json").is_file():
        return  # not saved (a warning said why)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    print(f"note: METEOR built its paraphrase index, once for this machine: {size / 2**20:,.0f} MiB in {root} "
          "(VLBENCH_METEOR_CACHE sets another folder; delete this one to free the space, and the next run "
          "builds it again)", file=sys.stderr)


class MeteorProcess:
    """`start()` then `stats(...)` any number of times, then `close()` (or use it as a context
    manager). `filtered`: None = use the filtered table when possible; False = never.
    `shards`: JVMs per filtered run (default: one per core, at most 2). `backend`: "python" or
    "jar" (default: `default_backend()`)."""

    def __init__(self, jvm_flags: Sequence[str] = JVM_FLAGS, filtered: bool | None = None,
                 shards: int | None = None, table: Path | None = None, cache: Path | None = None,
                 backend: str | None = None) -> None:
        self.backend = backend or default_backend()
        self._python: PythonMeteor | None = None
        self.jvm_flags = list(jvm_flags)
        if filtered is None:
            filtered = os.environ.get("VLBENCH_METEOR_FILTER", "1") != "0"
        self.want_filtered = filtered
        self.shards = shards or default_shards()
        self.index: paraphrase_index.ParaphraseIndex | None = None
        self._build: paraphrase_index.IndexBuild | None = None  # a first run's index build
        self.warning: str | None = None
        self.last_table_entries: int | None = None  # entries given to the JVMs by the last stats()
        self._plain: _Jvm | None = None
        self._java: list[str] = []
        self._jar: Path | None = None
        self._table: Path | None = table  # the paraphrase file (default: the jar's own)
        self._custom_table = table is not None
        self._cache = cache  # index folder (default: paraphrase.cache_root())

    def start(self) -> MeteorProcess:
        if self.backend == "python":
            return self._start_python()
        try:
            self._jar = jar = meteor_jar()
            self._java = java_command()
        except JavaUnavailable as exc:
            raise MeteorUnavailable(str(exc)) from None
        if self._table is None:
            self._table = jar.parent / "data" / "paraphrase-en.gz"
        table = self._table
        if not table.is_file():
            raise MeteorUnavailable(f"Meteor's paraphrase table is missing: {table}")
        if self.want_filtered:
            try:
                st = jar.stat()
                if not _is_meteor_15(str(jar), st.st_size, st.st_mtime_ns):
                    raise ValueError(f"{jar} is not the Meteor 1.5 jar the filter was verified on")
                self.index = paraphrase_index.ensure_index(table, self._cache)
            except Exception as exc:  # any failure: the plain jar, as pycocoevalcap runs it
                self._fallback(f"filtered paraphrase table unavailable ({type(exc).__name__}: {exc})")
        if self.index is None:
            self._plain = self._spawn(self.jvm_flags, table if self._custom_table else None)
        return self

    def _start_python(self) -> MeteorProcess:
        """The Python path: the jar's data files (no Java), the paraphrase index."""
        try:
            self._jar = jar = meteor_jar()
        except JavaUnavailable as exc:
            raise MeteorUnavailable(str(exc)) from None
        if self._table is None:
            self._table = jar.parent / "data" / "paraphrase-en.gz"
        if not self._table.is_file():
            raise MeteorUnavailable(f"Meteor's paraphrase table is missing: {self._table}")
        st = jar.stat()
        if not _is_meteor_15(str(jar), st.st_size, st.st_mtime_ns):
            raise MeteorUnavailable(f"{jar} is not the Meteor 1.5 jar whose algorithm vlbench's Python METEOR reproduces; "
                                    "set VLBENCH_METEOR=jar to run it")
        try:
            # the first run on a machine: built in a thread while the run prepares its words
            index = paraphrase_index.open_index(self._table, self._cache)
        except Exception as exc:
            raise MeteorUnavailable(f"the paraphrase index could not be built ({type(exc).__name__}: {exc})") from None
        if isinstance(index, paraphrase_index.IndexBuild):
            self._build = index
        else:
            self.index = index
        try:
            self._python = PythonMeteor(jar, self._table, index)
        except ImportError as exc:
            missing = getattr(exc, "name", None) or str(exc)
            raise MeteorUnavailable(f"METEOR needs the captions extra, which is not installed (pip install "
                                    f"'vlbench[captions]'; missing: {missing})") from None
        return self

    def _fallback(self, why: str) -> None:
        self.index = None
        self.warning = f"METEOR: {why}; loading the full paraphrase table instead"
        warnings.warn(self.warning, RuntimeWarning, stacklevel=3)

    def _spawn(self, flags: Sequence[str], para: Path | None) -> _Jvm:
        assert self._jar is not None
        extra = ["-a", str(para)] if para is not None else []
        cmd = [*self._java, *flags, "-jar", str(self._jar), *METEOR_ARGS, *extra]
        return _Jvm(cmd, str(self._jar.parent))

    def stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """The jar's 23 statistics per image, shape (n, 23)."""
        if self._jar is None:
            self.start()
        lines = [score_line(h, r) for h, r in zip(hypotheses, references)]
        if self._python is not None:
            try:
                out = self._python.stats_of_lines(lines)
            except paraphrase_index.IndexBuildError as exc:
                raise MeteorUnavailable(f"the paraphrase index could not be built ({exc})") from None
            if isinstance(self._python.index, paraphrase_index.ParaphraseIndex):
                self.index = self._python.index
            self.last_table_entries = self._python.last_table_entries
            return out
        if self.index is not None and not any("\n" in x or "\r" in x for x in lines):
            try:
                return self._filtered_stats(lines)
            except MeteorUnavailable:
                raise
            except Exception as exc:
                self._fallback(f"filtering failed ({type(exc).__name__}: {exc})")
        if self._plain is None:
            self._plain = self._spawn(self.jvm_flags, self._table if self._custom_table else None)
        out = np.empty((len(lines), METEOR_STATS), dtype=np.float64)
        errors: list[MeteorUnavailable] = []
        self._plain.run(lines, out, errors)
        if errors:
            raise errors[0]
        return out

    def _filtered_stats(self, lines: list[str]) -> np.ndarray:
        assert self.index is not None and self._jar is not None
        n = len(lines)
        out = np.empty((n, METEOR_STATS), dtype=np.float64)
        if n == 0:
            return out
        with tempfile.TemporaryDirectory(prefix="vlbench-meteor-") as tmp:
            para = Path(tmp) / "paraphrase.gz"
            hashes = paraphrase.ngram_keys(paraphrase.run_token_lists(lines, str(self._jar)), self.index.max_n)
            entries = self.index.keep(hashes)
            self.index.write_subset(entries, para)
            self.last_table_entries = len(entries)
            k = max(1, min(self.shards, n // 50 or 1))
            bounds = [n * i // k for i in range(k + 1)]
            jvms = [self._spawn(FILTERED_JVM_FLAGS, para) for _ in range(k)]
            errors: list[MeteorUnavailable] = []
            try:
                threads = [
                    threading.Thread(target=jvm.run, args=(lines[lo:hi], out[lo:hi], errors), daemon=True)
                    for jvm, lo, hi in strict_zip(jvms, bounds[:-1], bounds[1:])
                ]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            finally:
                for jvm in jvms:
                    jvm.close()
            if errors:
                raise errors[0]
        return out

    def close(self) -> None:
        """Stops the JVM; waits for a first run's index files to be written."""
        jvm, self._plain = self._plain, None
        if jvm is not None:
            jvm.close()
        build, self._build = self._build, None
        if build is not None:
            with contextlib.suppress(paraphrase_index.IndexBuildError):  # reported by stats()
                _say_where(build.wait().root)

    def __enter__(self) -> MeteorProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()
