"""The Python tokenizer for captions outside the fast path (`ptb_chunks`) against the CoreNLP
3.4.1 jar: on every real caption of ../shared/realdata that the fast path leaves, in
pycocoevalcap's file order (so each caption is followed by the line the jar really sees), and on
generated hard cases, and on one realistic caption per kind of hard case, which it must answer.
Chunks the module does not recognise are allowed (they go to the whole lexer, `ptb_lexer`); every
answer it does give must equal the jar's."""

from __future__ import annotations

import random

import pytest
import realdata
from conftest import needs_java
from gen import realistic_caption

from vlbench.backports import strict_zip
from vlbench.tasks.captioning.ptb import jar_tokenize, pycoco_successors
from vlbench.tasks.captioning.ptb.fast import fast_tokenize_many
from vlbench.tasks.captioning.ptb.lines import clean_line_breaks
from vlbench.tasks.captioning.ptb.rules import extended_tokenize

HARD_PIECES = [
    '"quoted"', '"the', 'end."', "(all", "cats)", "[x]", "{y}", "<unk>", "<UNK>.", "<b>", "dog!!", "dog?!",
    "field..", "wow...", "dog....", "dog.,", "dog,", "dog;", "a:b", "1:20", "5:55,", "1,000", "3.5", "1,000.50",
    "10.5%", "$5", "#1", "50%", "a&b", "&", "&amp", "a&ampm", "AT&T", "i=on", "a+b", "c++", "tub/shower", "up/",
    "1/2", "50/50", "4-way", "-bed", "a--b", "--", "---", "a_b", "3rd", "1950s", "2x4.", "mp3", "pole.a",
    "t.v.", "s.u.v", "d.c.", "U.S.", "st.", "St.", "Mr.", "inc.", "no.", "No.", "prop.", "sun.", "ark.", "Ark.",
    "n.", "L.", "I.", "x.", "The", "THE", "Now", "now", "Minow", "But", "Butter", "It", "5", "dog's", "don't",
    "can't", "Can't", "won't", "dogs'", "'one", "'red'", "'s", "o'clock", "gonna", "cannot", "wanna", "café",
    "naïve", "Über", "ÉCOLE", "Ñandú", "東京", "“quoted”", "‘single’", "dog’s", "don’t", "a–b", "—", "e-mail",
    "black-and-white", "20-year-old", "well-known.", "x-ray", "co-op", "A", "a", "dog", "man", "in", "of",
    "rotten,crap", "dressmaker;s", "it;s", "leave!!!", "Thanks.\"", "e.\"", "ave.", "blvd.", "ore.", "ky.",
    "12 345 678", "1 1/2", "$ 37 000", "9 11", "555-1234", "(555)", "road``", "up/", "Wrong?'.", '".', "''", "``",
    "blanket.cake.", "x.jpg.", "ph.d.", "St...", "I..", "70's", "o'", "6:40PM.", "?travel", ",man", "'", "-", "--.",
    "www.example.com", "http://x.org/a", "me@x.org", "😀", "a\u00a0b", "e\u0301", "\u200b", "@user", "#tag",
]


# Pieces glued around words: openers, closers and blanks of every kind the issue names (Unicode
# punctuation, brackets, quotes, curly quotes, ellipses, URLs, emoji, mixed scripts, tabs, PTB
# bracket words), so that the shapes meet each other and the look-ahead across blanks.
WORDS = ["dog", "a", "the", "man", "I", "x", "st", "Mr", "no", "U.S", "t.v", "inc", "e", "cat", "5", "70", "3.5",
         "6:40", "1,000", "café", "Über", "東京", "Москва", "ελληνικά", "gonna", "cannot", "o", "l", "black", "ma",
         "it", "don't", "dog's", "a-b", "x/y", "a&b", "AT&T", "pm", "12:30p", "The", "Now", "A", "L", "@user",
         "www.x.com", "http://x.org/a?b=1", "-LRB-", "-rsb-"]
OPENERS = ["", "", "", '"', "(", "[", "{", "'", "`", "``", "\u201c", "\u2018", "\u00ab", "-", "--", "\u2014",
           "\u2013", "?", "!", ".", "..", "...", ",", ":", ";", "\u2026", "$", "#", "@", "*", "<", "-LRB-", "\u00a0",
           "\u20ac", "\u00bf", "\u00a1", "\U0001f600", "\u200b"]
CLOSERS = ["", "", "", ".", ",", "!", "?", "?!", "!!", "..", "...", "....", ":", ";", '"', ")", "]", "}", "'",
           "\u2019", "\u201d", "\u00bb", '."', ".)", '".', "'s", "\u2019s", "n't", "'d", "-", "--", "\u2014",
           "\u2026", "%", "/", "*", ">", "\U0001f600", ".\U0001f600", "\U0001f44d\U0001f3fd", ":)", "-RRB-",
           "\u00b0", "\u00a9", "\u2764\ufe0f", "\u00a3"]
