"""One comparison: a baseline and its candidates, the declared factors, each candidate's verdict,
metrics and speculative gain. Entry point of the `compare` layer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logparse.compare.factors import Factor, key_of, resolve
from logparse.compare.metrics import Metric, compare_metrics, speculative_gain
from logparse.compare.settings import RunSettings
from logparse.compare.verdict import Verdict, decide

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


@dataclass
class Pair:
    """The baseline against one candidate."""

    candidate: RunSettings
    verdict: Verdict
    metrics: list[Metric] = field(default_factory=list)
    speculative: dict[str, Any] | None = None


@dataclass
class Comparison:
    """Baseline vs every candidate, under the declared factors."""

    baseline: RunSettings
    pairs: list[Pair]
    factors: list[Factor]
    allow: list[str]

    @property
    def comparable(self) -> bool:
        return all(p.verdict.comparable for p in self.pairs)

    def as_dict(self) -> dict[str, Any]:
        """The JSON document (keys: comparable, differences, unknown, factors, metrics, …)."""
        one = len(self.pairs) == 1
        return {
            "comparable": self.comparable,
            "baseline": self.baseline.source,
            "candidates": [p.candidate.source for p in self.pairs],
            "factors": [{"name": f.name, "covers": f.note} for f in self.factors],
            "allow": list(self.allow),
            "differences": [dict(d.as_dict(), candidate_source=p.candidate.source)
                            for p in self.pairs for d in p.verdict.differences],
            "unknown": [dict(u.as_dict(), candidate_source=p.candidate.source)
                        for p in self.pairs for u in p.verdict.unknown],
            "notes": sorted({n for p in self.pairs for n in p.verdict.notes}),
            "metrics": [m.as_dict() for p in self.pairs for m in p.metrics],
            "speculative": (self.pairs[0].speculative if one else
                            [dict(p.speculative or {}, candidate_source=p.candidate.source) for p in self.pairs]),
            "verdicts": [{"candidate": p.candidate.source, "comparable": p.verdict.comparable} for p in self.pairs],
        }


def compare_runs(baseline: RunSettings, candidates: Sequence[RunSettings], vary: Sequence[str] = (),
                 allow: Sequence[str] = ()) -> Comparison:
    """Compare; FactorError for a --vary / --allow name that is not one."""
    factors = resolve(vary)
    allowed = [key_of(a) for a in allow]
    pairs = []
    for cand in candidates:
        verdict = decide(baseline, cand, factors, allowed)
        metrics = compare_metrics(baseline, cand) if verdict.comparable else []
        spec = speculative_gain(baseline, cand, metrics) if verdict.comparable else None
        pairs.append(Pair(cand, verdict, metrics, spec))
    return Comparison(baseline, pairs, factors, allowed)


def verdict_summary(baseline: ParsedLog, candidate: ParsedLog, vary: Sequence[str] = ("speculative",),
                    baseline_source: str | None = None, source: str | None = None) -> dict[str, Any]:
    """The verdict of a candidate log against a baseline log, for a report's top: comparable,
    the headline, every difference and unknown as `key: baseline → candidate` text."""
    from logparse.compare.render import difference_text, headline, value_text
    from logparse.compare.settings import of_log

    cmp = compare_runs(of_log(baseline, "baseline", baseline_source), [of_log(candidate, "candidate", source)], vary)
    v = cmp.pairs[0].verdict
    return {
        "comparable": cmp.comparable,
        "headline": headline(cmp),
        "factors": [f.name for f in cmp.factors],
        "blocking": [difference_text(d) for d in v.blocking],
        "expected": [difference_text(d) for d in v.differences if d.expected],
        "unknown": [u.reason if u.stated_in == "neither" else f"{u.key} = {value_text(u.value)}: {u.reason}"
                    for u in v.unknown if u.kind != "release"],
        "notes": list(v.notes),
        "speculative": cmp.pairs[0].speculative,
    }
