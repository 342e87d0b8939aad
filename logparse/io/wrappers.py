"""Wrapper prefixes: recognise and strip what docker-compose, Ray, k8s, log shippers and other
loggers put before a line, keeping what they said (`Wrapper`)."""

from __future__ import annotations

import re

from logparse.model.lazyre import lazy_compile
from logparse.model.numbers import to_int
from logparse.model.record import Record, record

__all__ = ["Unwrapper", "Wrapper", "bracketed_wrappers", "foreign_logger"]


@record(kw_only=False)
class Wrapper(Record):
    """What a log-capturing tool (docker-compose, Ray, k8s, a log shipper, another logger) said
    in the prefix it put before the line. For nested prefixes the innermost statement of each
    field wins (it is the most specific about the writing process)."""

    kind: str
    ts: str | None
    container: str | None
    pid: int | None
    actor: str | None
    ip: str | None
    level: str | None
    logger: str | None
    stream: str


# Logger names that say nothing about the program: the root logger, a script run as `__main__`
# (`python -m sglang.launch_server` is one), a capture of printed output (FastChat's `stdout`).
_ANONYMOUS_LOGGERS = frozenset({"root", "__main__", "stdout", "stderr", "print"})
# The wrapper kinds whose `logger` is a logger's name (custom-logging's is a `file.py:12` location).
_NAMED_LOGGER_KINDS = frozenset({"python-logging", "rust-tracing"})


def foreign_logger(w: Wrapper) -> bool:
    """Whether the wrapper names another program's logger: a Python logging format's `%(name)s`
    (`… - INFO - flashinfer.jit: `, `… - modelscope - INFO - `) or Rust tracing's target, outside
    SGLang's `sglang` package and not an anonymous name. A record under it is that program's,
    whatever its message says (coverage counts an unparsed one as `foreign-logger`); an unknown
    message of SGLang's own logger (a custom logging config) stays unknown."""
    name = w.logger
    if not name or w.kind not in _NAMED_LOGGER_KINDS or name in _ANONYMOUS_LOGGERS:
        return False
    return name.split(".", 1)[0].split("::", 1)[0] != "sglang"


_LEVELS = r"DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|TRACE|NOTICE"
# A dotted module name (`flashinfer.jit`) – the only kind of name we trust to be a logger.
_DOTTED = r"[A-Za-z_]\w*(?:\.\w+)+"

# Compiled on first use (a log has one wrapper kind, if any): the others cost no start-up.
_DOCKER_RE = lazy_compile(r"([A-Za-z0-9_][\w.-]{0,62}) +\|(?: |$)")
# The same with the service name in brackets (`[sglang]     | [2026-06-24 11:50:33] …`: compose
# front-ends such as podman-compose / dev-container runners). The reader only looks for it in
# blocks that hold one (bracketed_wrappers), since `[` lines otherwise skip unwrapping.
_BRACKET_SERVICE_RE = lazy_compile(r"\[([A-Za-z0-9_][\w.-]{0,62})\] +\|(?: |$)")
_BRACKET_SERVICE_PRECHECK = lazy_compile(r"^\[[A-Za-z0-9_][\w.-]{0,62}\] +\|", re.MULTILINE)
# What that needs anywhere in the block: a search that starts at a literal `]` (a fast scan),
# where the anchored one tries every SGLang line's `[2026-…` (190 ms of a 200k-line log's 2.3 s).
_BRACKET_SERVICE_TAIL = lazy_compile(r"\] +\|")
# `kubectl logs --prefix` (kubectl 1.17+): `[pod/<pod>/<container>] ` before each line, so that
# the lines of several pods (`-l app=sglang`) or containers (`--all-containers`) can be told apart.
_KUBECTL_PREFIX_RE = lazy_compile(r"\[pod/([\w.-]{1,253})/([\w.-]{1,63})\] ?")
# A chat or markdown client that took the envelope's date-time for a phone number (or a URL) and
# autolinked it; the copy is the link's markdown: `[[2025-11-19 14](tel:2025-11-19 14):41:27] …`.
# Only a line whose envelope starts with such a link is repaired (`[[`, which every block path
# unwraps); the reader looks for them in blocks that hold one (bracketed_wrappers).
# A line cut inside such a link's text (`[[2025-11-1`, an excerpt's last line) is repaired too.
_AUTOLINK_PRECHECK = lazy_compile(r"^\[\[(?:[^\]\n]{0,80}\]\(|\d{1,4}(?:-\d{0,2}){0,2}(?: [\d:]*)?$)", re.MULTILINE)
_CUT_AUTOLINK_RE = lazy_compile(r"\[\[\d{1,4}(?:-\d{0,2}){0,2}(?: [\d:]*)?")
_AUTOLINK_RE = lazy_compile(r"\[([^\[\]\n]{1,80})\]\(((?:tel|sms|callto|mailto):|https?://)?([^()\n]{1,100})\)")
_PHONE_SCHEMES = frozenset({"tel:", "sms:", "callto:"})


