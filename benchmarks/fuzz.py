"""Hostile-input campaign: mutated real logs and field-by-field number substitution, in-process.

    python -m benchmarks.fuzz [--cases 10000] [--numbers N] [--per-field 2] [--workers 2] [--seed 1]

Mutated logs: real fixture and corpus logs (cut to windows of at most WINDOW lines), each case
1–3 mutations (splice, truncate, duplicate, shuffle, ANSI, hostile numbers, unicode oddities,
collapsed newlines, CR-only, CRLF, secrets, injection payloads). Number campaign: every number
field of every distinct line shape (digits masked) of the same logs, replaced by --per-field
hostile values (rotating through HOSTILE_NUMBERS), as a one-line log. Every case runs `analyze
--format json`, `check --format sarif`, `events --kind …` and `report -o x.json` (on every
--report-every-th mutated log; `report -o x.html` every --html-every) in this process, with
LOGDIAG_DEBUG=1 so that a crash keeps its traceback.

Figures printed: cases, crashes (with distinct sites: file:line of the innermost logparse frame
and the exception type), accounting errors (recognized + unparsed != total, or total != lines
read), leaked secrets (a placed secret verbatim in any output), injections (a raw `<script>` in
HTML, a placed `::`/`##[` workflow command at a line start, a CSV cell starting with a formula
character), peak memory. The mutation primitives are shared with tests/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("LOGDIAG_CORPUS", ROOT.parent / "shared" / "corpus"))
WINDOW = 300

# Hostile replacements for a number field: non-finite, float overflow (310+ digits), past
# Python's 4,300-digit int-string limit, signs and forms a count never has.
HOSTILE_NUMBERS: tuple[str, ...] = (
    "inf", "-inf", "nan", "NaN", "Infinity", "9" * 320, "9" * 4400, "1e999", "-1", "-0", "0x1f",
    "1" + "0" * 40, "1_000", "٣", "", "1.2.3", "\" 7",
)
# Secrets placed into logs: none of them may appear verbatim in any output (once redaction exists).
SECRETS: tuple[str, ...] = (
    "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
)
# How a secret is written into a line (the secret replaces {s}).
SECRET_FORMS: tuple[str, ...] = (
    "--api-key {s}", "Authorization: Bearer {s}", "export OPENAI_API_KEY={s}", "api_key: {s}",
    "https://user:{s}@example.com/v1", "?access_token={s}", "x-api-key: {s}",
)
INJECTIONS: tuple[str, ...] = (
    "::error::pwned", "##[error]pwned", "=cmd|' /C calc'!A0", "<script>alert(1)</script>",
    "::set-output name=x::y", "+SUM(1,2)", "@SUM(1,2)",
)
ANSI = ("\x1b[31m", "\x1b[0m", "\x1b[1;32m", "\x1b[2K", "\x1b]0;title\x07", "\x1b[")
ODDITIES = ("\u200b", "\u202e", "\ufeff", "\u0301", "\uff11\uff12", "\U0001f600", "\x00", "\x7f", "\u2028",
            "\udcff", "ﬁ", "İ")
_NUM = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


# ------------------------------------------------------------------------------------ seeds


def seed_paths() -> list[Path]:
    """The real logs the campaign mutates: fixtures, and the corpus when it is next to the checkout."""
    paths = sorted(Path(p) for p in glob.glob(str(ROOT / "fixtures" / "logs" / "*.log")))
    paths += sorted(Path(p) for p in glob.glob(str(ROOT / "fixtures" / "rules" / "*" / "*.log")))
    paths += sorted(Path(p) for p in glob.glob(str(CORPUS / "*.log")))
    paths += sorted(Path(p) for p in glob.glob(str(CORPUS / "unlabeled" / "*.log")))
    return paths


def load_seeds(paths: Sequence[Path] | None = None) -> list[list[str]]:
    """Each seed log as a list of lines (newlines kept off), cut into windows of WINDOW lines."""
    out: list[list[str]] = []
    for p in paths if paths is not None else seed_paths():
        lines = p.read_text(encoding="utf-8", errors="replace").split("\n")
        for i in range(0, max(len(lines), 1), WINDOW):
            out.append(lines[i : i + WINDOW])
    return out


def line_shapes(seeds: Sequence[Sequence[str]]) -> list[str]:
    """One representative line per distinct shape (digit runs masked) that holds a number."""
    shapes: dict[str, str] = {}
    for lines in seeds:
        for line in lines:
            if _NUM.search(line):
                shapes.setdefault(_NUM.sub("#", line), line)
    return list(shapes.values())


def number_substitutions(line: str, values: Sequence[str] = HOSTILE_NUMBERS, per_field: int | None = None,
                         start: int = 0) -> Iterator[str]:
    """The line with each of its number fields replaced by each hostile value in turn (or by
    `per_field` of them, rotating through `values` from `start`, so that a campaign over many
    fields uses every value evenly)."""
    k = start
    for m in _NUM.finditer(line):
        chosen = values if per_field is None else [values[(k + j) % len(values)] for j in range(per_field)]
        k += per_field or 0
        for v in chosen:
            yield line[: m.start()] + v + line[m.end() :]


def substitution_campaign(seeds: Sequence[Sequence[str]], per_field: int = 2) -> list[str]:
    """Every number field of every distinct line shape, each replaced by `per_field` hostile values."""
    out: list[str] = []
    for shape in line_shapes(seeds):
        out.extend(number_substitutions(shape, per_field=per_field, start=len(out)))
    return out


# ------------------------------------------------------------------------------------ mutations

Mutation = Callable[[random.Random, list[str], Sequence[Sequence[str]]], list[str]]


def _pos(rng: random.Random, lines: list[str]) -> int:
    return rng.randrange(len(lines)) if lines else 0


def splice(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    other = list(rng.choice(pool)) if pool else []
    a, b = sorted(rng.randrange(len(other) + 1) for _ in range(2)) if other else (0, 0)
    at = _pos(rng, lines)
    return lines[:at] + other[a:b] + lines[at:]


def truncate(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    text = "\n".join(lines)
    return text[: rng.randrange(len(text) + 1)].split("\n") if text else lines


def duplicate(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    if not lines:
        return lines
    a = _pos(rng, lines)
    b = min(len(lines), a + rng.randint(1, 20))
    return lines[:b] + lines[a:b] * rng.randint(1, 4) + lines[b:]


def shuffle(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    out = list(lines)
    a = _pos(rng, out)
    window = out[a : a + rng.randint(2, 30)]
    rng.shuffle(window)
    out[a : a + len(window)] = window
    return out


def _edit_lines(rng: random.Random, lines: list[str], edit: Callable[[str], str], k: int = 5) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, k)):
        if out:
            i = _pos(rng, out)
            out[i] = edit(out[i])
    return out


def _insert(rng: random.Random, text: str, piece: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + piece + text[at:]


def ansi(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    return _edit_lines(rng, lines, lambda s: _insert(rng, s, rng.choice(ANSI)), 20)


def hostile_number(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    def edit(s: str) -> str:
        found = list(_NUM.finditer(s))
        if not found:
            return s
        m = rng.choice(found)
        return s[: m.start()] + rng.choice(HOSTILE_NUMBERS) + s[m.end() :]

    numbered = [i for i, s in enumerate(lines) if _NUM.search(s)]
    out = list(lines)
    for _ in range(rng.randint(1, 8)):
        if numbered:
            i = rng.choice(numbered)
            out[i] = edit(out[i])
    return out


def unicode_oddity(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    return _edit_lines(rng, lines, lambda s: _insert(rng, s, rng.choice(ODDITIES)), 10)


def collapse_newlines(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    if len(lines) < 2:
        return lines
    a = _pos(rng, lines)
    b = min(len(lines), a + rng.randint(2, 12))
    return lines[:a] + [rng.choice(("", " ", "\t")).join(lines[a:b])] + lines[b:]


def cr_only(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    return ["\r".join(lines)]


def crlf(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    return [s + "\r" for s in lines]


def place_secret(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    piece = rng.choice(SECRET_FORMS).format(s=rng.choice(SECRETS))
    return _edit_lines(rng, lines, lambda s: f"{s} {piece}" if rng.random() < 0.5 else _insert(rng, s, piece), 2)


def place_injection(rng: random.Random, lines: list[str], pool: Sequence[Sequence[str]]) -> list[str]:
    piece = rng.choice(INJECTIONS)
    return _edit_lines(rng, lines, lambda s: rng.choice((piece + s, f"{s} {piece}", _insert(rng, s, piece))), 2)


MUTATIONS: dict[str, Mutation] = {
    "splice": splice, "truncate": truncate, "duplicate": duplicate, "shuffle": shuffle, "ansi": ansi,
    "number": hostile_number, "unicode": unicode_oddity, "collapse": collapse_newlines, "cr-only": cr_only,
    "crlf": crlf, "secret": place_secret, "injection": place_injection,
}


def mutate(rng: random.Random, lines: Sequence[str], pool: Sequence[Sequence[str]], names: Sequence[str] | None = None) -> str:
    """A mutated log text: 1–3 mutations (or the named ones, in order)."""
    out = list(lines)
    chosen = list(names) if names is not None else rng.sample(sorted(MUTATIONS), rng.randint(1, 3))
    # Line-structure mutations (CR-only, CRLF) last, so that the others still see lines.
    chosen.sort(key=lambda n: n in ("cr-only", "crlf"))
    for name in chosen:
        out = MUTATIONS[name](rng, out, pool)
    return "\n".join(out) + ("\n" if rng.random() < 0.8 else "")


# ------------------------------------------------------------------------------------ running


@dataclass
class CaseResult:
    """What one case did across every command."""

    crashes: list[str] = field(default_factory=list)  # distinct sites
    accounting: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    injections: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)  # `analyze` exit 2: the one-line reasons


class CaseTimeout(Exception):
    """A command ran past the per-case time limit (unbounded work on one input)."""


def _alarm(signum: int, frame: object) -> None:
    raise CaseTimeout("case time limit")


def crash_site(exc: BaseException) -> str:
    """'logparse/x.py:123 ExcType' of the innermost logparse frame (the site to fix)."""
    site = "?"
    for frame in traceback.extract_tb(exc.__traceback__):
        if "/logparse/" in frame.filename:
            site = f"{frame.filename[frame.filename.rindex('/logparse/') + 1 :]}:{frame.lineno}"
    return f"{site} {type(exc).__name__}"


def _invoke(runner: object, args: list[str]) -> tuple[int, str, BaseException | None]:
    from logparse.cli.main import main

    res = runner.invoke(main, args, env={"LOGDIAG_DEBUG": "1"}, catch_exceptions=True)  # type: ignore[attr-defined]
    exc = res.exception if res.exception is not None and not isinstance(res.exception, SystemExit) else None
    out = res.stdout if hasattr(res, "stdout") else res.output
    return res.exit_code, out + (res.stderr if getattr(res, "stderr_bytes", None) else ""), exc


def run_case(text: str | bytes, workdir: str, *, html: bool = False, secrets: Sequence[str] = (),
             payloads: Sequence[str] = (), kinds: Sequence[str] = ("decode_batch",),
             timeout: float = 0.0, report: bool = True) -> CaseResult:
    """Write the log, run every command on it in-process, check the properties."""
    from click.testing import CliRunner

    res = CaseResult()
    path = os.path.join(workdir, "case.log")
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2: stderr is always separate
        runner = CliRunner()
    commands: dict[str, list[str]] = {
        "analyze": ["analyze", path, "--format", "json", "--jobs", "1"],
        "check-sarif": ["check", path, "--format", "sarif"],
    }
    if report:
        commands["report-json"] = ["report", path, "-o", os.path.join(workdir, "r.json")]
    for kind in kinds:
        commands[f"events-{kind}"] = ["events", path, "--kind", kind]
    if html:
        commands["report-html"] = ["report", path, "-o", os.path.join(workdir, "r.html")]
    for name, args in commands.items():
        if timeout:
            signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            code, out, exc = _invoke(runner, args)
        except CaseTimeout as err:  # raised outside the command's own handler
            code, out, exc = 3, "", err
        finally:
            if timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
        if exc is not None or code == 3:
            res.crashes.append(crash_site(exc) if exc is not None else f"{name}: exit 3")
            continue
        if name.startswith("report"):
            target = args[-1]
            try:
                out = Path(target).read_text(encoding="utf-8", errors="replace")
            except OSError:
                out = ""
        res.outputs[name] = out
        if name == "analyze" and code == 2:
            # An input refused with one line and exit 2 (an empty file, say) is not an
            # accounting error; it is counted apart, with its message, to be read.
            res.refused.append(out.strip().splitlines()[-1][:160] if out.strip() else "exit 2")
        elif name == "analyze":
            res.accounting.extend(accounting_errors(out))
    check_outputs(res, secrets, payloads)
    return res


def run_isolated(text: str | bytes, workdir: str, **kw: object) -> tuple[CaseResult, float]:
    """`run_case` in a forked child: one case's memory cannot leak into the next (click's
    CliRunner leaves a cached stream wrapper per invocation behind, ~0.2 MiB a command, which is
    the harness's, not logdiag's), and the child's own peak RSS is that input's memory figure.
    A child killed by a signal or by the memory limit is a crash of that case."""
    import pickle

    if not hasattr(os, "fork"):
        return run_case(text, workdir, **kw), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # type: ignore[arg-type]
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the result, leave without running the parent's clean-up
        code = 0
        try:
            os.close(rfd)
            res = run_case(text, workdir, **kw)  # type: ignore[arg-type]
            res.outputs = {}  # the parent checks nothing more; keep the pipe small
            with os.fdopen(wfd, "wb") as fh:
                pickle.dump(res, fh)
        except BaseException:  # noqa: BLE001 — reported by the parent as a crash of the case
            code = 70
        os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        data = fh.read()
    _, status, usage = os.wait4(pid, 0)
    peak = usage.ru_maxrss / 1024
    if data and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return pickle.loads(data), peak
    res = CaseResult()
    how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
    res.crashes.append(f"harness: case process ended by {how}")
    return res, peak


def accounting_errors(analyze_json: str) -> list[str]:
    """recognized + unparsed == total == lines read, for every file of an `analyze` JSON."""
    try:
        data = json.loads(analyze_json)
    except ValueError:
        return ["analyze output is not JSON"]
    errors = []
    for f in data.get("files", []):
        cov, rd = f.get("coverage", {}), f.get("read", {})
        if cov.get("recognized", 0) + cov.get("unparsed", 0) != cov.get("total"):
            errors.append(f"recognized+unparsed != total in {f.get('path')}")
        if "lines" in rd and rd["lines"] != cov.get("total"):
            errors.append(f"total {cov.get('total')} != lines read {rd['lines']}")
    return errors


def check_outputs(res: CaseResult, secrets: Sequence[str], payloads: Sequence[str]) -> None:
    """Leaked secrets and live injections in any output of the case."""
    for name, out in res.outputs.items():
        for s in secrets:
            if s in out:
                res.leaks.append(f"{name}: {s[:12]}…")
        if name == "report-html" and re.search(r"<script(?![^>]*type=\"application/json\")[^>]*>\s*alert", out):
            res.injections.append(f"{name}: raw <script>")
        for p in payloads:
            if p.startswith(("::", "##[")) and any(line.lstrip().startswith(p) for line in out.splitlines()):
                res.injections.append(f"{name}: workflow command {p[:8]}")
        if name.startswith("events") and payloads:
            for line in out.splitlines()[1:]:
                for cell in line.split(","):
                    if cell[:1] in ("=", "+", "@") and cell.strip('"') in payloads:
                        res.injections.append(f"{name}: formula cell")


@dataclass
class Figures:
    """Campaign totals."""

    cases: int = 0
    crashed_cases: int = 0
    sites: Counter[str] = field(default_factory=Counter)
    accounting: int = 0
    leaks: int = 0
    injections: int = 0
    issues: Counter[str] = field(default_factory=Counter)  # accounting errors, leaks, injections by kind
    examples: dict[str, str] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    peak_rss_mib: float = 0.0  # the largest one-case process (every command on that input)
    peak_input_bytes: int = 0  # the size of that input

    def add(self, res: CaseResult, text: str | bytes, peak: float = 0.0) -> None:
        if peak > self.peak_rss_mib:
            self.peak_rss_mib = peak
            self.peak_input_bytes = len(text)
        self.cases += 1
        for why in res.refused:
            self.refused[re.sub(r"\S*case\.log", "case.log", why)] += 1
        if res.crashes:
            self.crashed_cases += 1
            for site in res.crashes:
                self.sites[site] += 1
                self.examples.setdefault(site, text[:300] if isinstance(text, str) else repr(text[:300]))
        self.accounting += bool(res.accounting)
        self.leaks += bool(res.leaks)
        self.injections += bool(res.injections)
        for what in (*res.accounting, *res.leaks, *res.injections):
            self.issues[what] += 1
            self.examples.setdefault(what, text[:300] if isinstance(text, str) else repr(text[:300]))

    def merge(self, other: Figures) -> None:
        self.cases += other.cases
        self.crashed_cases += other.crashed_cases
        self.sites.update(other.sites)
        self.issues.update(other.issues)
        self.accounting += other.accounting
        self.leaks += other.leaks
        self.injections += other.injections
        self.refused.update(other.refused)
        if other.peak_rss_mib > self.peak_rss_mib:
            self.peak_rss_mib, self.peak_input_bytes = other.peak_rss_mib, other.peak_input_bytes
        for k, v in other.examples.items():
            self.examples.setdefault(k, v)


def _mutated_cases(cases: int, seed: int, seeds: Sequence[Sequence[str]]) -> Iterator[tuple[int, str]]:
    """The mutated logs, numbered: the same cases whatever the number of workers."""
    rng = random.Random(seed)
    for i in range(cases):
        base = rng.choice(seeds)
        yield i, mutate(rng, base, seeds)


def _rss_now_mib() -> float:
    """This process's resident set size now (Linux /proc; 0 where it is not available)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _checkpoint(folder: str, index: int, mutated: Figures, subst: Figures) -> None:
    """This worker's figures so far, as JSON (a long campaign can be read before it ends)."""
    if not folder:
        return
    data = {name: {"cases": f.cases, "crashed_cases": f.crashed_cases, "sites": dict(f.sites),
                   "accounting": f.accounting, "leaks": f.leaks, "injections": f.injections,
                   "issues": dict(f.issues), "refused": dict(f.refused), "peak_rss_mib": f.peak_rss_mib,
                   "peak_input_bytes": f.peak_input_bytes} for name, f in (("mutated", mutated), ("numbers", subst))}
    data["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # type: ignore[assignment]
    # The resident size now, next to the peak: a series of checkpoints shows whether memory grows
    # with the number of cases (a leak) or only with one input (bounded per case).
    data["rss_now_mib"] = _rss_now_mib()  # type: ignore[assignment]
    tmp = os.path.join(folder, f"worker-{index}.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, os.path.join(folder, f"worker-{index}.json"))


def _worker(args: tuple[int, int, int, int | None, int, int, int, float, int, str]) -> tuple[Figures, Figures, float]:
    """One worker's share (every `workers`-th case) of both campaigns; its figures and peak RSS."""
    index, workers, cases, numbers, seed, html_every, per_field, timeout, report_every, checkpoint = args
    from logparse.grammar.build import get_parser

    get_parser().lark  # build LALR before the clock starts: a cold build is not a hang  # noqa: B018
    if html_every:
        import matplotlib.pyplot  # noqa: F401 — the first HTML report's import is not a hang either
    seeds = load_seeds()
    mutated, subst = Figures(), Figures()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="logdiag-fuzz-") as work:
        # Every seed log, unmutated, once here first: every module, template and lazily compiled
        # pattern (the fast path compiles its alternatives per first character on first use) is
        # loaded before the forks, which share it instead of each paying for it again (5x slower).
        run_case("\n".join(line for seed in seeds for line in seed) + "\n", work, html=html_every > 0,
                 report=True, kinds=("decode_batch", "prefill_batch", "http_access", "traceback"))
        for i, text in _mutated_cases(cases, seed, seeds):
            if i % workers != index:
                continue
            res, peak = run_isolated(text, work, html=html_every > 0 and i % html_every == 0, secrets=SECRETS,
                                     payloads=INJECTIONS, timeout=timeout, report=i % report_every == 0)
            mutated.add(res, text, peak)
            if i % 100 < workers:
                _checkpoint(checkpoint, index, mutated, subst)
            if index == 0 and i % 500 < workers:
                print(f"  mutated {i + 1}/{cases} ({time.monotonic() - t0:.0f} s, {mutated.crashed_cases} crashed "
                      f"in this worker)", file=sys.stderr, flush=True)
        lines = substitution_campaign(seeds, per_field)
        if numbers is not None and numbers < len(lines):
            lines = random.Random(seed).sample(lines, numbers)
        for i in range(index, len(lines), workers):
            line = lines[i]
            res, peak = run_isolated(line + "\n", work, timeout=timeout,
                                     kinds=("decode_batch", "prefill_batch", "http_access", "traceback"))
            subst.add(res, line, peak)
            if i % 100 < workers:
                _checkpoint(checkpoint, index, mutated, subst)
            if index == 0 and i % 1000 < workers:
                print(f"  numbers {i + 1}/{len(lines)} ({time.monotonic() - t0:.0f} s, {subst.crashed_cases} crashed "
                      f"in this worker)", file=sys.stderr, flush=True)
    _checkpoint(checkpoint, index, mutated, subst)
    return mutated, subst, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def campaign(cases: int, numbers: int | None, seed: int, html_every: int, per_field: int = 2,
             timeout: float = 60.0, workers: int = 1, report_every: int = 1,
             checkpoint: str = "") -> tuple[Figures, Figures, float]:
    """Run the mutated-log cases and the number-substitution cases; their figures and the peak
    RSS (MiB) of the process that ran them (the largest worker's)."""
    jobs = [(w, workers, cases, numbers, seed, html_every, per_field, timeout, max(1, report_every), checkpoint)
            for w in range(workers)]
    if workers == 1:
        parts = [_worker(jobs[0])]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_worker, jobs))
    mutated, subst = Figures(), Figures()
    for m, n, _ in parts:
        mutated.merge(m)
        subst.merge(n)
    return mutated, subst, max(p[2] for p in parts)


