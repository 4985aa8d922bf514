"""pycocoevalcap 1.2's `rouge` package (see `rouge/rouge.py`)."""
