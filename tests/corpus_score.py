"""How right logdiag is on the labeled corpus, split by where the cases come from.

Splits:
- `shared`: the development corpus in ../shared/corpus/ (or its verbatim copy in
  fixtures/corpus/shared-dev/ on a clone without ../shared/);
- `dev`: the repository's own labeled real excerpts, fixtures/corpus/dev/ (rules may be written
  against these);
- `holdout`: fixtures/corpus/holdout/, labeled the same way but never looked at while writing
  rules. Its scores are printed next to the others; its per-case misses are not printed unless
  asked for (`--reveal-holdout`), so that reading a score report does not leak them.

Scores (what the labels say, shared/corpus/README.md):
- root: the reported root cause's name equals `root` (null ↔ none), per case;
- expect: every `expect` name fired (per case), and the share of expected names that fired;
- forbidden: cases where a `forbid` name fired (must be 0);
- outcome: the outcome equals `outcome`, over cases whose label states one;
- facts: labeled fact keys reproduced by `analysis.views.facts()` (what `analyze --format json`
  prints), per key;
- recognized: recognized lines / all lines, summed over the split's files; the unrecognized
  lines are grouped into templates (`parsing/coverage.py`) and the top ones printed.

Run: `python -m tests.corpus_score [--split dev] [--misses] [--top 20]`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIXTURE_CORPUS = REPO / "fixtures" / "corpus"
_SHARED = REPO.parent / "shared" / "corpus"
SHARED_CORPUS = _SHARED if _SHARED.is_dir() else FIXTURE_CORPUS / "shared-dev"
SPLITS: dict[str, Path] = {
    "shared": SHARED_CORPUS,
    "dev": FIXTURE_CORPUS / "dev",
    "holdout": FIXTURE_CORPUS / "holdout",
}
# Cases of `shared` or `dev` allowed to miss their labels, each with the reason; a listed case
# that meets its labels fails the test until it is taken off the list.
KNOWN_MISSES = FIXTURE_CORPUS / "known-misses.json"
LABEL_FIELDS = ("root", "expect", "forbid", "outcome", "phase", "facts", "rules")


@dataclass(frozen=True)
class Case:
    name: str
    split: str
    log: Path
    labels: dict[str, Any]
    source: dict[str, Any] | None


@dataclass
class CaseResult:
    case: Case
    problems: dict[str, list[str]] = field(default_factory=dict)
    root_ok: bool = True
    expect_ok: bool = True
    expect_hit: int = 0
    expect_total: int = 0
    forbidden: list[str] = field(default_factory=list)
    outcome_ok: bool | None = None  # None: the label states no outcome
    facts_ok: int = 0
    facts_total: int = 0
    lines_total: int = 0
    lines_recognized: int = 0
    unrecognized: Counter[str] = field(default_factory=Counter)
    reported_facts: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(self.problems.values())

    def describe(self) -> list[str]:
        return [f"{key}: {p}" for key in LABEL_FIELDS for p in self.problems.get(key, [])]


def cases(splits: Iterable[str] = SPLITS) -> list[Case]:
    """Every labeled case of the given splits, in name order."""
    out: list[Case] = []
    for split in splits:
        folder = SPLITS[split]
        for label in sorted(folder.glob("*.labels.json")):
            name = label.name.removesuffix(".labels.json")
            source = label.with_name(f"{name}.source.json")
            out.append(Case(
                name=name,
                split=split,
                log=label.with_name(f"{name}.log"),
                labels=json.loads(label.read_text(encoding="utf-8")),
                source=json.loads(source.read_text(encoding="utf-8")) if source.is_file() else None,
            ))
    return out


def known_misses() -> dict[str, str]:
    """`split/name` → why that case is allowed to miss its labels for now."""
    if not KNOWN_MISSES.is_file():
        return {}
    data: dict[str, str] = json.loads(KNOWN_MISSES.read_text(encoding="utf-8"))
    return data


def same(expected: Any, actual: Any, where: str) -> list[str]:
    """Differences between a labeled value and the reported one (floats with a tight tolerance)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected a dict {expected!r}, got {actual!r}"]
        out: list[str] = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{where}.{k}: missing (expected {v!r})")
            else:
                out.extend(same(v, actual[k], f"{where}.{k}"))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in same(e, a, f"{where}[{i}]")]
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
        close = math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9)
        return [] if close else [f"{where}: expected {expected!r}, got {actual!r}"]
    return [f"{where}: expected {expected!r}, got {actual!r}"]


