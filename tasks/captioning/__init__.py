"""Caption scoring: the COCO caption metrics of pycocoevalcap, faster and line-safe.

See README.md in this folder (the metric card); HACKING.md shows the modules and walks one caption
through them. Entry points, each equal to pycocoevalcap's piece:
- `ptb.tokenize(captions, successors)`: PTB tokenization as its jar (no Java);
- `corpus.Corpus.build(candidates, references)`, then `bleu.bleu_stats` with `bleu.corpus_bleu` /
  `bleu.bleu_from_stats`, `cider.cider_scores`, `rouge.rouge_l`;
- `meteor.segment_statistics(hypotheses, references)` (or `meteor.MeteorProcess`), then
  `meteor.meteor_from_stats` / `meteor.meteor_aggregate`;
- `spice.spice_status()` / `spice.run_spice` (only where CoreNLP is installed);
- `scoring.score_captions`: all of them, as `vlbench score` runs them.
Importing this package reads the benchmark records only."""

from vlbench.registry import lazy_exports
from vlbench.tasks.captioning.benchmarks import BENCHMARKS

# the task type, imported when one of its benchmarks is first used (vlbench.registry)
TASK_MODULE = "vlbench.tasks.captioning.task"
__getattr__ = lazy_exports(TASK_MODULE, "CaptioningTask")

__all__ = ["TASK", "BENCHMARKS"]