def bracketed_wrappers(text: str) -> bool:
    """Whether a block of text holds a line whose wrapper starts with `[` (a `[service]  | `
    compose prefix, kubectl's `[pod/…/…] `, an autolinked envelope, a `[date][LEVEL]: ` logging
    format): the reader then unwraps every line of the block, since an SGLang envelope's `[`
    otherwise means nothing to strip."""
    return (
        ("] " in text and _BRACKET_SERVICE_TAIL.search(text) is not None
         and _BRACKET_SERVICE_PRECHECK.search(text) is not None)
        or "[pod/" in text
        or (("\n[[" in text or text[:2] == "[[") and _AUTOLINK_PRECHECK.search(text) is not None)
        or ("][" in text and _BRACKET_LEVEL_PRECHECK.search(text) is not None)
    )
# Also SkyPilot's form of it for a job's workers: `(worker6, rank=6, pid=33713, ip=10.128.0.37) `.
_RAY_RE = lazy_compile(r"\((?:(\w+)(?:, rank=\d+,)? )?pid=(\d+)(?:, ip=([0-9A-Fa-f.:]+))?\) ?")
# Ray's own processes have no pid in the prefix: `(raylet) …`, `(raylet, ip=10.0.0.1) …`,
# `(gcs_server) …` (a node's raylet forwards what a worker printed before it became an actor).
_RAY_SYSTEM_RE = lazy_compile(
    r"\((raylet|gcs_server|dashboard_agent|monitor|autoscaler)(?:, ip=([0-9A-Fa-f.:]+))?\) ?"
)
# journald's short format (`journalctl -u sglang`): `Dec 02 01:02:03 host ident[pid]: `.
_JOURNALD_RE = lazy_compile(
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) (\d{2}:\d{2}:\d{2}) "
    r"([\w.-]+) ([\w.@/-]+)(?:\[(\d+)\])?:(?: |$)"
)
# journald's ISO formats (`journalctl -o short-iso` / `short-iso-precise`) put the same
# `host ident[pid]: ` after an ISO stamp; the pid is required there, so that a message's own
# `word word: ` after a plain stamp is never taken for it.
_JOURNALD_ISO_TAIL_RE = lazy_compile(r"([\w.-]+) ([\w.@/-]+)\[(\d+)\]:(?: |$)")
_KIBANA_RE = lazy_compile(
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\d{1,2}), (\d{4}) @ "
    r"(\d{2}:\d{2}:\d{2})(?:\.(\d+))? +"
)
_ISO = r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?"
# Rust `tracing` (dynamo): `TS  INFO target: msg` (level right-aligned in 5 columns). A line
# cut right after the target has no ': '.
_RUST_RE = lazy_compile(_ISO + r" +(TRACE|DEBUG|INFO|WARN|ERROR) +(?:([\w.:-]+?): |(?=[\w.:-]+$))")
# `docker logs --timestamps`, kubectl and GitHub Actions print exactly one space after the
# timestamp: any further spaces are the line's own indentation (a traceback frame's). A log
# viewer's export (cloud consoles, log shippers' UIs) puts one tab there instead.
_ISO_RE = lazy_compile(_ISO + r"(?:[ \t]|$)")
# The same stamp with a space between date and time (`2025-07-01 00:57:53.123+08:00 `, as
# exports and `--rfc-3339` dates print it): only with its zone, which no logger's own date has.
_ISO_SPACED_RE = lazy_compile(
    r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:[.,](\d+))? ?(Z|[+-]\d{2}:?\d{2})(?:[ \t]|$)"
)
_BRACKET_ISO_RE = lazy_compile(r"\[" + _ISO + r"\](?: (?:(\S+) >> ?)?|$)")
_DATE = r"(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})"
# `2025-02-26 15:44:36,973 - INFO - flashinfer.jit: msg` / `… - INFO - Command: …`
_PYLOG_A_RE = lazy_compile(_DATE + r",(\d{3}) - (" + _LEVELS + r") - (?:(" + _DOTTED + r"): )?")
# `2025-02-26 15:44:36,973 - flashinfer.jit - INFO - msg` (the logging cookbook format)
_PYLOG_B_RE = lazy_compile(_DATE + r",(\d{3}) - ([\w.]+) - (" + _LEVELS + r") - ")
# `2025-05-28 12:33:18,180 xinference.core.worker 2363 ERROR    msg` (Xinference's format: the
# logger's name, the process id, the level padded to eight)
_PYLOG_D_RE = lazy_compile(_DATE + r",(\d{3}) ([A-Za-z_][\w.]*) (\d+) (" + _LEVELS + r") +")
# `2026-06-07 10:59:31,659 [INFO] sglang.srt.managers.scheduler_metrics_mixin: msg`
_PYLOG_C_RE = lazy_compile(
    _DATE + r"(?:,(\d{3}))? \[(" + _LEVELS + r")\] (?:(" + _DOTTED + r"|__main__|root): )?"
)
# `2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] msg` (milliseconds after a `,` or
# a `.`: `2026-03-18 11:22:05.874 INFO 120984 [ TP0 scheduler.py:3190] …`); a format that also holds
# SGLang's rank prefix (`' TP6 PP0'`, with its leading space) before the file:
# `2025-06-18 13:43:34 ERROR 31423 [ TP6 PP0 scheduler.py:2547] msg`.
_CUSTOM_RE = lazy_compile(
    _DATE + r"(?:[.,](\d{3}))? (" + _LEVELS + r") (\d+) \[ ?((?:(?:[A-Z]+_)?[A-Z]{2,3}\d+ )*)([\w.-]+:\d+)\] ?"
)
# The ranked variant: its rank tags are given back to the grammar as SGLang's own envelope.
_CUSTOM_RANKED = "custom-logging-ranked"
# `[2025-08-27 13:51:19][ERROR]: TP1 Scheduler hit an exception: …` (a logging config of the form
# `[%(asctime)s][%(levelname)s]: %(message)s` around SGLang's records, its rank tags moved into the
# message): the stamp and the level; rank tags at the message's start go back into an envelope.
_BRACKET_LEVEL_RE = lazy_compile(r"\[" + _DATE + r"(?:[.,](\d{1,6}))?\]\[(" + _LEVELS + r")\]:? ?")
_BRACKET_LEVEL = "bracket-level"
_BRACKET_LEVEL_PRECHECK = lazy_compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\]\[[A-Z]{4,8}\]", re.MULTILINE)
_MESSAGE_RANKS_RE = lazy_compile(r"((?:ATTN_|MOE_)?(?:DP|PP|TP|EP|CP)\d+(?: (?:ATTN_|MOE_)?(?:DP|PP|TP|EP|CP)\d+)*) (?=\S)")
# `2024-02-15 16:04:21 | INFO | stdout | msg` (FastChat's controller/worker loggers, which ran
# SGLang 0.1.x workers and logged their output)
_PIPES_RE = lazy_compile(_DATE + r"(?:[.,](\d{3}))? \| (" + _LEVELS + r") \| ([\w.-]+)(?: \| | *$)")
# containerd / CRI-O log files (`kubectl logs` of a node's /var/log/pods): after the timestamp,
# the stream and whether the line is Full or a Partial chunk: `… stderr F message`.
_CRI_RE = lazy_compile(r"(stdout|stderr) [FP](?: |$)")
# `INFO - flashinfer.  jit: msg` (copy-mangled, no date): only with a dotted name.
_MANGLED_RE = lazy_compile(r"(" + _LEVELS + r") - ([A-Za-z_]\w*(?:\. *\w+)+): ")

