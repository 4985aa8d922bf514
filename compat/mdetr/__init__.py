"""MDETR's Flickr30k Entities evaluator on vlbench's grounding code: replace
`from datasets.flickr_eval import FlickrEvaluator` by
`from vlbench.compat.mdetr import FlickrEvaluator` (see `flickr_eval.py`)."""

from vlbench.compat.mdetr.flickr_eval import Flickr30kEntitiesRecallEvaluator, FlickrEvaluator

__all__ = ["FlickrEvaluator", "Flickr30kEntitiesRecallEvaluator"]
