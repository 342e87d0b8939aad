"""What a rule sees: the parsed log, its views, and helpers that build findings with evidence."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any, TypeVar

from logparse.model.events import Event, ExceptionLine, Severity, Traceback
from logparse.model.findings import Evidence, Finding
from logparse.model.linesets import LineSet
from logparse.model.record import Record, record
from logparse.model.text import mask_numbers
from logparse.parsing.candidates import Hits, message_candidates
from logparse.rules.registry import REGISTRY

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog
    from logparse.run.views import Views

E = TypeVar("E", bound=Event)
# Distinct kept texts whose catalog classification is remembered while indexing (bounds memory).
_CLASSIFY_MEMO = 50_000
# (code, text) pairs whose catalog match is remembered (bounds memory the same way).
_MATCH_MEMO = 100_000


def _is_frame_line(text: str) -> bool:
    """A traceback frame line (`  File "…", line N, in f`)."""
    return text.lstrip().startswith('File "')


def sglang_frames(tb: Traceback) -> list[str]:
    """`file.py:function` of the frames inside SGLang (or sgl_kernel), outermost first."""
    out = []
    for f in tb.frames:
        path = f.path.replace("\\", "/")
        if "sglang" in path or "sgl_kernel" in path or "sgl-kernel" in path:
            out.append(f"{path.rsplit('/', 1)[-1]}:{f.func or '?'}")
    return out


def traceback_fingerprint(tb: Traceback) -> str:
    """Identity of a traceback across ranks and requests: exception type, message with numbers
    masked, and the SGLang frames (paths and line numbers differ between installs and releases)."""
    etype = tb.exc_type or (tb.chain[-1][0] if tb.chain else "") or "?"
    message = mask_numbers(tb.message or (tb.chain[-1][1] if tb.chain else ""))[:200]
    return f"{etype}|{message}|{'>'.join(sglang_frames(tb))}"


@record(kw_only=False)
class Raised(Record):
    """One exception the log shows: a traceback (with each exception of its chain) or a lone
    exception line outside any traceback."""

    event: Event  # the Traceback or the ExceptionLine
    exc_type: str
    message: str
    traceback: Traceback | None

    @property
    def text(self) -> str:
        return f"{self.exc_type}: {self.message}"


@record(kw_only=False)
class MessageHit(Record):
    """One catalog message (grammars/messages/) found on a kept line: its code and typed fields."""

    code: str
    line: int
    fields: dict[str, Any]


class RuleContext:
    """What the rules of one run share. A plain class, not a dataclass: one is made per run and
    never compared or printed, and @dataclass's generated methods cost start-up."""

    def __init__(self, log: ParsedLog, views: Views, config: dict[str, Any] | None = None,
                 claimed: LineSet | None = None, findings: list[Finding] | None = None) -> None:
        self.log = log
        self.views = views
        # per-rule thresholds: {'spec-low-acceptance': {...}}
        self.config: dict[str, Any] = {} if config is None else config
        # line numbers of events a finding already explains
        # (ranges, not a set of ints: a traceback's every line is claimed, and they add up)
        self.claimed: LineSet = LineSet() if claimed is None else claimed
        # Findings of the rules that ran before (fallback rules see every specific rule's findings).
        self.findings: list[Finding] = [] if findings is None else findings

    def threshold(self, rule_name: str, key: str, default: Any) -> Any:
        """A per-rule threshold from the configuration (`[tool.logdiag.thresholds.<rule>]`), else the default."""
        return self.config.get(rule_name, {}).get(key, default)

    def launch_at(self, line: int) -> Any:
        """The launch attempt (`run.launches.Launch`) that a line belongs to: its `.flags`, `.env`
        (exported in the pasted shell + inline), `.server_args`, `.arg(name)`."""
        return self.views.run.launch_at(line)

    def unclaimed(self, events: Iterable[E]) -> list[E]:
        return [e for e in events if e.line not in self.claimed]

    # ------------------------------------------------------------------ reading helpers

    def text(self, line: int) -> str:
        """The cleaned text of a (non-hot) line, '' when not kept."""
        return self.log.texts.get(line, "")

    # ------------------------------------------------------------------ catalog messages

    def _message_candidates(self) -> dict[str, Hits]:
        """code → the kept lines (line, text) that hold one of its needles, in file order: one pass
        of the catalog's needle prefilter over the kept lines, shared with the run model — less the
        lines whose text is quoted rather than printed (`_quoted_lines`)."""
        cands: dict[str, Hits] | None = self.__dict__.get("_candidates")
        if cands is None:
            quoted = self._quoted_lines()
            cands = {code: hits.without(quoted) for code, hits in message_candidates(self.log).items()}
            self.__dict__["_candidates"] = cands
        return cands

    def _quoted_lines(self) -> set[int]:
        """Lines whose words no program printed as its own message: a pasted command as typed
        (`grep 'Watchdog timeout' server.log`, a launch command's arguments), the server's dump of
        its arguments (`server_args=ServerArgs(…)`: values, not messages); the text a person pasted
        around the log (prose between fenced blocks, inline code, a Python statement, `echo`/`grep`
        typed bare: `parsing/quoting.py`) and Python source lines. A catalog message inside them is
        quoted, not raised. (The server's dumps of the requests it received and finished are never
        candidates at all: `parsing.candidates.REQUEST_DUMPS`.)"""
        from logparse.model.events import (
            LaunchCommand,
            ServerArgs,
            ShellCommand,
            TracebackFrame,
            TracebackSource,
        )

        lines: set[int] = set()
        for e in self.log.of(ShellCommand, LaunchCommand):
            lines.update(range(e.line, (e.end_line or e.line) + 1))
        for a in self.log.of(ServerArgs):
            if a.complete:  # a whole dump: its values are configuration (a cut one may run into other text)
                lines.update(range(a.line, (a.end_line or a.line) + 1))
        # The paste's own text around the log (parsing/quoting.py), and source lines: the line under
        # a frame is the code that raised, not its message; an indented line alone is code when it
        # has a statement's shape (native reports indent their detail lines too).
        sources = self.log.of(TracebackSource)
        if self.log.unanchored or sources:
            from logparse.parsing.quoting import is_code, quoted_lines

            asked: set[int] = set()
            for found in message_candidates(self.log).values():
                asked.update(found.lines)
            if self.log.unanchored:
                lines |= quoted_lines(self.log.texts, self.log.unanchored, asked)
            asked_sources = [s.line for s in sources if s.line in asked]
            if asked_sources:
                below = {n - 1 for n in asked_sources}
                frames = {f.line for f in self.log.of(TracebackFrame) if f.line in below}
                lines.update(n for n in asked_sources if n - 1 in frames or is_code(self.text(n)))
        return lines

    def _message_hits(self, code: str) -> list[MessageHit]:
        """Every occurrence of `code` on a kept line, in file order. Only the codes rules ask for
        are matched (about half of the catalog's prefilter hits are codes no rule reads on a log);
        each code's lines are matched once, and each distinct text once per code."""
        index: dict[str, list[MessageHit]] = self.__dict__.setdefault("_messages", {})
        hits = index.get(code)
        if hits is None:
            from logparse.grammar.messages import catalog

            finditer = catalog()[code].finditer
            hits = []
            memo: dict[str, list[dict[str, Any]]] = {}
            for no, text in self._message_candidates().get(code, ()):
                found = memo.get(text)
                if found is None:
                    if len(memo) >= _CLASSIFY_MEMO:
                        memo.clear()
                    found = memo[text] = list(finditer(text))
                # Every hit gets its own copy of the fields (a rule may add to them).
                hits.extend(MessageHit(code, no, dict(fields)) for fields in found)
            index[code] = hits
        return hits

    def messages(self, code: str, *, unclaimed: bool = True) -> list[MessageHit]:
        """Every occurrence of catalog message `code` on a kept line, in file order. Claimed lines
        are skipped unless `unclaimed=False`."""
        from logparse.grammar.messages import catalog

        catalog()[code]  # an unknown code is a bug in the rule: fail loudly in tests
        hits = self._message_hits(code)
        if unclaimed:
            return [h for h in hits if h.line not in self.claimed]
        return list(hits)

    def message_lines(self, code: str, *, unclaimed: bool = True) -> list[MessageHit]:
        """One hit per kept line holding catalog message `code`, in file order, with the fields of
        all its occurrences on that line merged (the first occurrence of a field wins)."""
        out: dict[int, MessageHit] = {}
        for h in self.messages(code, unclaimed=unclaimed):
            prev = out.get(h.line)
            if prev is None:
                out[h.line] = MessageHit(code, h.line, dict(h.fields))
            else:
                for k, v in h.fields.items():
                    prev.fields.setdefault(k, v)
        return list(out.values())

    def match(self, code: str, text: str) -> dict[str, Any] | None:
        """The fields of catalog message `code` in a text the events carry (an exception message,
        a traceback's joined text), or None."""
        # Rules ask the same question many times (every rule's codes against every raised
        # exception, and ranks repeat the same exception): each (code, text) is matched once.
        memo: dict[tuple[str, str], dict[str, Any] | None] = self.__dict__.setdefault("_matched", {})
        key = (code, text)
        if key in memo:
            found = memo[key]
        else:
            from logparse.grammar.messages import catalog

            if len(memo) >= _MATCH_MEMO:
                memo.clear()
            found = memo[key] = catalog()[code].match(text)
        return None if found is None else dict(found)  # a copy: a rule may add to the fields

    def occurrences(self, code: str, text: str) -> list[dict[str, Any]]:
        """The fields of every occurrence of catalog message `code` in `text` (a line naming
        several ports or ranks), in pattern order."""
        from logparse.grammar.messages import catalog

        return list(catalog()[code].finditer(text))

    def collect(self, code: str, text: str) -> dict[str, Any] | None:
        """The fields of every wording of catalog message `code` in `text`, merged (see
        MessageSpec.collect), or None when none occurs."""
        from logparse.grammar.messages import catalog

        return catalog()[code].collect(text)

    def raised(self) -> list[Raised]:
        """Every exception the log shows, in file order: each exception of each traceback's chain
        (the final one last) and lone exception lines that are not inside an assembled traceback."""
        # Rules ask for this many times per analysis: built once per state of the events (a
        # rebuild each call, with a set of every traceback line, was ~0.3 s a call at 1M lines).
        key = (id(self.log.events), len(self.log.events))
        cached = self.__dict__.get("_raised")
        if cached is not None and cached[0] == key:
            return list(cached[1])
        out: list[Raised] = []
        tbs = self.log.of(Traceback)
        # Traceback line ranges, merged, for "is this line inside a traceback?" by bisection.
        starts: list[int] = []
        ends: list[int] = []
        for tb in tbs:
            first, last = tb.line, tb.end_line or tb.line
            if starts and first <= ends[-1] + 1 and first >= starts[-1]:
                ends[-1] = max(ends[-1], last)
            else:
                starts.append(first)
                ends.append(last)
            for etype, msg in tb.chain:
                out.append(Raised(tb, etype, msg, tb))
            if tb.exc_type:
                out.append(Raised(tb, tb.exc_type, tb.message, tb))
        order = sorted(range(len(starts)), key=starts.__getitem__)
        starts = [starts[i] for i in order]
        ends = [ends[i] for i in order]
        reach = list(accumulate(ends, max))  # furthest end among ranges starting at or before
        for e in self.log.of(ExceptionLine):
            i = bisect_right(starts, e.line) - 1
            if i < 0 or reach[i] < e.line:
                out.append(Raised(e, e.exc_type, e.message, None))
        out.sort(key=lambda r: r.event.line)
        self.__dict__["_raised"] = (key, out)
        return list(out)

    def traceback_text(self, tb: Traceback) -> str:
        """All kept text lines of a traceback record, joined (its frames, sources and messages)."""
        return "\n".join(
            self.log.texts.get(n, "") for n in range(tb.line, (tb.end_line or tb.line) + 1)
        )

    # ------------------------------------------------------------------ building findings

    def _evidence_ranges(self, e: Event) -> list[tuple[int, int]]:
        """The lines that show an event. A long traceback shows its header, its innermost frame and
        its exception line(s) — the frames in between stay in the log (and in the finding's claims)."""
        end = e.end_line or e.line
        if not isinstance(e, Traceback) or end - e.line < 10:
            return [(e.line, end)]
        texts = self.log.texts
        frames = [n for n in range(e.line, end + 1) if _is_frame_line(texts.get(n, ""))]
        if not frames:
            return [(e.line, end)]
        last = frames[-1]
        exc = next(
            (n for n in range(last + 1, end + 1) if texts.get(n, "")[:1] not in (" ", "\t", "")),
            None,
        )
        out = [
            (e.line, min(e.line + 1, end) if e.line + 1 in frames else e.line),
            (last, min(last + 1, end)),
        ]
        if exc is not None:
            out.append((exc, end))
        elif last + 2 <= end:
            out.append((last + 2, end))
        return out

    def finding(
        self,
        name: str,
        message: str,
        remedy: str,
        *,
        events: Sequence[Event] = (),
        lines: Sequence[tuple[int, int]] = (),
        data: dict[str, Any] | None = None,
        severity: Severity | None = None,
        ranks: Sequence[str] | None = None,
        fingerprint: str | None = None,
        consequence: bool = False,
        claim: bool = True,
        context: Sequence[Event] = (),
        stage: str | None = None,
    ) -> Finding:
        """A finding of rule `name` whose evidence is the line ranges of `events` (and `lines`:
        extra (first, last) ranges). Evidence texts are filled in by the engine.

        With `claim` (the default) every line of the events and ranges is marked as explained, so
        fallback rules and `unclaimed()` skip them. `context`: events shown as evidence because the
        message uses their numbers (a `Load weight end` line), without being the problem itself —
        they neither claim nor move the finding's first line."""
        rule = REGISTRY[name]
        ranges = [(e.line, e.end_line or e.line) for e in events] + list(lines)
        shown: list[tuple[int, int]] = []
        for e in [*events, *context]:
            shown.extend(self._evidence_ranges(e))
        shown += list(lines)
        evidence = [Evidence(self.log.path, a, b) for a, b in sorted(set(shown))]
        if ranks is None:
            from logparse.run.views import rank_key

            ranks = sorted({e.rank for e in events if e.rank}, key=rank_key)
        if fingerprint is None:
            tbs = [e for e in events if isinstance(e, Traceback)]
            if tbs:
                fingerprint = traceback_fingerprint(tbs[0])
        f = Finding(
            code=rule.code,
            name=rule.name,
            severity=severity or rule.severity,
            message=message,
            remedy=remedy,
            family=rule.family,
            evidence=evidence,
            ranks=list(ranks),
            data=dict(data or {}),
            first_line=min((a for a, _ in ranges), default=0),
            consequence=consequence,
            fingerprint=fingerprint,
            stage=stage,
        )
        if claim:
            claims = LineSet.of_ranges(ranges)
            f.claims = claims
            self.claimed |= claims
        return f
