"""Which catalog messages (grammars/messages/) each kept line of a parsed log may hold: one pass of
the catalog's needle prefilter over the kept lines, kept with the log, so that the rules
(`RuleContext.messages`) and the run model (`run/verdicts.py`) share one pass."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING

from logparse.model.codes import KnownCode
from logparse.model.events import KnownMessage

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog

# Distinct kept texts whose prefilter result is remembered while indexing (bounds memory).
_CLASSIFY_MEMO = 50_000
# The server's logging of a request it received or finished (`--log-requests`: `Receive:
# obj=GenerateReqInput(text=[…])`, `Finish: obj=… out={…}`): the text is the client's prompt or
# the model's answer, never a message a program raised, so no catalog message on those lines is
# one. They are left out of the index itself (for the rules and the run model alike): on a
# long-running log with request logging they are most of the kept lines and almost every one is
# distinct (its request id, its prompt), so prefiltering them was ~15 % of the analysis.
REQUEST_DUMPS = frozenset({KnownCode.REQUEST_RECEIVED, KnownCode.REQUEST_FINISHED})


class Hits:
    """One code's candidate lines, iterated as (line, text) pairs in the index's order, kept in
    two flat columns (an array of line numbers, a list of the kept texts, shared): a tuple per
    candidate cost ~64 bytes more, ~50 MB at a 1M-line log of 800k candidate lines, at the
    analysis's peak."""

    __slots__ = ("lines", "texts")

    def __init__(self) -> None:
        self.lines: array[int] = array("q")
        self.texts: list[str] = []

    def append(self, no: int, text: str) -> None:
        self.lines.append(no)
        self.texts.append(text)

    def __iter__(self) -> Iterator[tuple[int, str]]:
        return zip(self.lines, self.texts)

    def __len__(self) -> int:
        return len(self.lines)

    def without(self, drop: set[int]) -> Hits:
        """These hits less the lines in `drop` (the same object when none is dropped)."""
        if not drop or drop.isdisjoint(self.lines):
            return self
        out = Hits()
        for no, text in self:
            if no not in drop:
                out.append(no, text)
        return out


def message_candidates(log: ParsedLog) -> dict[str, Hits]:
    """code → the kept lines (line, text) that hold one of its needles, in file order; built on
    the first ask and kept in `log.derived`."""
    cands: dict[str, Hits] | None = log.derived.get("message_candidates")
    if cands is None:
        from logparse.grammar.messages import catalog

        candidates = catalog().candidates_masked
        cands = {}
        # Failure-heavy logs repeat the same lines (every rank's traceback frames, a warning
        # per request): prefilter each distinct text once.
        memo: dict[str, tuple[str, ...]] = {}
        dumps = request_dump_lines(log)
        # Whether the kept texts came in line order (one parse does; a merged run's per-file
        # texts do not): then every code's list is sorted and `candidates_in` may bisect.
        ordered, last = True, -1
        for no, text in log.texts.items():
            if no < last:
                ordered = False
            last = no
            if no in dumps:
                continue
            codes = memo.get(text)
            if codes is None:
                if len(memo) >= _CLASSIFY_MEMO:
                    memo.clear()
                codes = memo[text] = tuple(candidates(text))
            for code in codes:
                hits = cands.get(code)
                if hits is None:
                    hits = cands[code] = Hits()
                hits.append(no, text)
        log.derived["message_candidates"] = cands
        log.derived["message_candidates_ordered"] = ordered
    return cands


def request_dump_lines(log: ParsedLog) -> set[int]:
    """The lines of the server's request dumps (`REQUEST_DUMPS`, each with its continuation lines)."""
    lines: set[int] = set()
    for m in log.shared(KnownMessage):
        if m.code in REQUEST_DUMPS:
            end = m.end_line or m.line
            if end == m.line:
                lines.add(end)
            else:
                lines.update(range(m.line, end + 1))
    return lines


def candidates_in(log: ParsedLog, code: str, start: int, end: int) -> list[tuple[int, str]]:
    """The (line, text) candidates of `code` on lines start..end, in the index's order: a slice
    by bisection when the index is in line order (a per-attempt question asked of every attempt
    used to filter the whole log's list each time: attempts x candidates), else a filter."""
    found = message_candidates(log).get(code)
    if found is None:
        return []
    if log.derived.get("message_candidates_ordered"):
        lines = found.lines
        lo = bisect_left(lines, start)
        hi = bisect_right(lines, end, lo=lo)
        return list(zip(lines[lo:hi], found.texts[lo:hi]))
    return [c for c in found if start <= c[0] <= end]


def release_candidates(log: ParsedLog) -> None:
    """Drop the index once the analysis that shares it is done: it holds a (line, text) tuple per
    candidate line (~60 MB at 1M start-up-heavy lines) and would otherwise live through rendering,
    where the peak is. A later ask builds it again."""
    log.derived.pop("message_candidates", None)
    log.derived.pop("message_candidates_ordered", None)
