from __future__ import annotations

import json

import numpy as np

from vlbench.tasks.grounding.loaders import build_ground_truth, ground_truth_from_doc


def test_ground_truth_filtering_as_mdetr(hand_tree):
    doc = json.loads(json.dumps(build_ground_truth(hand_tree, "test")))
    gt = ground_truth_from_doc(doc)
    assert gt.n_phrases == 7
    # Sentence 1 of image 100 (notvisual + box-less scene chain) and the phrase-less caption of
    # image 200 are dropped; chain 1 appears twice in sentence 2.
    assert {k: sorted(v) for k, v in gt.lookup["100"].items()} == {
        "0": ["0", "4"], "2": ["0", "3", "6", "9"]
    }
    assert list(gt.lookup["200"]) == ["0"]
    assert gt.n_sentences_scored == 3
    assert gt.ungradable["100"] == {"0": {"7"}, "1": {"0", "3"}}
    assert gt.n_sentences == [3, 2]
    chain1 = gt.chain_ids.index("1")
    np.testing.assert_array_equal(gt.merged[chain1], [10, 10, 140, 50])
    multi = gt.lookup["100"]["0"]["4"]
    assert gt.p_types[multi] == ["animals", "other"]
    assert gt.type_member[multi].sum() == 2
