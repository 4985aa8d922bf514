"""Baseline recipes that regenerate reference submissions (open_clip, diffusers)."""
