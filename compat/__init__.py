"""Drop-in replacements for the evaluation libraries other code already calls, on vlbench's
scoring code: switching is a one-line import change.

- `vlbench.compat.pycocoevalcap`: pycocoevalcap 1.2's module tree (`eval.COCOEvalCap`,
  `tokenizer.ptbtokenizer.PTBTokenizer`, `bleu.bleu.Bleu`, `meteor.meteor.Meteor`,
  `rouge.rouge.Rouge`, `cider.cider.Cider`, `spice.spice.Spice`): the same classes, calls, return
  types and printed lines, the same numbers, no Java except for SPICE.
- `vlbench.compat.mdetr`: MDETR's `FlickrEvaluator` (`datasets/flickr_eval.py`) for Flickr30k
  Entities phrase grounding.

Nothing is imported here: each drop-in loads only what it needs. The engine (`vlbench`) never
imports this package (tests/harness/test_layering.py).
"""
