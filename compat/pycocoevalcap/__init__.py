"""pycocoevalcap 1.2's public module tree on vlbench's caption metrics.

Replace `pycocoevalcap` by `vlbench.compat.pycocoevalcap` in an import and the rest of the code
runs unchanged: `COCOEvalCap(coco, cocoRes).evaluate()`, `PTBTokenizer().tokenize(...)` and each
scorer's `compute_score(gts, res)` return the same values in the same types and order, and print
the same lines. Differences: no Java for tokenization, BLEU, METEOR, ROUGE-L and CIDEr; SPICE runs
only where its CoreNLP jars are installed, and otherwise `Spice()` raises `SpiceUnavailable` and
`COCOEvalCap.evaluate()` reports every other metric with a `SpiceLeftOutWarning`.
"""
