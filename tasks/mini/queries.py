"""Object-removed queries for the decorrelated task, in two matched groups.

The source images are the query pool (`build.iter_pool`: drawn like train, with the shortcut, never
shown to a model; since mini-decorrelated v2.0, not the test split). Candidate removals of each
pool image come from `tasks.decorrelated.removal` (the paper's tau rules, shared with the
decorrelated task). A removal is a **partner** removal when a removed class is the shortcut partner
of a class that stays: a model that learned "star implies ring" is drawn to captions naming the
removed ring. A **control** is a removal that takes away no partner of a remaining class. Each
partner removal is matched to one unused control from the pool whose remaining classes are exactly
the same, so the two groups differ only in what was removed; only matched pairs are used, so the
groups have equal size and the same remaining-class mix. One pool image may give several queries
(the bootstrap resamples source images for that reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vlbench.backports import strict_zip
from vlbench.tasks.decorrelated.removal import TAU1, TAU2, TAU3, Removal, candidate_removals
from vlbench.tasks.mini.scene import Scene
from vlbench.tasks.mini.world import partner_of

PARTNER = "partner"
CONTROL = "control"


@dataclass(frozen=True)
class Query:
    id: int
    scene: Scene
    removal: Removal
    group: str
    matched_to: int  # id of the query of the other group with the same remaining classes

    @property
    def file_name(self) -> str:
        return f"mini_{self.scene.image_id:06d}_no_{'_'.join(self.removal.removed_classes)}.png"

    def skip_indices(self) -> list[int]:
        removed = set(self.removal.removed_classes)
        return [i for i, o in enumerate(self.scene.objects) if o.cls in removed]


def is_partner_removal(r: Removal) -> bool:
    return any(partner_of(c) in r.removed_classes for c in r.present_classes)


def removes_dependent(r: Removal, pairs: Sequence[tuple[str, str]]) -> bool:
    """v3's partner removal: a removed class is the dependent of a cue that stays."""
    return any(cue in r.present_classes and dependent in r.removed_classes for cue, dependent in pairs)


def removes_only_free(r: Removal, pairs: Sequence[tuple[str, str]]) -> bool:
    """v3's control: every removed class is free (in no pair), so a control never takes away a cue
    or a dependent (tasks/mini/README.md, the world, item 5)."""
    paired = {c for pair in pairs for c in pair}
    return not paired & set(r.removed_classes)


def scene_objects(scene: Scene) -> list[tuple[str, tuple[float, float, float, float]]]:
    return [
        (o.cls, tuple(float(v) for v in b)) for o, b in strict_zip(scene.objects, scene.boxes)
    ]


def choose_queries(
    scenes: Sequence[Scene], tau1: float = TAU1, tau2: float = TAU2, tau3: float = TAU3, *,
    pairs: Sequence[tuple[str, str]] | None = None, directed: bool = False, one_per_image: bool = False,
) -> list[Query]:
    """Partner removals, each matched to the first unused control with the same remaining classes
    (scenes in id order, removals in class order: deterministic); unmatched ones are dropped.
    Matching is within equality classes of the remaining set, so greedy matching is maximal.

    `directed` (v3): a partner removal removes the dependent of a remaining cue (`pairs` are
    (cue, dependent)); a control removes free classes only (no cue, no dependent); other removals
    are not used. `one_per_image` (v3): an image gives at most one query, so a partner and
    its control come from two images and neither image is used again (greedy, no longer maximal)."""
    partners: list[tuple[Scene, Removal]] = []
    controls: list[tuple[Scene, Removal]] = []
    for scene in sorted(scenes, key=lambda s: s.image_id):
        objects = scene_objects(scene)
        for r in candidate_removals(objects, scene.width, scene.height, tau1, tau2, tau3):
            if directed:
                if removes_dependent(r, pairs or ()):
                    partners.append((scene, r))
                elif removes_only_free(r, pairs or ()):
                    controls.append((scene, r))
                continue
            (partners if is_partner_removal(r) else controls).append((scene, r))
    used: set[int] = set()
    used_images: set[int] = set()
    queries: list[Query] = []
    # Controls by remaining classes, in order: the first unused one of the partner's set is the
    # first unused one of the whole list with that set (a scan of the whole list was quadratic).
    by_remaining: dict[tuple[str, ...], list[int]] = {}
    for k, (_, c) in enumerate(controls):
        by_remaining.setdefault(c.present_classes, []).append(k)
    for p_scene, p in partners:
        if p_scene.image_id in used_images:
            continue
        for k in by_remaining.get(p.present_classes, []):
            c_scene, c = controls[k]
            if one_per_image and (c_scene.image_id in used_images or c_scene.image_id == p_scene.image_id):
                continue
            if k not in used:
                used.add(k)
                if one_per_image:
                    used_images.update((p_scene.image_id, c_scene.image_id))
                pid = len(queries) + 1
                queries.append(Query(pid, p_scene, p, PARTNER, pid + 1))
                queries.append(Query(pid + 1, c_scene, c, CONTROL, pid))
                break
    return queries


def manifest(
    queries: Sequence[Query],
    partner_pairs: Sequence[tuple[str, str]],
    tau1: float = TAU1,
    tau2: float = TAU2,
    tau3: float = TAU3,
    directed: bool = False,
) -> dict:
    """The removals file. Version 2 (v3 worlds): pairs are (cue, dependent), `params.directed`."""
    params: dict = {"tau1": tau1, "tau2": tau2, "tau3": tau3, "fill": "exact"}
    if directed:
        params["directed"] = True
    return {
        "format": "vlbench-mini-removals",
        "version": 2 if directed else 1,
        "params": params,
        "partner_pairs": [list(p) for p in partner_pairs],
        "queries": [
            {
                "id": q.id,
                "source_image_id": q.scene.image_id,
                "file_name": q.file_name,
                "removed_classes": list(q.removal.removed_classes),
                "present_classes": list(q.removal.present_classes),
                "removed_boxes": [list(b) for b in q.removal.removed_boxes],
                "group": q.group,
                "matched_query_id": q.matched_to,
            }
            for q in queries
        ],
    }
