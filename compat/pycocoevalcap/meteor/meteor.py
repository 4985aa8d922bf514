"""pycocoevalcap 1.2's `Meteor`: Meteor 1.5 (`-l en -norm`), computed in Python statistic by
statistic as the jar computes it (`vlbench.tasks.captioning.meteor`), without Java.

pycocoevalcap starts the jar in the constructor; here the constructor opens the paraphrase index
(on a machine's first run, its build starts in a thread, so it overlaps whatever runs before
`compute_score`). `VLBENCH_METEOR=jar` runs the jar instead (same statistics)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Hashable, Mapping
from typing import Any

from vlbench.compat._captioning import MeteorProcess, meteor
from vlbench.compat.pycocoevalcap._inputs import image_lists


class Meteor:
    """`compute_score(gts, res)` -> (corpus METEOR as the jar aggregates it, [per-image METEOR]),
    Python floats, images in `gts` order. Raises `MeteorUnavailable` (a RuntimeError) where
    Meteor's data files are missing (pycocoevalcap not installed: `pip install 'vlbench[captions]'`).
    Thread-safe, as pycocoevalcap's (one lock). `close()` (or the end of a `with` block, or garbage
    collection) releases it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._process: MeteorProcess | None = None
        self._process = MeteorProcess().start()

    def compute_score(self, gts: Mapping[Hashable, Any], res: Mapping[Hashable, Any]) -> tuple[float, list[float]]:
        _, cands, refs = image_lists(gts, res, strict=False)
        with self.lock:
            if self._process is None:
                raise RuntimeError("this Meteor was closed")
            score, per_image = meteor(self._process, cands, refs)
        return score, per_image.tolist()

    def method(self) -> str:
        return "METEOR"

    def close(self) -> None:
        """Waits for a first run's paraphrase index to be written, then releases the scorer."""
        process, self._process = self._process, None
        if process is not None:
            process.close()

    def __enter__(self) -> Meteor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort, as pycocoevalcap's kills its JVM
        with contextlib.suppress(Exception):
            self.close()