# Leading blanks before what is never indented in a log: an SGLang envelope (dated or not),
# a traceback's header line, Ray's `(Actor pid=N)` prefix, or vLLM's logger prefix.
_INDENTED_RECORD_RE = lazy_compile(
    r"[ \t]+(?=\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}|\[\d{2}:\d{2}:\d{2}[ \]]"
    r"|Traceback \(most recent call last\):|\((?:\w+(?:, rank=\d+,)? )?pid=\d+(?:, ip=[0-9A-Fa-f.:]+)?\) "
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2} )"
)

# Open MPI's `mpirun --tag-output`: `[jobid,rank]<stdout>:` (or `<stderr>:`, `<stddiag>:`) glued to
# the line; with `--timestamp-output` a ctime stamp is glued before it:
# `Thu Jan 23 11:55:50 2025[1,1]<stderr>:    scheduler.event_loop_overlap()`. A line cut
# right after the tag has no colon.
_OMPI_TAG = r"\[(\d+),(\d+)\]<(?:stdout|stderr|stddiag)>(?::|$)"
_OMPI_RE = lazy_compile(_OMPI_TAG)
_OMPI_TS_RE = lazy_compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]?\d) (\d{2}:\d{2}:\d{2}) (\d{4})"
    + _OMPI_TAG
)
# A launcher that stamps and tags every line of the command it runs, per node and rank:
# `[2025-12-08 15:20:22] [/bin/sh@<0,0>]:   File "…"`. SGLang's own untagged envelope is
# `[date time] message`; the `[program@<n,n>]:` tag after it is what tells them apart.
# Slurm's `srun --label`: the task number before every line of its stdout/stderr, printed as
# `%*d: ` (right-aligned to the widest task id: ` 3: ` among 16 tasks). Only before text a
# writer prints: the rest starts with a non-blank, or with the blanks of a traceback's frame.
_SRUN_LABEL_RE = lazy_compile(r" {0,4}(0|[1-9]\d{0,5}): (?=\S|  )")
_LAUNCHER_TAG_RE = lazy_compile(r"\[" + _DATE + r"\] \[([^\]\s@]+)@<(\d+),(\d+)>\]: ?")