BLANKS = [" ", " ", " ", "  ", "\t", "\u00a0", " \u3000 ", " \u2003"]


def _hard_caption(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 8)):
        if rng.random() < 0.3:
            out.append(rng.choice(HARD_PIECES))
        else:
            out.append(rng.choice(OPENERS) + rng.choice(WORDS) + rng.choice(CLOSERS))
        out.append(rng.choice(BLANKS))
    return "".join(out[:-1])


# One realistic caption per kind of hard case; the Python tokenizer must answer each (and, with
# Java, answer as the jar).
CATEGORY_CAPTIONS = {
    "unicode punctuation": "A dog \u2014 brown and white \u2013 runs\u2026 \u00bfwhere? \u00a1there!",
    "brackets": "A cake (chocolate) with [candles] and {icing} on a plate.",
    "quotes": 'A sign that reads "STOP" and \'yield\' near a "Main St." corner.',
    "ellipses": "A man waiting... and waiting.... for the bus...",
    "urls": "A laptop showing http://www.example.com/page?id=5 and www.coco.org today.",
    "emoji": "A happy dog \U0001f436 on the beach \U0001f3d6\ufe0f with a ball \u26bd\ufe0f!",
    "mixed scripts": "A Tokyo street sign \u6771\u4eac next to a \u041c\u043e\u0441\u043a\u0432\u0430 caf\u00e9 sign.",
    "tabs": "A cat\tsitting on\t\ta mat.\t",
    "curly quotes": "A \u201cwelcome\u201d mat and a \u2018no parking\u2019 sign at Joe\u2019s at ten o\u2019clock.",
    "ptb bracket words": "The words -LRB- and -RRB- and -LSB- printed on a shirt.",
    "wide blanks": "Two\u00a0dogs\u3000playing in the\u2003snow.",
    "symbols": "A 20\u00b0 day, \u00a9 2014, price \u00a35 or \u20ac4, a \u2764\ufe0f sticker.",
}


def _check(captions: list[str], successors: list[str | None]) -> tuple[int, int]:
    """(checked, left to the jar); asserts equality with the jar on every checked caption."""
    ref = jar_tokenize(captions, successors)
    checked = left = 0
    for c, s, r in strict_zip(captions, successors, ref):
        mine = extended_tokenize(clean_line_breaks(c), s)
        if mine is None:
            left += 1
            continue
        checked += 1
        assert mine == r, (c, s)
    return checked, left


@needs_java
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_captions_outside_the_fast_path_equal_the_jar():
    captions, successors, total = realdata.outside_fast_path()
    checked, left = _check(captions, successors)
    # 42,657 captions; the fast path takes all but 360; this module takes all of those
    assert total == 42_657 and checked + left == len(captions)
    assert left == 0, left


@needs_java
@pytest.mark.skipif(not realdata.available(), reason="../shared/realdata is absent")
def test_real_captions_with_curly_quotes_equal_the_jar():
    """Real set C as a user with curly apostrophes and quotes would write it: 17,000 captions leave
    the fast path; all but a few are answered in Python, each as the jar ("o’clock" keeps its ’)."""
    cands, refs = realdata.pycoco_files("C")
    cands, refs = ([c.replace("'", "\u2019").replace(" a ", " \u201ca\u201d ") for c in part] for part in (cands, refs))
    flat = cands + refs
    outside = [(c, s) for c, s, t in strict_zip(flat, pycoco_successors([cands, refs]), fast_tokenize_many(flat))
               if t is None]
    checked, left = _check([c for c, _ in outside], [s for _, s in outside])
    assert len(outside) > 15_000 and left < 20, (len(outside), left)


@needs_java
def test_generated_hard_cases_equal_the_jar():
    rng = random.Random(3)
    captions = [_hard_caption(rng) for _ in range(3000)]
    # each caption followed by text of its own, as `pycoco_successors` gives it (None: a file's last
    # line; text without a final line end reaches the end of the file: one jar run each, so few)
    successors: list[str | None] = [
        None if rng.random() < 0.01 else
        rng.choice(["The dog\n", "now\n", "5 cats\n", '"x\n', "I.\n", "\u00a0The\n", "\n\nHowever it\n", c + "\n"])
        for c in captions
    ]
    checked, left = _check(captions, successors)
    assert checked > 1000, (checked, left)  # the rest (smileys, quote pairs, e-mail...) go to the jar


