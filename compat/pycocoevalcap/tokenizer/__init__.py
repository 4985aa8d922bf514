"""pycocoevalcap 1.2's `tokenizer` package (see `tokenizer/ptbtokenizer.py`)."""
