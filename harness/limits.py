"""Bounds of the numeric options, the one place the command line and the Python API take them
from: past them a run cannot be meant (a trillion resamples would need terabytes), and a negative
count has no meaning. The size caps' defaults belong to the reader (`jsonio.DEFAULT_MAX_BYTES`,
`DEFAULT_MAX_DECOMPRESSED`)."""

from __future__ import annotations

MAX_RESAMPLES = 100_000
MAX_SEED = 2**63 - 1
MAX_FILE_BYTES = 2**40
MAX_ERRORS = 1_000_000
DEFAULT_MAX_ERRORS = 50  # problems listed in full (the rest are counted)
