"""Run the rules over a parsed log (specific rules, then fallbacks, then the rules that read other
findings), then decide per launch attempt: group repeats, root cause and consequences, remedies
that the attempt already applied, outcome."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from logparse.engine.analysis import Analysis, Attempt
from logparse.engine.evidence import walk
from logparse.engine.grouping import group_findings
from logparse.engine.outcome import attempt_outcome
from logparse.engine.remedies import drop_already_set
from logparse.engine.rootcause import attach_consequence_lines, nest_consequences
from logparse.model.findings import Finding
from logparse.run.model import run_of
from logparse.run.vocab import severity_rank

if TYPE_CHECKING:
    from logparse.rules.context import RuleContext


def thresholds_of(config: Any) -> dict[str, Any]:
    """Per-rule thresholds from a `Config` (its `.thresholds`) or a plain {rule: {key: value}} dict."""
    if config is None:
        return {}
    th = getattr(config, "thresholds", config)
    return dict(th) if isinstance(th, dict) else {}


def execute(analysis: Analysis, rules: Sequence[Any], config: Any = None) -> None:
    """Run the given rules (specific ones, then fallbacks), then group, decide root cause and
    outcome. `analyze_log` calls this with the whole registry."""
    from logparse.rules.context import RuleContext

    ctx = RuleContext(analysis.log, analysis.views, config=thresholds_of(config))
    raw: list[Finding] = []
    # Specific rules, then fallbacks (on what no specific rule claimed), then the rules that read
    # the other rules' findings (`needs=("findings", …)`: e.g. startup-stalled, which only speaks
    # when nothing else explains the end of the log).
    last = sorted((r for r in rules if "findings" in r.needs), key=lambda r: r.code)
    rest = [r for r in rules if "findings" not in r.needs]
    specific = sorted((r for r in rest if not r.fallback), key=lambda r: r.code)
    fallbacks = sorted((r for r in rest if r.fallback), key=lambda r: r.code)
    for group in (specific, fallbacks, last):
        for r in group:
            raw.extend(_run_one(r, ctx, analysis))
            ctx.findings = list(raw)
    finalize(analysis, raw, ctx)


def _run_one(r: Any, ctx: RuleContext, analysis: Analysis) -> list[Finding]:
    try:
        return list(r(ctx) or ())
    except Exception as err:
        if os.environ.get("LOGDIAG_DEBUG"):
            raise
        analysis.rule_errors.append(f"{r.code} {r.name}: {type(err).__name__}: {err}")
        return []


def finalize(analysis: Analysis, raw: list[Finding], ctx: RuleContext | None = None) -> None:
    """Per launch attempt: group repeats, pick the root cause, nest consequences, drop remedies the
    attempt already applied, decide the outcome. The file's root cause and outcome are the last
    attempt's; its findings list holds every attempt's (the file's root cause first)."""
    log = analysis.log
    run = run_of(log)
    buckets: list[list[Finding]] = [[] for _ in run.launches]
    for f in raw:
        buckets[run.launch_at(f.first_line).index - 1].append(f)
    attempts: list[Attempt] = []
    for lc, bucket in zip(run.lifecycles, buckets, strict=True):
        launch = lc.launch
        grouped = group_findings(bucket)
        root, top = nest_consequences(grouped, launch.first_line, launch.last_line)
        if root is not None:
            attach_consequence_lines(log, grouped, root, launch.first_line, launch.last_line)
        mine = ([root] if root is not None else []) + sorted(top, key=_order)
        for f in walk(mine):
            drop_already_set(f, launch)
        attempts.append(Attempt(launch, attempt_outcome(lc, list(walk(mine)), root), root, mine))
    final = attempts[-1]
    others = [f for a in attempts for f in a.findings if f is not final.root_cause]
    analysis.attempts = attempts
    analysis.root_cause = final.root_cause
    analysis.outcome = final.outcome
    analysis.findings = ([final.root_cause] if final.root_cause is not None else []) + sorted(others, key=_order)


def _order(f: Finding) -> tuple[int, int, str]:
    return (severity_rank(f.severity), f.first_line, f.code)
