"""Which catalog messages (grammars/messages/) each kept line of a parsed log may hold: one pass of
the catalog's needle prefilter over the kept lines, kept with the log, so that the rules
(`RuleContext.messages`) and the run model (`run/verdicts.py`) share one pass."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# Distinct kept texts whose prefilter result is remembered while indexing (bounds memory).
_CLASSIFY_MEMO = 50_000


def message_candidates(log: ParsedLog) -> dict[str, list[tuple[int, str]]]:
    """code → the kept lines (line, text) that hold one of its needles, in file order; built on
    the first ask and kept in `log.derived`."""
    cands: dict[str, list[tuple[int, str]]] | None = log.derived.get("message_candidates")
    if cands is None:
        from logparse.grammar.messages import catalog

        candidates = catalog().candidates_masked
        cands = {}
        # Failure-heavy logs repeat the same lines (every rank's traceback frames, a warning
        # per request): prefilter each distinct text once.
        memo: dict[str, tuple[str, ...]] = {}
        # Whether the kept texts came in line order (one parse does; a merged run's per-file
        # texts do not): then every code's list is sorted and `candidates_in` may bisect.
        ordered, last = True, -1
        for no, text in log.texts.items():
            if no < last:
                ordered = False
            last = no
            codes = memo.get(text)
            if codes is None:
                if len(memo) >= _CLASSIFY_MEMO:
                    memo.clear()
                codes = memo[text] = tuple(candidates(text))
            for code in codes:
                cands.setdefault(code, []).append((no, text))
        log.derived["message_candidates"] = cands
        log.derived["message_candidates_ordered"] = ordered
    return cands


def candidates_in(log: ParsedLog, code: str, start: int, end: int) -> list[tuple[int, str]]:
    """The (line, text) candidates of `code` on lines start..end, in the index's order: a slice
    by bisection when the index is in line order (a per-attempt question asked of every attempt
    used to filter the whole log's list each time: attempts x candidates), else a filter."""
    found = message_candidates(log).get(code, [])
    if log.derived.get("message_candidates_ordered"):
        lo = bisect_left(found, start, key=lambda c: c[0])
        return found[lo:bisect_right(found, end, lo=lo, key=lambda c: c[0])]
    return [c for c in found if start <= c[0] <= end]


def release_candidates(log: ParsedLog) -> None:
    """Drop the index once the analysis that shares it is done: it holds a (line, text) tuple per
    candidate line (~60 MB at 1M start-up-heavy lines) and would otherwise live through rendering,
    where the peak is. A later ask builds it again."""
    log.derived.pop("message_candidates", None)
    log.derived.pop("message_candidates_ordered", None)
