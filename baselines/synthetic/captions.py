"""Captions for D': a caption with the removed classes' noun phrases deleted, or a prompt
listing the classes that remain; and which classes a text mentions."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlbench.tasks.decorrelated.removal import Removal

    from .sources import SourceImage

CAPTION_MODES = ("noun-phrase", "prompt")

# Words that end a noun phrase on its left: a phrase never extends over them.
_CONJUNCTIONS = {"and", "or", "with", "&", "while"}
_PREPOSITIONS = {
    "on", "in", "at", "near", "by", "under", "underneath", "above", "below", "behind", "beside",
    "besides", "over", "from", "of", "into", "onto", "inside", "along", "across", "around",
    "against", "to", "toward", "towards", "between", "among", "beneath", "through", "holding",
    "carrying", "riding", "eating", "watching", "using", "wearing",
}
_COMPOUND_PREPS = (
    ("on", "the", "left", "of"), ("on", "the", "right", "of"), ("to", "the", "left", "of"),
    ("to", "the", "right", "of"), ("in", "front", "of"), ("on", "top", "of"), ("next", "to"),
    ("close", "to"),
)
_OPENERS = {
    ("a", "picture", "of"), ("a", "photo", "of"), ("an", "image", "of"), ("a", "drawing", "of"),
    ("a", "simple", "drawing", "of"), ("an", "image", "showing"), ("a", "picture", "showing"),
    ("an", "image", "with"), ("a", "scene", "with"), ("there", "is"), ("there", "are"),
}
_BREAK = _CONJUNCTIONS | _PREPOSITIONS | {"is", "are", "was", "were", "there", "this", "that", "which", "who", "the"}
_DETERMINERS = {"a", "an", "the", "some", "two", "three", "four", "five", "several", "many", "his", "her", "their", "its", "one"}
_WORD = re.compile(r"[A-Za-z]+")


def _bare(word: str) -> str:
    return "".join(_WORD.findall(word.lower()))


def _find_span(bare: list[str], phrase: list[str], taken: set[int]) -> tuple[int, int] | None:
    n = len(phrase)
    for s in range(len(bare) - n + 1):
        if bare[s : s + n] == phrase and not taken.intersection(range(s, s + n)):
            return s, s + n
    return None


def remove_noun_phrases(caption: str, spans: Sequence[str], expand_left: bool) -> str:
    """`caption` without the noun phrases `spans` (each a phrase's words) and the words tying
    them to the rest: a preposition before it ("over a frisbee"), or a conjunction before or
    after it ("a dog and a cat"). With `expand_left`, a span that is only the class word grows
    over its modifiers ("two small *dogs*") up to a determiner or a phrase boundary."""
    words = caption.split()
    bare = [_bare(w) for w in words]
    drop: set[int] = set()
    for span in spans:
        target = [t for t in (_bare(w) for w in span.split()) if t]
        hit = _find_span(bare, target, drop) if target else None
        if hit is None:
            continue
        s, e = hit
        if expand_left:
            k = s
            while k > 0 and s - k < 3 and bare[k - 1] and bare[k - 1] not in _BREAK and not words[k - 1].endswith(","):
                k -= 1
                if bare[k] in _DETERMINERS:
                    break
            if k > 0 and bare[k - 1] in _DETERMINERS:
                k -= 1
            s = k
        before = s - 1
        while before >= 0 and not bare[before]:
            before -= 1
        # A phrase that opens the sentence, or follows an opener ("A picture of ..."), is not tied
        # to what comes before: the opener stays, the relation after the phrase goes.
        lead = s == 0 or tuple(bare[:s]) in _OPENERS
        tied = False
        for compound in () if lead else _COMPOUND_PREPS:
            n = len(compound)
            if s - n >= 0 and tuple(bare[s - n : s]) == compound:
                s -= n
                tied = True
                break
        if not tied and not lead and before >= 0 and bare[before] in (_CONJUNCTIONS | _PREPOSITIONS):
            s = before
            tied = True
            if bare[before] in ("and", "or"):
                # the last item of a list: "a triangle, a ball and a moon" minus moon must read
                # "a triangle and a ball", so the list's last comma takes the conjunction
                comma = next((j for j in range(before - 1, -1, -1) if j not in drop and (
                    words[j].endswith(",") or bare[j] in _CONJUNCTIONS)), None)
                if comma is not None and comma < before - 1 and words[comma].endswith(","):
                    words[comma] = f"{words[comma][:-1]} {words[before]}"
        if not tied and e < len(words):
            after = next((c for c in _COMPOUND_PREPS if tuple(bare[e : e + len(c)]) == c), None)
            if bare[e] in _CONJUNCTIONS and before >= 0 and words[before].endswith(","):
                # "a heart, a moon and an arrow" minus moon: "a heart and an arrow"
                words[before] = words[before][:-1]
            elif lead and after is not None:
                # drop the words that related it to what follows: "a dog next to a cat" -> "a cat"
                e += len(after)
            elif lead and bare[e] in (_CONJUNCTIONS | _PREPOSITIONS):
                e += 1
        drop.update(range(s, e))
    if not drop:
        return caption
    kept = [w for i, w in enumerate(words) if i not in drop]
    text = " ".join(kept)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"^[\s,;:]+|[\s,;:]+(?=[.!?]?$)", "", text)
    if text and caption[:1].isupper():
        text = text[0].upper() + text[1:]
    if caption.rstrip().endswith(".") and text and not text.endswith("."):
        text += "."
    return text


def prompt_caption(present: Sequence[str], rng: random.Random) -> str:
    """The paper's prompt alternative: 'a photo of a dog and a frisbee'."""
    names = list(present)
    rng.shuffle(names)
    listed = [f"{'an' if n[0] in 'aeiou' else 'a'} {n}" for n in names]
    body = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    return f"a photo of {body}"


def synthetic_caption(src: SourceImage, k: int, removal: Removal, mentions: Callable[[str], set[str]]) -> str | None:
    """Caption k with the removed classes' noun phrases deleted, or None when the result still
    names a removed class or names no class that remains (the pair would teach the bias)."""
    removed = set(removal.removed_classes)
    if src.phrases:
        spans = [text for text, classes in src.phrases[k] if removed.intersection(classes)]
        out = remove_noun_phrases(src.captions[k], spans, expand_left=False)
        left = {c for text, classes in src.phrases[k] if text not in spans for c in classes}
        named = (mentions(out) | left) if out else set()
    else:
        spans = [text for text, classes in _matched_spans(src.captions[k], mentions) if removed.intersection(classes)]
        out = remove_noun_phrases(src.captions[k], spans, expand_left=True)
        named = mentions(out)
    if not out or not spans or named & removed or not named & set(removal.present_classes):
        return None
    return out


def _matched_spans(caption: str, mentions: Callable[[str], set[str]]) -> list[tuple[str, set[str]]]:
    spans = getattr(mentions, "spans", None)
    return spans(caption) if spans else []


class ClassMentions:
    """Class names a text mentions, through the decorrelated task's word matcher."""

    def __init__(self, matcher: Any) -> None:
        self.matcher = matcher

    def __call__(self, text: str) -> set[str]:
        return {self.matcher.classes[i] for i in self.matcher.mentions(text)}

    def spans(self, text: str) -> list[tuple[str, set[str]]]:
        return [(words, {self.matcher.classes[i] for i in idx}) for words, idx in self.matcher.spans(text)]



def mentions_for(sources: Sequence[SourceImage]) -> ClassMentions:
    from vlbench.tasks.decorrelated.mentions import coco_matcher
    from vlbench.tasks.decorrelated.prepare import mini_matcher
    from vlbench.tasks.mini.world import CLASSES

    names = {c for s in sources for c, _ in s.objects}
    return ClassMentions(mini_matcher() if names <= set(CLASSES) else coco_matcher())
