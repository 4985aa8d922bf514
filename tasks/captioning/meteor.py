"""METEOR through the Meteor 1.5 jar that pycocoevalcap ships: one JVM per scoring run, the
`SCORE` statements pipelined (a writer thread feeds stdin while the replies are read), stderr
drained, and the per-image and corpus scores computed in Python from the jar's 23 statistics
exactly as the jar aggregates them (see `metrics.meteor_aggregate`).

The JVM is started by `MeteorProcess.start()` before tokenization, so its start-up (about 4 s,
mostly loading the paraphrase table) overlaps the rest of the scoring.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Sequence

import numpy as np

from tasks.captioning.java import JavaUnavailable, java_command, meteor_jar
from tasks.captioning.metrics import METEOR_STATS

# As pycocoevalcap: java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm
METEOR_ARGS = ["-", "-", "-stdio", "-l", "en", "-norm"]
# Serial GC and a large young generation: loading the paraphrase table allocates millions of
# short-lived objects; in one measurement here this cut the start-up CPU time by about 15%. (C1-only JIT,
# -XX:TieredStopAtLevel=1, made it slower.)
JVM_FLAGS = ["-Xmx2G", "-Xms2G", "-Xmn1G", "-XX:+UseSerialGC"]


class MeteorUnavailable(RuntimeError):
    pass


def score_line(hypothesis: str, references: Sequence[str]) -> str:
    """The statement pycocoevalcap sends: references as they are, '|||' removed from the
    hypothesis and double spaces replaced (str.replace: every non-overlapping occurrence)."""
    hyp = hypothesis.replace("|||", "").replace("  ", " ")
    return " ||| ".join(("SCORE", " ||| ".join(references), hyp))


class MeteorProcess:
    def __init__(self, jvm_flags: Sequence[str] = JVM_FLAGS) -> None:
        self.jvm_flags = list(jvm_flags)
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr: list[bytes] = []
        self._stderr_thread: threading.Thread | None = None

    def start(self) -> MeteorProcess:
        try:
            jar = meteor_jar()
            java = java_command()
        except JavaUnavailable as exc:
            raise MeteorUnavailable(str(exc)) from None
        if not (jar.parent / "data" / "paraphrase-en.gz").is_file():
            raise MeteorUnavailable(f"Meteor's paraphrase table is missing next to {jar}")
        cmd = [*java, *self.jvm_flags, "-jar", str(jar), *METEOR_ARGS]
        try:
            self.proc = subprocess.Popen(
                cmd, cwd=str(jar.parent), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise MeteorUnavailable(f"could not start java: {exc}") from None
        self._stderr_thread = threading.Thread(target=self._drain, daemon=True)
        self._stderr_thread.start()
        return self

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            if len(self._stderr) < 200:
                self._stderr.append(line)

    def _error(self, what: str) -> MeteorUnavailable:
        tail = b"".join(self._stderr[-20:]).decode(errors="replace").strip()
        return MeteorUnavailable(f"{what}{': ' + tail[-800:] if tail else ''}")

    def stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """The jar's 23 statistics per image, shape (n, 23)."""
        if self.proc is None:
            self.start()
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        n = len(hypotheses)
        payload = "".join(score_line(h, r) + "\n" for h, r in zip(hypotheses, references, strict=False)).encode("utf-8")
        write_error: list[BaseException] = []

        def write() -> None:
            try:
                proc.stdin.write(payload)
                proc.stdin.flush()
            except (BrokenPipeError, OSError) as exc:  # the JVM died; reported below
                write_error.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out = np.empty((n, METEOR_STATS), dtype=np.float64)
        for i in range(n):
            line = proc.stdout.readline()
            if not line:
                writer.join(timeout=1)
                raise self._error(f"the Meteor JVM stopped after {i} of {n} statements")
            fields = line.split()
            if len(fields) != METEOR_STATS:
                raise self._error(f"unexpected reply from Meteor for image {i}: {line[:200]!r}")
            out[i] = [float(x) for x in fields]
        writer.join()
        return out

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.proc = None
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

    def __enter__(self) -> MeteorProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()
