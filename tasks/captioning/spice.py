"""SPICE: detected, never faked.

SPICE 1.0 needs, next to `spice-1.0.jar`, the CoreNLP 3.6.0 jars in `lib/`
(`stanford-corenlp-3.6.0.jar`, `stanford-corenlp-3.6.0-models.jar`), which pycocoevalcap downloads
at first use (384 MB from the Stanford site) and which no package registry offers. When they are
there, vlbench runs the jar as pycocoevalcap does (`-subset -silent`, `-Xmx8G`, a cache folder),
with the `--add-opens` flags that Java 17 needs for the cache's FST serializer. Otherwise SPICE is
reported as unavailable, with the reason.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vlbench.tasks.captioning.java import JavaUnavailable, java_command, spice_jar

CORENLP_JARS = ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar")
ADD_OPENS = [
    f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
    for pkg in ("java.lang", "java.util", "java.math", "java.util.concurrent", "java.net", "java.text")
]


def spice_status() -> tuple[Path | None, str]:
    """(jar, "") when SPICE can run; (None, reason) otherwise."""
    try:
        jar = spice_jar()
        java_command()
    except JavaUnavailable as exc:
        return None, str(exc)
    missing = [name for name in CORENLP_JARS if not (jar.parent / "lib" / name).is_file()]
    if missing:
        return None, (
            # the folder is named relative to the package: the reason goes into published results,
            # which must not depend on where vlbench is installed
            f"SPICE needs {' and '.join(missing)} in pycocoevalcap's spice/lib folder (CoreNLP 3.6.0, "
            "downloaded by pycocoevalcap from the Stanford site, not on any package registry)"
        )
    return jar, ""


def run_spice(jar: Path, ids: Sequence[object], cands: Sequence[str], refs: Sequence[Sequence[str]],
              timeout: float | None = None) -> np.ndarray:
    """Per-image SPICE F-scores (All.f; NaN where the jar gives none), in the order of `ids`."""
    payload = [
        {"image_id": i, "test": c, "refs": list(r)} for i, c, r in zip(ids, cands, refs)
    ]
    with tempfile.TemporaryDirectory(prefix="vlbench-spice-") as tmp:
        src, out, cache = Path(tmp) / "in.json", Path(tmp) / "out.json", Path(tmp) / "cache"
        cache.mkdir()
        src.write_text(json.dumps(payload), encoding="utf-8")
        cmd = [*java_command(), *ADD_OPENS, "-Xmx8G", "-jar", str(jar), str(src), "-cache", str(cache),
               "-out", str(out), "-subset", "-silent"]
        proc = subprocess.run(cmd, cwd=str(jar.parent), capture_output=True, timeout=timeout, check=False)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"SPICE failed (exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-800:]}")
        results = json.loads(out.read_text(encoding="utf-8"))
    by_id = {str(r["image_id"]): r for r in results}
    scores = np.full(len(ids), np.nan)
    for k, i in enumerate(ids):
        r = by_id.get(str(i))
        if r is not None:
            f = r.get("scores", {}).get("All", {}).get("f")
            scores[k] = float(f) if f is not None else np.nan
    return scores