# A progress bar a narrow terminal cut before its counts and rate, with the next record glued
# after it: `  0%|<bar>[2026-05-28 02:59:50 TP0] Prefill batch, …` (tqdm's `{desc}: {percentage}%|`
# l_bar, SGLang's `% Completed |`, then the bar's cells and at most its `| n/total`). A whole bar
# (`… [00:00<?, ?it/s][2026-…`) is the decoder's to split into two lines: its `[elapsed<…]` part
# stands between the bar and the envelope, so this does not match it.
_GLUED_BAR_RE = lazy_compile(
    r"[ \t]*(?:[^\s\[\]|][^\[\]|]{0,120}?: *)?\d{1,3}%(?: Completed ?)?\|[^\[\]|]{0,400}"
    r"(?:\| *\d+(?:\.\d+)?[kMG]?/\d+(?:\.\d+)?[kMG]? *)?(?=\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[.,\] ])"
)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    )
}
_DIGITS = frozenset("0123456789")
# First letters of rust tracing's levels (TRACE DEBUG INFO WARN ERROR).
_RUST_LEVEL_FIRST = frozenset("TDIWE")
# Kinds after which the rest is the message itself (no further wrapper can follow).
_TERMINAL_KINDS = frozenset({"python-logging", "custom-logging", _CUSTOM_RANKED, "rust-tracing", _BRACKET_LEVEL})
# Kinds whose lines are padded with trailing spaces by the tool, not by the writer.
_RSTRIP_KINDS = frozenset({"kibana", "rust-tracing"})


def _frac(f: str | None) -> str:
    return "." + f[:6] if f else ""


def _iso_ts(date: str, time: str, frac: str | None) -> str:
    # Wall-clock time as printed; a UTC offset is dropped, not applied (the grammar compares
    # against SGLang's own naive timestamps, and the offset is not ours to apply).
    return f"{date} {time}{_frac(frac)}"


# One parsed prefix: (kind, ts, container, pid, actor, ip, level, logger, end offset).
_Prefix = tuple[
    str, str | None, str | None, int | None, str | None, str | None, str | None, str | None, int
]


def _is_ps2(s: str) -> bool:
    """`> …` is a shell's continuation prompt: a flag, or a line continued with `\\`."""
    rest = s[2:].lstrip(" ")
    return rest[:1] == "-" or s.rstrip().endswith("\\")


