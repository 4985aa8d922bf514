"""The mini ODmAP experiment's pre-registered analysis: validity gates, primary and secondary result.

Frozen before the validation run (tasks/mini/README.md): changing a threshold, a metric or a contrast here after
seeing results is a new pre-registration and must say so in the benchmark card. Every value comes
from the report that `analysis.analyse` builds: pooled values are means over seeds, differences use
the two-level bootstrap (seeds and source images), all 95% percentile intervals.

- **G1 recognition**: on control queries, in both reference arms (biased, unbiased), the top-1
  caption names a present class at least 85% of the time, and ODmAP@1 is at least 70.
- **G2 the shortcut is learned**: the biased arm's top-1 caption names the removed partner at least
  10 points more often than the unbiased arm's, with the 95% interval above 0. (It does not use
  ODmAP, the metric under test.)
- **V validity**: unbiased minus biased partner-removal ODmAP@1 is at least 10 points with the 95%
  lower bound above 0, while the control-query difference stays within +-5 points (point estimate).
- **Primary** (the mitigation): D' fine-tune minus control fine-tune, partner-removal ODmAP@1,
  difference and interval as measured, whatever its sign.
- **Secondary**: i2t R@1, D' minus control, non-inferior: the 95% lower bound at or above -2 points.

Issue 30, the specificity of the mitigation (declared 2026-11-27, in the commit before any run of
the D'-null arm; tasks/mini/README.md, amendment "issue 30"):
- **Primary (specificity)**: D' fine-tune minus D'-null fine-tune (`synthetic - synthetic-null`;
  D'-null is D' in everything but its removals, which keep each cue with its dependent),
  partner-removal ODmAP@1, pooled over 5 seeds, two-level bootstrap with the seeds of both
  fine-tunes drawn together (both start from the same biased model of each seed). Reported
  whatever it shows; read as "the co-occurrence-breaking removals add partner-removal ODmAP@1
  beyond what as many extra pairs in grouped batches give" only when the 95% interval is above 0.
- **Key secondary**: the same contrast on absent-dependent@1 on controls (`absent dependent
  named@1`: the top caption names the dependent of a cue in the query image while that dependent
  is not in it); specific when the 95% interval is below 0 (D' names it less often).
- **Reported with them** (pre-declared, descriptive, no decision rule): absent-dependent@1 and
  any-absent-dependent@1 on controls and partner queries for every arm, the contrasts
  synthetic - synthetic-null and synthetic-null - control on every metric, each with the same
  bootstrap; P(dependent | cue) in D, D' and D + D' for the D' and D'-null arms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Gate:
    name: str
    rule: str


GATES = (
    Gate("G1 recognition", "control queries, biased and unbiased arms: present@1 >= 85% and ODmAP@1 >= 70"),
    Gate("G2 shortcut learned", "partner@1 on partner removals, biased - unbiased >= +10 points, 95% lower bound > 0"),
    Gate("V validity", "ODmAP@1 on partner removals, unbiased - biased >= +10 points, 95% lower bound > 0; "
                       "on controls the difference stays within +-5 points"),
)
RECOGNITION_MIN = 0.85
CONTROL_ODMAP_MIN = 0.70
SHORTCUT_MIN = 0.10
VALIDITY_MIN = 0.10
CONTROL_TOLERANCE = 0.05
PRIMARY = ("synthetic", "control", "ODmAP@1/partner")
SECONDARY = ("synthetic", "control", "i2t_R@1")
NON_INFERIORITY_MARGIN = -0.02
# issue 30 (declared before the D'-null arm's run)
SPECIFICITY_PRIMARY = ("synthetic", "synthetic-null", "ODmAP@1/partner")
SPECIFICITY_KEY_SECONDARY = ("synthetic", "synthetic-null", "absent-dependent@1/control")
SPECIFICITY_DESCRIPTIVE = (
    ("synthetic", "synthetic-null", "absent-dependent@1/partner"),
    ("synthetic", "control", "absent-dependent@1/control"),
    ("synthetic-null", "control", "ODmAP@1/partner"),
    ("synthetic-null", "control", "absent-dependent@1/control"),
    ("synthetic", "synthetic-null", "ODmAP@1/control"),
    ("synthetic", "synthetic-null", "i2t_R@1"),
)


def _pooled(report: Mapping[str, Any], arm: str, metric: str) -> float:
    row = next(r for r in report["pooled"] if r["arm"] == arm)
    return float(row["scores"][metric])


def _difference(report: Mapping[str, Any], a: str, b: str, metric: str) -> tuple[float, list[float]]:
    """a - b pooled over seeds, with its interval; a contrast reported as b - a is negated."""
    for x, y, sign in ((a, b, 1.0), (b, a, -1.0)):
        row = next((d for d in report["differences"]
                    if d["a"] == x and d["b"] == y and d["over"] == "pooled" and d["metric"] == metric), None)
        if row is not None:
            lo, hi = row["ci95"]
            ci = [lo, hi] if sign > 0 else [-hi, -lo]
            return sign * float(row["difference"]), [float(v) for v in ci]
    raise KeyError(f"no pooled difference {a} - {b} of {metric} in the report")


def _pct(v: float) -> str:
    return f"{100 * v:.1f}"


def _signed(v: float, ci: Sequence[float]) -> str:
    return f"{100 * v:+.1f} [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def evaluate(report: Mapping[str, Any]) -> dict[str, Any]:
    """The gates (each with what was measured and pass/fail), the primary and the secondary result.
    Needs the biased and unbiased arms (gates) and the synthetic and control arms (results), and a
    report with differences (bootstrap > 0); what is missing is reported as not measured."""
    arms = {r["arm"] for r in report["pooled"]}
    gates: list[dict[str, Any]] = []
    if {"biased", "unbiased"} <= arms and report["differences"]:
        recog = {arm: _pooled(report, arm, "present@1/control") for arm in ("biased", "unbiased")}
        odmap = {arm: _pooled(report, arm, "ODmAP@1/control") for arm in ("biased", "unbiased")}
        g1 = all(v >= RECOGNITION_MIN for v in recog.values()) and all(v >= CONTROL_ODMAP_MIN for v in odmap.values())
        gates.append({"gate": GATES[0].name, "rule": GATES[0].rule, "passed": g1,
                      "measured": "present@1 " + ", ".join(f"{a} {_pct(v)}" for a, v in recog.items())
                                  + "; ODmAP@1 " + ", ".join(f"{a} {_pct(v)}" for a, v in odmap.items())})
        d, ci = _difference(report, "biased", "unbiased", "partner@1/partner")
        gates.append({"gate": GATES[1].name, "rule": GATES[1].rule, "passed": d >= SHORTCUT_MIN and ci[0] > 0,
                      "measured": f"biased - unbiased {_signed(d, ci)}", "difference": d, "ci95": ci})
        dv, civ = _difference(report, "unbiased", "biased", "ODmAP@1/partner")
        dc, cic = _difference(report, "unbiased", "biased", "ODmAP@1/control")
        gates.append({"gate": GATES[2].name, "rule": GATES[2].rule,
                      "passed": dv >= VALIDITY_MIN and civ[0] > 0 and abs(dc) <= CONTROL_TOLERANCE,
                      "measured": f"partner {_signed(dv, civ)}; control {_signed(dc, cic)}",
                      "difference": dv, "ci95": civ, "control_difference": dc, "control_ci95": cic})
    out: dict[str, Any] = {"gates": gates}
    if {"synthetic", "control"} <= arms and report["differences"]:
        d, ci = _difference(report, *PRIMARY)
        out["primary"] = {"contrast": f"{PRIMARY[0]} - {PRIMARY[1]}", "metric": PRIMARY[2], "difference": d, "ci95": ci}
        d2, ci2 = _difference(report, *SECONDARY)
        out["secondary"] = {"contrast": f"{SECONDARY[0]} - {SECONDARY[1]}", "metric": SECONDARY[2], "difference": d2,
                            "ci95": ci2, "margin": NON_INFERIORITY_MARGIN, "non_inferior": ci2[0] >= NON_INFERIORITY_MARGIN}
    if {"synthetic", "synthetic-null", "control"} <= arms and report["differences"]:
        out["specificity"] = specificity(report)
    return out


def _contrast(report: Mapping[str, Any], a: str, b: str, metric: str) -> dict[str, Any]:
    d, ci = _difference(report, a, b, metric)
    return {"contrast": f"{a} - {b}", "metric": metric, "difference": d, "ci95": ci}


def specificity(report: Mapping[str, Any]) -> dict[str, Any]:
    """Issue 30's pre-registered contrasts: the primary (interval above 0: specific), the key
    secondary (interval below 0: specific) and the descriptive ones, each as measured."""
    primary = _contrast(report, *SPECIFICITY_PRIMARY)
    primary["specific"] = primary["ci95"][0] > 0
    key = _contrast(report, *SPECIFICITY_KEY_SECONDARY)
    key["specific"] = key["ci95"][1] < 0
    return {"primary": primary, "key_secondary": key,
            "descriptive": [_contrast(report, *c) for c in SPECIFICITY_DESCRIPTIVE]}


def render(result: Mapping[str, Any], preregistered: bool) -> list[str]:
    """Markdown lines: the gates with pass/fail, then the primary and secondary results.
    `preregistered`: whether this analysis was committed before the runs it reports."""
    when = ("pre-registered" if preregistered else
            "applied after the fact: this run predates the pre-registration (issue 21)")
    lines = [f"## Validity gates ({when}; `baselines/preregistration.py`)", ""]
    if not result["gates"]:
        lines += ["Not measured (the gates need the biased and unbiased arms and bootstrap intervals).", ""]
    else:
        lines += ["| gate | rule | measured (percent; 95% two-level intervals) | result |", "|---|---|---|---|"]
        for g in result["gates"]:
            lines.append(f"| {g['gate']} | {g['rule']} | {g['measured']} | {'PASS' if g['passed'] else 'FAIL'} |")
        lines.append("")
    if "primary" in result:
        p, s = result["primary"], result["secondary"]
        declared = "declared before the run" if preregistered else "declared after this run; not a confirmatory test"
        lines += [f"## Primary result ({declared})", "",
                  f"**{p['contrast']}, {p['metric']}: {_signed(p['difference'], p['ci95'])} points** "
                  "(pooled over seeds; two-level bootstrap, seeds of both fine-tunes drawn together).", "",
                  f"Secondary, {s['metric']} non-inferiority (95% lower bound >= {100 * s['margin']:+.0f} points): "
                  f"{_signed(s['difference'], s['ci95'])}, "
                  f"{'non-inferior' if s['non_inferior'] else 'non-inferiority NOT shown'}.", ""]
    if "specificity" in result:
        sp = result["specificity"]
        p, k = sp["primary"], sp["key_secondary"]
        declared = ("declared before the run of the D'-null arm, issue 30" if preregistered
                    else "declared after this run; not a confirmatory test")
        lines += [f"## Is the mitigation specific to the co-occurrence? ({declared})", "",
                  "D'-null is D' in everything (checkpoints, seeds, steps, ratio, re-render, caption rule, grouped "
                  "batches) except its removals, which keep each cue with its dependent.", "",
                  f"**Primary: {p['contrast']}, {p['metric']}: {_signed(p['difference'], p['ci95'])} points** "
                  f"({'interval above 0: the co-occurrence-breaking removals add to it' if p['specific'] else 'interval not above 0: no gain specific to breaking the co-occurrence shown'}).",
                  "",
                  f"**Key secondary: {k['contrast']}, {k['metric']}: {_signed(k['difference'], k['ci95'])} points** "
                  f"({'interval below 0: D' + chr(39) + ' names the absent dependent less often' if k['specific'] else 'interval not below 0: no specific reduction shown'}).",
                  "", "Reported with them (pre-declared, descriptive):", ""]
        lines += [f"- {c['contrast']}, {c['metric']}: {_signed(c['difference'], c['ci95'])}" for c in sp["descriptive"]]
        lines.append("")
    return lines
