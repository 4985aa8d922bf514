"""Which removals D' may use, and what its pairs do to a co-occurrence.

Two rules (`RecipeConfig.synthetic_removals`):
- `all` (the paper's D'): every removal the decorrelated task's tau rules allow, one candidate per
  target class (`candidate_removals`).
- `keep-cooccurrence` (the mini experiment's "D'-null" arm, issue 30): only removals that keep
  each (cue, dependent) pair's co-occurrence: the removed classes are free classes (in no pair),
  or a cue removed together with its dependent. A cue or a dependent is never removed alone, so
  no pair of this D' shows a cue without its dependent (or a dependent without its cue) that its
  source image did not show already, and P(dependent | cue) in the training data stays at the
  biased world's value. Besides the tau rules' candidates that pass, each (cue, dependent) pair
  of the image gives the joint removal of both (`plan_joint_removal`: the same tau rules, B_r the
  union of both classes' boxes), which one-target candidates rarely produce.

- `breaking:F` (the mini experiment's exploratory dose-response, issue 30): a share F (0 < F < 1)
  of D''s pairs are counterexamples, drawn only from removals that break a pair (a cue or a
  dependent removed alone), and the rest are drawn as `keep-cooccurrence` draws them
  (`rule_parts`; `build.plan` draws the two parts).

`p_dependent_given_cue` measures the co-occurrence in a list of images' class sets (one entry
per training pair), so D, D' and D + D' can be reported side by side.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from vlbench.errors import UsageError
from vlbench.tasks.decorrelated.removal import (
    TAU1,
    TAU2,
    TAU3,
    Removal,
    candidate_removals,
    plan_joint_removal,
)

ALL = "all"
KEEP_COOCCURRENCE = "keep-cooccurrence"
BREAKING = "breaking"  # `breaking:F`; alone (as a part of a rule), only the removals that break a pair
REMOVAL_RULES = (ALL, KEEP_COOCCURRENCE, f"{BREAKING}:F (0 < F < 1)")

Pairs = Sequence[tuple[str, str]]


def rule_parts(rule: str) -> list[tuple[str, float]]:
    """The parts D' is drawn in, each (removal rule, share of the pairs): `all` and
    `keep-cooccurrence` are one part; `breaking:F` is keep-cooccurrence for 1 - F and the breaking
    removals for F. A rule that is none of these is a usage error."""
    if rule in (ALL, KEEP_COOCCURRENCE):
        return [(rule, 1.0)]
    name, _, value = rule.partition(":")
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if name != BREAKING or not 0 < share < 1:
        raise UsageError(f"synthetic removals {rule!r}: one of {', '.join(REMOVAL_RULES)}")
    return [(KEEP_COOCCURRENCE, 1 - share), (BREAKING, share)]


def keeps_cooccurrence(removed: Collection[str], pairs: Pairs) -> bool:
    """Whether a removal takes each pair out whole or not at all: every removed class is free,
    or is a cue or dependent whose pair member is removed with it."""
    return all((cue in removed) == (dependent in removed) for cue, dependent in pairs)


def allowed_removals(objects: Sequence[tuple[str, Any]], width: int, height: int, rule: str, pairs: Pairs,
                     tau: tuple[float, float, float] = (TAU1, TAU2, TAU3)) -> list[Removal]:
    """The removals of one image that `rule` allows, in a fixed order (the tau rules' candidates,
    then the joint removals of pairs that none of them already is)."""
    removals = candidate_removals(objects, width, height, *tau)
    if rule == ALL:
        return removals
    if rule == BREAKING:
        return [r for r in removals if not keeps_cooccurrence(r.removed_classes, pairs)]
    if rule != KEEP_COOCCURRENCE:
        raise UsageError(f"synthetic removals {rule!r}: one of {', '.join(REMOVAL_RULES)}")
    kept = [r for r in removals if keeps_cooccurrence(r.removed_classes, pairs)]
    seen = {r.removed_classes for r in kept}
    classes = {c for c, _ in objects}
    for cue, dependent in pairs:
        if cue in classes and dependent in classes:
            joint = plan_joint_removal(objects, width, height, (cue, dependent), *tau)
            if joint is not None and joint.removed_classes not in seen and keeps_cooccurrence(joint.removed_classes, pairs):
                seen.add(joint.removed_classes)
                kept.append(joint)
    return kept


def p_dependent_given_cue(class_sets: Iterable[Collection[str]], pairs: Pairs) -> dict[str, Any]:
    """P(dependent present | cue present), pooled over the pairs: of the (image, cue) occurrences,
    the share whose image also shows that cue's dependent; over all images, and over images with
    two or more classes (where the world's coin decides). One entry per training pair."""
    counts = {"all": [0, 0], "two_or_more_classes": [0, 0]}
    for classes in class_sets:
        present = set(classes)
        for cue, dependent in pairs:
            if cue not in present:
                continue
            hit = int(dependent in present)
            for key in ("all", "two_or_more_classes") if len(present) >= 2 else ("all",):
                counts[key][0] += 1
                counts[key][1] += hit
    return {key: {"cue_occurrences": n, "with_dependent": k, "p": k / n if n else None}
            for key, (n, k) in counts.items()}