def _print(title: str, f: Figures) -> None:
    print(f"{title}: {f.cases} cases, {f.crashed_cases} crashed ({len(f.sites)} distinct sites), "
          f"{f.accounting} accounting errors, {f.leaks} with leaked secrets, {f.injections} with injections, "
          f"largest one-case peak RSS {f.peak_rss_mib:.0f} MiB (a {f.peak_input_bytes:,}-character input)")
    for site, n in f.sites.most_common():
        print(f"  {n:6d}  {site}   e.g. {f.examples[site][:120]!r}")
    for why, n in f.refused.most_common(5):
        print(f"  {n:6d}  refused with exit 2: {why}")
    for what, n in f.issues.most_common(15):
        print(f"  {n:6d}  {what}   e.g. {f.examples[what][:120]!r}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10_000, help="mutated logs (default 10000)")
    ap.add_argument("--numbers", type=int, default=None, help="number-substitution cases (default: all)")
    ap.add_argument("--per-field", type=int, default=2, help="hostile values per number field (default 2)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the cases (default 1)")
    ap.add_argument("--checkpoint", default="", metavar="DIR",
                    help="write each worker's figures so far to DIR/worker-N.json every 100 cases")
    ap.add_argument("--report-every", type=int, default=1,
                    help="run `report -o x.json` on every N-th mutated log (default 1: all; it is the slowest command)")
    ap.add_argument("--case-timeout", type=float, default=60.0, help="seconds per command before it counts as a hang")
    ap.add_argument("--memory-limit-mb", type=int, default=3072,
                    help="address-space limit of this process: an exploding input fails with MemoryError")
    ap.add_argument("--html-every", type=int, default=250, help="also render HTML every N mutated cases (0: never)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    if args.memory_limit_mb:
        limit = args.memory_limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    mutated, subst, peak = campaign(args.cases, args.numbers, args.seed, args.html_every, args.per_field,
                                    timeout=args.case_timeout, workers=args.workers,
                                    report_every=args.report_every, checkpoint=args.checkpoint)
    _print("mutated logs", mutated)
    _print("number substitution", subst)
    total = len(mutated.sites | subst.sites)
    print(f"total: {mutated.cases + subst.cases} cases, {mutated.crashed_cases + subst.crashed_cases} crashed, "
          f"{total} distinct crash sites, {mutated.accounting + subst.accounting} accounting errors, "
          f"{mutated.leaks + subst.leaks} leaks, {mutated.injections + subst.injections} injections, "
          f"largest one-case peak RSS {max(mutated.peak_rss_mib, subst.peak_rss_mib):.0f} MiB, "
          f"harness peak RSS {peak:.0f} MiB, {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
