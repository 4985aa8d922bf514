"""pycocoevalcap 1.2's `meteor` package (see `meteor/meteor.py`)."""