def _match_prefix(s: str) -> _Prefix | None:
    """Recognise one wrapper prefix at the start of `s`, dispatching on the first character
    so that the typical non-wrapped line (traceback, bar, bare message) costs one or two
    failed anchored matches."""
    c = s[:1]
    if not c:
        return None
    if s.find("%", 0, 128) >= 0 and s.find("|", 0, 160) >= 0:
        m = _GLUED_BAR_RE.match(s)
        if m:
            # The bar's text says nothing a diagnosis needs; the record after it is the line.
            return ("progress-bar", None, None, None, None, None, None, None, m.end())
    if c == "(" or (c == "m" and s[1:2] == "("):
        # `m(…pid=…)`: a Ray prefix whose colour code lost its `ESC[36` when the paste began
        # inside it (the rest of such codes, `[36m` / `[0m`, the reader strips as ANSI remnants).
        m = _RAY_RE.match(s, 0 if c == "(" else 1)
        if m:
            # A damaged pid (thousands of digits) is None: the line keeps its other metadata.
            return ("ray", None, None, to_int(m[2]), m[1], m[3], None, None, m.end())
        m = _RAY_SYSTEM_RE.match(s, 0 if c == "(" else 1)
        if m:
            return ("ray", None, m[1], None, m[1], m[2], None, None, m.end())
        return None
    if c == ">" and (s[1:] in ("", " ") or (s[1:2] == " " and not _is_ps2(s))):
        # A markdown quote around a pasted log (`> [2025-07-11 17:40:14 DP0 TP2] …`, `>   File
        # "…"`, `>` alone): any quoted text except bash's PS2 prompt continuing a command
        # (`> --tp 8 \`, `>   --port 30000`), which commands.py reads as part of the command.
        # Blanks after `> ` are the quoted text's (a code block's indentation in the quote,
        # `>  INFO 02-18 09:33:49 __init__.py:190] …`, is learned after the prefix).
        return ("markdown-quote", None, None, None, None, None, None, None, min(len(s), 2))
    if c == ">" and s[1:2] == "[" and _is_envelope(s[1:]):
        # The quote marker glued to the envelope (`>[2025-07-22 20:38:44] Scheduler hit …`):
        # markdown takes `>` without its space as a quote too.
        return ("markdown-quote", None, None, None, None, None, None, None, 1)
    if c == "+" and s[1:2] == "[" and _is_envelope(s[1:]):
        # A log quoted in a unified diff (a PR adding a guide's example output, its review hunk):
        # every added line keeps the diff's `+` glued to the envelope (`+[2025-02-11 09:06:55]
        # INFO:     Started server process [1]`). Only before an envelope: `+ cmd` is bash's xtrace.
        return ("diff-added", None, None, None, None, None, None, None, 1)
    if c == "^" and s[1:2] == "C" and len(s) > 2:
        # A terminal's echo of Ctrl-C glued before what the interrupted program printed next
        # (`^CProcess Process-2:`, `^CTraceback (most recent call last):`): the tty's text, not
        # the program's; the kind tells the run model that someone pressed Ctrl-C here.
        return ("tty-interrupt", None, None, None, None, None, None, None, 2)
    if c == "s" and s[6:7] == " ":
        m = _CRI_RE.match(s)
        if m:
            # The stream name (stdout/stderr) keeps the two apart, like a docker service name.
            return ("cri", None, m[1], None, None, None, None, None, m.end())
    if c == "[":
        if s[1:2].isalpha():
            m = _BRACKET_SERVICE_RE.match(s)
            if m:
                return ("docker-compose", None, m[1], None, None, None, None, None, m.end())
            if s[1:5] == "pod/":
                m = _KUBECTL_PREFIX_RE.match(s)
                if m:
                    return ("kubectl", None, f"{m[1]}/{m[2]}", None, None, None, None, None, m.end())
            return None
        if s[5:6] != "-":
            # Not a date: an Open MPI rank tag or nothing (an SGLang envelope starts `[YYYY-`).
            m = _OMPI_RE.match(s)
            if m:
                return ("open-mpi", None, f"{m[1]},{m[2]}", None, None, None, None, None, m.end())
            return None
        if s[11:12] != "T":
            if s.find("][", 20, 28) > 0:
                m = _BRACKET_LEVEL_RE.match(s)
                if m:
                    return (_BRACKET_LEVEL, f"{m[1]} {m[2]}{_frac(m[3])}", None, None, None, None, m[4], None,
                            m.end())
            if s[20:23] == "] [" and "@<" in s[22:96]:
                m = _LAUNCHER_TAG_RE.match(s)
                if m:
                    tag = f"{m[3]}@{m[4]},{m[5]}"
                    return ("launcher-tag", f"{m[1]} {m[2]}", tag, None, None, None, None, None, m.end())
            return None
        m = _BRACKET_ISO_RE.match(s)
        if m:
            host = m[5]
            kind = "k8s" if host else "iso-timestamp"
            return (kind, _iso_ts(m[1], m[2], m[3]), host, None, None, None, None, None, m.end())
        return None
    if (c in _DIGITS or c == " ") and s.find(": ", 0, 12) > 0:
        m = _SRUN_LABEL_RE.match(s)
        if m:
            return ("srun-label", None, m[1], None, None, None, None, None, m.end())
        if c == " ":
            return None
    if c in _DIGITS:
        sep = s[10:11]
        if sep == "T":
            m = _ISO_RE.match(s)
            # Rust tracing's prefix is the same stamp followed by spaces and its level: where
            # `_ISO_RE` fails it fails too, and the stamp can end only where `_ISO_RE`'s ends (a
            # fraction's digits and a zone are greedy and followed by a space), so it is tried only
            # when a level's first letter follows the spaces (not on every kubectl line).
            if m and s[m.end() :].lstrip(" ")[:1] in _RUST_LEVEL_FIRST:
                r = _RUST_RE.match(s)
                if r:
                    return (
                        "rust-tracing",
                        _iso_ts(r[1], r[2], r[3]),
                        None,
                        None,
                        None,
                        None,
                        r[5],
                        r[6],
                        r.end(),
                    )
            if m and m[4] and s.find("]:", m.end(), m.end() + 160) > 0:
                j = _JOURNALD_ISO_TAIL_RE.match(s, m.end())
                if j:
                    ts = _iso_ts(m[1], m[2], m[3])
                    return ("journald", ts, j[1], to_int(j[3]), j[2], None, None, None, j.end())
            if m:
                # kubectl --timestamps prints RFC3339Nano in UTC: 9 fraction digits + Z.
                kind = "k8s" if m[4] == "Z" and m[3] and len(m[3]) == 9 else "iso-timestamp"
                return (
                    kind,
                    _iso_ts(m[1], m[2], m[3]),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    m.end(),
                )
        elif sep == " " and s[4:5] == "-":
            m = _PYLOG_A_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}.{m[3]}",
                    None,
                    None,
                    None,
                    None,
                    m[4],
                    m[5],
                    m.end(),
                )
            # The bracketed-level and the pipe-separated formats have the same groups (date, time,
            # fraction, level, logger); their separators after the date differ, so at most one matches.
            m = _PYLOG_C_RE.match(s) or _PIPES_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}{_frac(m[3])}",
                    None,
                    None,
                    None,
                    None,
                    m[4],
                    m[5],
                    m.end(),
                )
            m = _CUSTOM_RE.match(s)
            if m:
                return (
                    _CUSTOM_RANKED if m[6] else "custom-logging",
                    f"{m[1]} {m[2]}{_frac(m[3])}",
                    None,
                    to_int(m[5]),
                    None,
                    None,
                    m[4],
                    m[7],
                    m.end(),
                )
            m = _PYLOG_B_RE.match(s)
            if m:
                return (
                    "python-logging",
                    f"{m[1]} {m[2]}.{m[3]}",
                    None,
                    None,
                    None,
                    None,
                    m[5],
                    m[4],
                    m.end(),
                )
            m = _PYLOG_D_RE.match(s)
            if m:
                return ("python-logging", f"{m[1]} {m[2]}.{m[3]}", None, to_int(m[5]), None, None, m[6], m[4],
                        m.end())
            m = _ISO_SPACED_RE.match(s)
            if m:
                return ("iso-timestamp", _iso_ts(m[1], m[2], m[3]), None, None, None, None, None, None,
                        m.end())
    elif c.isupper():
        if s[3:4] == " " and "[" in s[23:25]:
            m = _OMPI_TS_RE.match(s)
            if m:
                ts = f"{m[4]}-{_MONTHS[m[1]]:02d}-{int(m[2]):02d} {m[3]}"
                return ("open-mpi", ts, f"{m[5]},{m[6]}", None, None, None, None, None, m.end())
        mon = _MONTHS.get(s[:3])
        if mon is not None and s[3:4] == " ":
            m = _JOURNALD_RE.match(s)
            if m:
                # No year in the prefix: the time is left to the SGLang envelope inside.
                return ("journald", None, m[4], to_int(m[6]), m[5], None, None, None, m.end())
        if mon is not None:
            m = _KIBANA_RE.match(s)
            if m:
                ts = f"{m[3]}-{mon:02d}-{int(m[2]):02d} {m[4]}{_frac(m[5])}"
                return ("kibana", ts, None, None, None, None, None, None, m.end())
        m = _MANGLED_RE.match(s)
        if m:
            logger = m[2].replace(" ", "")
            return ("python-logging", None, None, None, None, None, m[1], logger, m.end())
    m = _DOCKER_RE.match(s)
    if m:
        return ("docker-compose", None, m[1], None, None, None, None, None, m.end())
    return None


