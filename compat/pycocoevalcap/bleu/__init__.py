"""pycocoevalcap 1.2's `bleu` package (see `bleu/bleu.py`)."""
