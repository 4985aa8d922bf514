"""vlbench-mini: the procedurally generated benchmark bundled with vlbench (no download)."""