def _unlinked(m: re.Match[str]) -> str:
    """The link's text when its target says the same (the client's autolink of that text), else
    the link as it is. A phone link's target may keep only the digits (`tel:+2025111914`)."""
    text, scheme, target = m[1], m[2] or "", m[3]
    if target.rstrip("/") == text.rstrip("/") or scheme + target == text:
        return text
    if scheme in _PHONE_SCHEMES and any(c in _DIGITS for c in text):
        digits = [c for c in text if c in _DIGITS]
        if digits == [c for c in target if c in _DIGITS]:
            return text
    return m[0]


def unlink_autolinks(s: str) -> str:
    """`s` with every markdown autolink a client made of its own text (`[x](tel:x)`,
    `[x](http://x)`) replaced by that text."""
    return _AUTOLINK_RE.sub(_unlinked, s)


def _stream_of(kind: str, container: str | None, pid: int | None) -> str:
    if kind == "ray":
        # A Ray system process (`(raylet, ip=…)`) has no pid: its name keeps it apart.
        return f"ray:{pid}" if pid is not None else f"ray:{container}"
    if kind == "docker-compose":
        return f"docker:{container}"
    if kind == "cri":
        return f"cri:{container}"
    if kind == "kubectl":
        return f"k8s:{container}"
    if kind == "open-mpi":
        # One rank's stdout and stderr are one writer: a traceback may span both.
        return f"mpi:{container}"
    if kind == "launcher-tag":
        return f"tag:{container}"
    if kind == "srun-label":
        return f"srun:{container}"
    if pid is not None:
        return f"pid:{pid}"
    return ""


