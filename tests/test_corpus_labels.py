"""Every labelled corpus excerpt meets its diagnosis labels: root, expect, forbid, outcome, phase.

Labels (shared/corpus/README.md): `root` is the reported root cause's name (null ↔ no root cause);
every `expect` name fires (top level or nested as a consequence); no `forbid` name fires;
`outcome` matches when the label states one; `phase` is `data.phase` of the cuda-oom finding.
Run through the public API, `logparse.engine.core.analyze`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logparse.engine.core import analyze

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
from tests.conftest import CORPUS

LABELS = sorted(CORPUS.glob("dev-*.labels.json"))


def _log_of(label: Path) -> Path:
    return label.with_name(label.name.replace(".labels.json", ".log"))


def label_problems(labels: dict[str, Any], analysis: Any) -> list[str]:
    """Every way the analysis misses its labels (empty when it meets them all)."""
    problems: list[str] = []
    root = analysis.root_cause.name if analysis.root_cause is not None else None
    if root != labels["root"]:
        problems.append(f"root: expected {labels['root']!r}, reported {root!r}")
    fired = analysis.fired()
    for name in labels["expect"]:
        if name not in fired:
            problems.append(f"expect: {name!r} did not fire")
    for name in labels["forbid"]:
        if name in fired:
            problems.append(f"forbid: {name!r} fired")
    if labels.get("outcome") is not None and analysis.outcome != labels["outcome"]:
        problems.append(f"outcome: expected {labels['outcome']!r}, reported {analysis.outcome!r}")
    if labels.get("phase") is not None:
        phases = [f.data.get("phase") for f in analysis.all_findings() if f.name == "cuda-oom"]
        if labels["phase"] not in phases:
            problems.append(
                f"phase: expected cuda-oom phase {labels['phase']!r}, reported {phases!r}"
            )
    if analysis.rule_errors:
        problems.append(f"rules raised: {analysis.rule_errors}")
    return problems


def test_corpus_labels_are_present() -> None:
    assert len(LABELS) >= 51, f"expected the 51 labelled corpus excerpts in {CORPUS}"


@pytest.mark.parametrize("label", LABELS, ids=[p.name.split(".")[0] for p in LABELS])
def test_corpus_labels(label: Path) -> None:
    labels = json.loads(label.read_text())
    analysis = analyze(str(_log_of(label)))
    problems = label_problems(labels, analysis)
    summary = [
        f"{f.name} [{f.severity}] line {f.first_line}: {f.message[:120]}"
        for f in analysis.all_findings()
    ]
    assert not problems, "\n".join(
        problems + ["findings:"] + summary + [f"outcome: {analysis.outcome}"]
    )
