"""pycocoevalcap 1.2's `spice` package (see `spice/spice.py`)."""
