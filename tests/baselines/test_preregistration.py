"""The pre-registered gates and results are read off a report as declared (thresholds, signs)."""

from __future__ import annotations

from typing import Any

import pytest

from vlbench.baselines import preregistration as pre


def report(recognition: float, control_odmap: float, shortcut: tuple[float, float, float],
           validity: tuple[float, float, float], control_diff: float) -> dict[str, Any]:
    pooled = [{"arm": arm, "scores": {"present@1/control": recognition, "ODmAP@1/control": control_odmap}}
              for arm in ("biased", "unbiased", "control", "synthetic")]

    def diff(a: str, b: str, metric: str, d: float, lo: float, hi: float) -> dict[str, Any]:
        return {"a": a, "b": b, "over": "pooled", "metric": metric, "difference": d, "ci95": [lo, hi]}

    d, lo, hi = shortcut
    v, vlo, vhi = validity
    return {"pooled": pooled, "differences": [
        # reported as unbiased - biased: the gate reads biased - unbiased (sign and interval flipped)
        diff("unbiased", "biased", "partner@1/partner", -d, -hi, -lo),
        diff("unbiased", "biased", "ODmAP@1/partner", v, vlo, vhi),
        diff("unbiased", "biased", "ODmAP@1/control", control_diff, control_diff - 0.03, control_diff + 0.03),
        diff("synthetic", "control", "ODmAP@1/partner", 0.04, 0.01, 0.07),
        diff("synthetic", "control", "i2t_R@1", -0.005, -0.025, 0.015),
    ]}


def test_every_gate_passes_when_its_rule_holds() -> None:
    out = pre.evaluate(report(0.9, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01))
    assert [g["passed"] for g in out["gates"]] == [True, True, True]
    g2 = out["gates"][1]
    assert g2["difference"] == 0.12 and g2["ci95"] == [0.05, 0.2]
    assert out["primary"]["difference"] == 0.04 and out["primary"]["ci95"] == [0.01, 0.07]
    assert out["secondary"]["non_inferior"] is False  # lower bound -2.5 points < -2


def test_each_rule_can_fail_on_its_own() -> None:
    cases = [
        (report(0.84, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01), [False, True, True]),  # recognition
        (report(0.9, 0.69, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01), [False, True, True]),  # control ODmAP
        (report(0.9, 0.75, (0.12, -0.01, 0.2), (0.11, 0.02, 0.2), 0.01), [True, False, True]),  # G2 interval
        (report(0.9, 0.75, (0.09, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01), [True, False, True]),  # G2 size
        (report(0.9, 0.75, (0.12, 0.05, 0.2), (0.09, 0.02, 0.2), 0.01), [True, True, False]),  # V size
        (report(0.9, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), -0.06), [True, True, False]),  # V controls
    ]
    for rep, expected in cases:
        assert [g["passed"] for g in pre.evaluate(rep)["gates"]] == expected


def test_render_says_whether_the_analysis_was_declared_before_the_run() -> None:
    out = pre.evaluate(report(0.9, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01))
    before = "\n".join(pre.render(out, preregistered=True))
    after = "\n".join(pre.render(out, preregistered=False))
    assert "declared before the run" in before and "PASS" in before
    assert "after the fact" in after and "not a confirmatory test" in after
    for line in before.splitlines():
        if line.startswith("| G"):
            assert line.count("|") == 5  # no stray pipe breaks the table


def with_null(primary: tuple[float, float, float], key: tuple[float, float, float]) -> dict[str, Any]:
    """The report above with issue 30's D'-null arm and its contrasts."""
    rep = report(0.9, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01)
    rep["pooled"].append({"arm": "synthetic-null", "scores": {}})
    d, lo, hi = primary
    k, klo, khi = key

    def diff(a: str, b: str, metric: str, v: float, vlo: float, vhi: float) -> dict[str, Any]:
        return {"a": a, "b": b, "over": "pooled", "metric": metric, "difference": v, "ci95": [vlo, vhi]}

    rep["differences"] += [diff("synthetic", "synthetic-null", "ODmAP@1/partner", d, lo, hi),
                           diff("synthetic", "synthetic-null", "absent-dependent@1/control", k, klo, khi)]
    for i, (a, b, metric) in enumerate(pre.SPECIFICITY_DESCRIPTIVE):
        if (a, b, metric) not in {(x["a"], x["b"], x["metric"]) for x in rep["differences"]}:
            rep["differences"].append(diff(a, b, metric, 0.001 * i, -0.01, 0.01))
    return rep


def test_issue_30_contrasts_are_the_declared_ones() -> None:
    assert pre.SPECIFICITY_PRIMARY == ("synthetic", "synthetic-null", "ODmAP@1/partner")
    assert pre.SPECIFICITY_KEY_SECONDARY == ("synthetic", "synthetic-null", "absent-dependent@1/control")
    # without the D'-null arm nothing is claimed about specificity
    assert "specificity" not in pre.evaluate(report(0.9, 0.75, (0.12, 0.05, 0.2), (0.11, 0.02, 0.2), 0.01))


@pytest.mark.parametrize(("primary", "key", "specific"), [
    ((0.05, 0.01, 0.09), (-0.10, -0.15, -0.05), (True, True)),
    ((0.05, 0.0, 0.09), (-0.10, -0.15, 0.0), (False, False)),  # an interval touching 0 shows nothing
    ((-0.05, -0.09, -0.01), (0.10, 0.05, 0.15), (False, False)),  # the other way round
    ((0.02, -0.01, 0.05), (-0.10, -0.15, -0.05), (False, True)),
])
def test_specificity_reads_each_interval_on_its_own(primary: tuple[float, float, float], key: tuple[float, float, float],
                                                    specific: tuple[bool, bool]) -> None:
    out = pre.evaluate(with_null(primary, key))["specificity"]
    assert (out["primary"]["specific"], out["key_secondary"]["specific"]) == specific
    assert out["primary"]["difference"] == primary[0] and out["primary"]["ci95"] == list(primary[1:])
    assert out["key_secondary"]["ci95"] == list(key[1:])
    assert [(c["contrast"], c["metric"]) for c in out["descriptive"]] == [
        (f"{a} - {b}", m) for a, b, m in pre.SPECIFICITY_DESCRIPTIVE]
    text = "\n".join(pre.render(pre.evaluate(with_null(primary, key)), preregistered=True))
    assert "Is the mitigation specific" in text and "declared before the run of the D'-null arm" in text
    assert f"{100 * primary[0]:+.1f} [{100 * primary[1]:+.1f}, {100 * primary[2]:+.1f}]" in text
    assert ("interval above 0" in text) is specific[0] and ("interval below 0" in text) is specific[1]