def score_case(case: Case) -> CaseResult:
    """Analyze one case's log and compare every label field with what was reported."""
    from logparse.engine.core import analyze

    labels = case.labels
    analysis = analyze(str(case.log))
    result = CaseResult(case=case)
    problems = result.problems

    root = analysis.root_cause.name if analysis.root_cause is not None else None
    if root != labels.get("root"):
        result.root_ok = False
        problems["root"] = [f"expected {labels.get('root')!r}, reported {root!r}"]

    fired = analysis.fired()
    expect = list(labels.get("expect", []))
    missed = [name for name in expect if name not in fired]
    result.expect_total, result.expect_hit = len(expect), len(expect) - len(missed)
    result.expect_ok = not missed
    if missed:
        problems["expect"] = [f"{name!r} did not fire" for name in missed]

    result.forbidden = [name for name in labels.get("forbid", []) if name in fired]
    if result.forbidden:
        problems["forbid"] = [f"{name!r} fired" for name in result.forbidden]

    if labels.get("outcome") is not None:
        result.outcome_ok = analysis.outcome == labels["outcome"]
        if not result.outcome_ok:
            problems["outcome"] = [f"expected {labels['outcome']!r}, reported {analysis.outcome!r}"]

    if labels.get("phase") is not None:
        phases = [f.data.get("phase") for f in analysis.all_findings() if f.name == "cuda-oom"]
        if labels["phase"] not in phases:
            problems["phase"] = [f"expected cuda-oom phase {labels['phase']!r}, reported {phases!r}"]

    # Facts as `analyze --format json` prints them (a JSON round trip of the same owner).
    reported = result.reported_facts = json.loads(json.dumps(analysis.views.facts(), default=str))
    for key, value in labels.get("facts", {}).items():
        result.facts_total += 1
        diffs = same(value, reported[key], f"facts.{key}") if key in reported else [
            f"facts.{key}: missing (expected {value!r})"]
        if diffs:
            problems.setdefault("facts", []).extend(diffs)
        else:
            result.facts_ok += 1

    if analysis.rule_errors:
        problems["rules"] = [f"rules raised: {analysis.rule_errors}"]

    cov = analysis.log.coverage
    result.lines_total, result.lines_recognized = cov.total, cov.recognized
    result.unrecognized = Counter(cov.templates)
    return result


@cache
def _scored(name: str, split: str) -> CaseResult:
    by_key = {(c.name, c.split): c for c in cases([split])}
    return score_case(by_key[(name, split)])


def scored(case: Case) -> CaseResult:
    """`score_case`, computed once per process (the label and facts tests share one analysis)."""
    return _scored(case.name, case.split)


@dataclass
class Score:
    """The scores of a group of cases."""

    split: str
    results: list[CaseResult]

    def _share(self, hits: int, total: int) -> float:
        return hits / total if total else 1.0

    @property
    def n(self) -> int:
        return len(self.results)

    @property
    def root(self) -> float:
        return self._share(sum(r.root_ok for r in self.results), self.n)

    @property
    def expect(self) -> float:
        return self._share(sum(r.expect_ok for r in self.results), self.n)

    @property
    def expect_names(self) -> float:
        return self._share(sum(r.expect_hit for r in self.results), sum(r.expect_total for r in self.results))

    @property
    def forbidden(self) -> int:
        return sum(len(r.forbidden) for r in self.results)

    @property
    def outcome(self) -> float:
        stated = [r for r in self.results if r.outcome_ok is not None]
        return self._share(sum(bool(r.outcome_ok) for r in stated), len(stated))

    @property
    def facts(self) -> float:
        return self._share(sum(r.facts_ok for r in self.results), sum(r.facts_total for r in self.results))

    @property
    def recognized(self) -> float:
        return self._share(sum(r.lines_recognized for r in self.results), sum(r.lines_total for r in self.results))

    @property
    def all_labels(self) -> float:
        return self._share(sum(r.ok for r in self.results), self.n)

    def unrecognized(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for r in self.results:
            total.update(r.unrecognized)
        return total

    def row(self) -> dict[str, Any]:
        return {
            "split": self.split, "cases": self.n, "all_labels": self.all_labels, "root": self.root,
            "expect": self.expect, "expect_names": self.expect_names, "forbidden": self.forbidden,
            "outcome": self.outcome, "facts": self.facts, "recognized": self.recognized,
            "lines": sum(r.lines_total for r in self.results),
        }


HEADER = "| split | cases | all labels | root | expect | expected names | forbidden | outcome | facts | recognized lines |"


def table(scores: Sequence[Score]) -> str:
    """The scores as a Markdown table (shares in per cent)."""
    rows = [HEADER, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in scores:
        rows.append(
            f"| {s.split} | {s.n} | {s.all_labels:.1%} | {s.root:.1%} | {s.expect:.1%} | {s.expect_names:.1%} "
            f"| {s.forbidden} | {s.outcome:.1%} | {s.facts:.1%} | {s.recognized:.2%} |")
    return "\n".join(rows)


def score_splits(splits: Iterable[str]) -> list[Score]:
    """One Score per split, plus `all` over them when there is more than one."""
    scores = [Score(split, [scored(c) for c in cases([split])]) for split in splits]
    scores = [s for s in scores if s.n]
    if len(scores) > 1:
        scores.append(Score("all", [r for s in scores for r in s.results]))
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.corpus_score", description=__doc__.split("\n")[0])
    parser.add_argument("--split", action="append", choices=list(SPLITS), help="default: all splits")
    parser.add_argument("--misses", action="store_true", help="print every miss of the shared and dev cases")
    parser.add_argument("--reveal-holdout", action="store_true", help="also print the holdout cases' misses")
    parser.add_argument("--top", type=int, default=15, help="unrecognized templates to print (default 15)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    scores = score_splits(args.split or list(SPLITS))
    if args.json:
        print(json.dumps([s.row() for s in scores], indent=2))
        return 0
    print(table(scores))
    shown = [s for s in scores if s.split != "all" and (s.split != "holdout" or args.reveal_holdout)]
    if args.misses:
        for s in shown:
            for r in s.results:
                if not r.ok:
                    print(f"\n{s.split}/{r.case.name}:")
                    for line in r.describe():
                        print(f"  {line}")
    for s in shown:
        top = s.unrecognized().most_common(args.top)
        if top:
            print(f"\ntop unrecognized templates ({s.split}):")
            for template, count in top:
                print(f"  {count:6d}  {template}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
