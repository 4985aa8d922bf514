"""pycocoevalcap 1.2's `cider` package (see `cider/cider.py`)."""