def _edited_caption(rng: random.Random) -> str:
    """A COCO-like caption with one or two edits a real user's file might carry."""
    c = realistic_caption(rng)
    for _ in range(rng.randint(1, 2)):
        w = c.split(" ")
        k = rng.randrange(len(w))
        edit = rng.randrange(12)
        if edit == 0:
            w[k] = rng.choice(['"{}"', "\u201c{}\u201d", "\u2018{}\u2019", "({})", "[{}]"]).format(w[k])
        elif edit == 1:
            w[-1] = w[-1].rstrip(".") + rng.choice([" \U0001f600", "\U0001f600", " \U0001f44d\U0001f3fd.", "! \u2764\ufe0f"])
        elif edit == 2:
            w[-1] = w[-1].rstrip(".") + rng.choice(["\u2026", "...", "....", "?!", "!!", ".\u201d", ".\u2019", '."'])
        elif edit == 3:
            w.insert(k, rng.choice(["\u2014", "\u2013", "-", "--", "...", "\u2026"]))
        elif edit == 4:
            w = [x.replace("'", "\u2019") for x in w]
        elif edit == 5:
            w[k] = w[k].replace("e", "\u00e9", 1).replace("a", "\u00e0", 1)
        elif edit == 6:
            w.insert(k, rng.choice(["www.example.com", "http://coco.org/x?id=5", "#selfie", "@bob", "-LRB-"]))
        elif edit == 7:
            w = ["\t".join(w)]
        elif edit == 8:
            w.insert(k, rng.choice(["\u6771\u4eac", "\u041c\u043e\u0441\u043a\u0432\u0430", "caf\u00e9"]))
        elif edit == 9:
            w.insert(k, rng.choice(["$5", "\u20ac5", "\u00a33", "50%", "20\u00b0", "\u00a9", "5:30pm", "#1", "x2"]))
        elif edit == 10:
            w[k] = w[k].upper()
        else:
            w.insert(k, rng.choice(["\u00a0", "\u3000", "\u200b"]))
        c = " ".join(w)
    return c


@needs_java
def test_edited_realistic_captions_equal_the_jar():
    """Realistic captions with a user's edits (quotes, emoji, ellipses, dashes, accents, URLs, tabs,
    other scripts, symbols, capitals, wide blanks): nearly all answered in Python, all as the jar."""
    rng = random.Random(5)
    captions = [_edited_caption(rng) for _ in range(3000)]
    checked, left = _check(captions, pycoco_successors([captions]))
    assert checked >= 0.99 * len(captions), (checked, left)


def test_every_kind_of_hard_caption_is_tokenized_in_python():
    for kind, caption in CATEGORY_CAPTIONS.items():
        assert extended_tokenize(caption, "") is not None, kind


@needs_java
def test_every_kind_of_hard_caption_equals_the_jar():
    captions = list(CATEGORY_CAPTIONS.values())
    checked, left = _check(captions, pycoco_successors([captions]))
    assert (checked, left) == (len(captions), 0)


def test_unrecognised_shapes_are_left_to_the_whole_lexer():
    for caption in ["a smile :)", "e\u0301cole", "\u00bd cup", "mail me@x.org", "file x.jpg.", "5 1/2 inches",
                    "\u201c\u201cdouble\u201d\u201d", "a ph.d. student", "c++ code"]:
        assert extended_tokenize(caption, "") is None, caption
    # answers checked against the jar (here without it)
    assert extended_tokenize('A "quoted" (word) [x] café', "") == "a quoted -lrb- word -rrb- -lsb- x -rsb- café"
    assert extended_tokenize("an emoji \U0001f600 -LRB- \u00a9\u2014ok\u2026", "") == "an emoji -lrb- \u00a9 ok"


def test_without_java_every_caption_scores(monkeypatch):
    """The install without Java: every kind of hard caption scores, METEOR included (in Python);
    so do captions of the rare shapes the chunk rules leave (the whole lexer takes them)."""
    from conftest import refs_of

    from vlbench.tasks.captioning.scoring import score_captions

    monkeypatch.setenv("VLBENCH_JAVA", "none")
    captions = list(CATEGORY_CAPTIONS.values())
    scored = score_captions(captions, refs_of([[c, "a dog on a mat"] for c in reversed(captions)]))
    assert scored.extra["tokenizer"] == {"captions": 3 * len(captions), "rare_shapes": 0, "rare_shapes_by": "python"}
    assert scored.scores["METEOR"] is not None and "METEOR" not in scored.extra.get("unavailable", {})  # in Python
    assert scored.scores["CIDEr-D"] is not None and scored.scores["BLEU-4"] is not None
    scored = score_captions(["a dog", "a smile :)"], refs_of([["a dog"], ["a smile :)"]]))
    assert scored.extra["tokenizer"] == {"captions": 4, "rare_shapes": 2, "rare_shapes_by": "python"}
    assert scored.scores["BLEU-1"] == pytest.approx(1.0, abs=1e-8)