def _is_envelope(s: str) -> bool:
    """`s` starts like an SGLang envelope (`[date time …]`), not like a bracketed wrapper: a
    `[service]  | ` compose prefix, an `[ISO]` stamp, Open MPI's `[1,0]<stderr>:` or a
    launcher's `[date time] [prog@<n,n>]:` tag."""
    return (
        s[:1] == "["
        and s[11:12] != "T"
        and not s[1:2].isalpha()
        and s[5:6] == "-"
        and s[20:23] != "] ["
    )


# Kinds whose prefix text is the same on every line of one writer (no timestamp): safe to
# recognise again by plain string comparison.
_REPEATING_KINDS = frozenset({"docker-compose", "ray", "markdown-quote", "kubectl", "srun-label"})


class Unwrapper:
    """Strips wrapper prefixes for one read. Per-read state: a cache of merged Wrappers by
    prefix text (so identical prefixes share one object) and the last repeating prefix, which
    lets a docker/Ray-wrapped log skip the regexes: their patterns never look past the prefix
    text, so a line starting with the same text parses the same way."""

    __slots__ = ("_cache", "indent", "last_len", "last_text", "last_wrapper", "prev_len", "prev_text", "prev_wrapper")

    def __init__(self) -> None:
        # The indentation of a log pasted as a code block, learned from its first indented
        # envelope or traceback header (a small paste: one read, never split into byte ranges).
        self.indent = ""
        self._cache: dict[str, tuple[Wrapper, bool]] = {}
        self.last_text = "\x00"  # cleaned lines never contain NUL: matches nothing
        self.last_len = 1
        self.last_wrapper: Wrapper | None = None
        # The repeating prefix before the last one: two writers interleaved (a Ray scheduler
        # actor and a server actor) otherwise miss the memo on every other line.
        self.prev_text = "\x00"
        self.prev_len = 1
        self.prev_wrapper: Wrapper | None = None

    def _repeating(self, key: str, pos: int, w: Wrapper) -> None:
        """Remember a repeating prefix as the last one (the last one before it becomes prev)."""
        if key != self.last_text:
            self.prev_text, self.prev_len, self.prev_wrapper = self.last_text, self.last_len, self.last_wrapper
        self.last_text, self.last_len, self.last_wrapper = key, pos, w

    def __call__(self, s: str) -> tuple[Wrapper | None, str]:
        """Strip (possibly nested) prefixes; return the merged Wrapper and the rest."""
        if s[:1] == "\ufeff":
            # A UTF-8 byte-order mark (a file saved by a Windows editor, or one of several
            # concatenated files): not text of the log, and no wrapper either.
            s = s[1:]
        if s[:2] == "[[":
            s = _unlinked_head(s)
        blank = s[:1] == " " or s[:1] == "\t"
        if blank:
            s = self._dedent(s)
        if s.startswith(self.last_text):
            rest = s[self.last_len :]
            if _is_envelope(rest):
                if self.indent and not blank:
                    self.indent = ""  # an unindented record: a code block has ended
                return self.last_wrapper, rest
        if s.startswith(self.prev_text):
            # The same shortcut for the other writer's prefix (the same argument: its patterns
            # never look past the prefix text); it becomes the last one, as the full path does.
            rest = s[self.prev_len :]
            if _is_envelope(rest):
                if self.indent and not blank:
                    self.indent = ""
                w = self.prev_wrapper
                assert w is not None
                self._repeating(self.prev_text, self.prev_len, w)
                return w, rest
        first = _match_prefix(s)
        if first is None:
            if self.indent and not blank and s:
                self.indent = ""  # an unindented line: the code block has ended
            return None, s
        pos = first[8]
        kind = first[0]
        rest = s[pos:]
        if kind in _TERMINAL_KINDS or _is_envelope(rest):
            # One prefix (the common case: the loop below would stop at once): the same result
            # without the list of prefixes and the nesting loop.
            key = s[:pos]
            hit = self._cache.get(key)
            if hit is None:
                hit = (_merge([first]), kind in _RSTRIP_KINDS)
                if len(self._cache) > 4096:
                    self._cache.clear()
                self._cache[key] = hit
            w, strip = hit
            if kind in _REPEATING_KINDS:
                self._repeating(key, pos, w)
            if kind == _CUSTOM_RANKED:
                rest = _ranked_envelope(key) + rest
            elif kind == _BRACKET_LEVEL:
                rest = _message_ranks_envelope(first[1], rest)
            elif self.indent and not blank:
                self.indent = ""  # the prefix wraps an unindented record
            return w, (rest.rstrip() if strip else rest)
        prefixes = [first]
        pos = first[8]
        kind = first[0]
        while kind not in _TERMINAL_KINDS and len(prefixes) < 6:
            rest = s[pos:]
            if _is_envelope(rest):
                break  # an SGLang envelope: the grammar takes it from here
            nxt = _match_prefix(rest)
            # docker-compose is always outermost (but for the markdown quote of a paste around
            # it); inside another wrapper `word  | ` is message text (a table, a bar).
            if nxt is None or nxt[8] == 0 or (
                nxt[0] == "docker-compose" and any(p[0] != "markdown-quote" for p in prefixes)
            ):
                break
            prefixes.append(nxt)
            pos += nxt[8]
            kind = nxt[0]
        key = s[:pos]
        hit = self._cache.get(key)
        if hit is None:
            strip = any(p[0] in _RSTRIP_KINDS for p in prefixes)
            hit = (_merge(prefixes), strip)
            if len(self._cache) > 4096:
                self._cache.clear()  # bounded: timestamped prefixes rarely repeat
            self._cache[key] = hit
        w, strip = hit
        if len(prefixes) == 1 and first[0] in _REPEATING_KINDS:
            self._repeating(key, pos, w)
        rest = s[pos:]
        if kind == _CUSTOM_RANKED:
            # `[ TP6 PP0 scheduler.py:2547]`: the ranks are SGLang's prefix, which the grammar reads
            # from its envelope (`[2025-06-18 13:43:34 TP6 PP0] …`): rebuild that envelope.
            rest = _ranked_envelope(s[pos - prefixes[-1][8] : pos]) + rest
        elif kind == _BRACKET_LEVEL:
            rest = _message_ranks_envelope(prefixes[-1][1], rest)
        elif kind not in _TERMINAL_KINDS and not blank:
            # What a capture tool's prefix wraps is the pasted text: an autolinked envelope, or a
            # code block's indentation (learned and stripped as at a line's start).
            if rest[:2] == "[[":
                rest = _unlinked_head(rest)
            if rest[:1] == " " or rest[:1] == "\t":
                rest = self._dedent(rest)
            elif self.indent and rest:
                self.indent = ""
        return w, (rest.rstrip() if strip else rest)


    def _dedent(self, s: str) -> str:
        """`s` (starting with a blank) without a code block's indentation: learned from a
        record no writer indents, then stripped from the lines that carry it."""
        m = _INDENTED_RECORD_RE.match(s)
        if m:
            # A log pasted as an indented code block: a record's envelope or a traceback's
            # header is never indented by its writer (nor Python source text), so the
            # indentation is the paste's, and the lines after it carry it too (a frame
            # at 2 + indent, the exception line at indent).
            self.indent = s[: m.end()]
            return s[m.end() :]
        if self.indent and s.startswith(self.indent):
            return s[len(self.indent) :]
        return s


def _unlinked_head(s: str) -> str:
    """`s` (starting with `[[`) with an autolinked envelope repaired."""
    if "](" in s:
        return unlink_autolinks(s)
    if _CUT_AUTOLINK_RE.fullmatch(s):
        return s[1:]  # the link's own `[` before an envelope cut inside the link's text
    return s


def _message_ranks_envelope(ts: str | None, rest: str) -> str:
    """`rest` with SGLang's rank tags at its start given back as its envelope (`TP1 Scheduler hit …`
    → `[2025-08-27 13:51:19 TP1] Scheduler hit …`, the grammar reads ranks from there); `rest`
    as it is when it starts with none."""
    m = _MESSAGE_RANKS_RE.match(rest)
    if m is None or ts is None:
        return rest
    return f"[{ts.split('.', 1)[0]} {m[1]}] {rest[m.end():]}"


def _ranked_envelope(prefix: str) -> str:
    m = _CUSTOM_RE.match(prefix)
    return f"[{m[1]} {m[2]} {m[6].strip()}] " if m else ""


def _merge(prefixes: list[_Prefix]) -> Wrapper:
    # Innermost statement of each field wins; the stream comes from the innermost wrapper
    # that identifies a writer.
    kind, ts, container, pid, actor, ip, level, logger = prefixes[-1][:8]
    stream = _stream_of(kind, container, pid)
    for p in reversed(prefixes[:-1]):
        ts = ts if ts is not None else p[1]
        container = container if container is not None else p[2]
        pid = pid if pid is not None else p[3]
        actor = actor if actor is not None else p[4]
        ip = ip if ip is not None else p[5]
        level = level if level is not None else p[6]
        logger = logger if logger is not None else p[7]
        if not stream:
            stream = _stream_of(p[0], p[2], p[3])
    return Wrapper(kind, ts, container, pid, actor, ip, level, logger, stream)

