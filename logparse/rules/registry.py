"""The rule registry: a decorator that records each rule's metadata; its docstring is its documentation."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from logparse.model.events import Severity
from logparse.model.record import Record, record

if TYPE_CHECKING:
    from logparse.model.findings import Finding
    from logparse.rules.context import RuleContext

RuleFn = Callable[["RuleContext"], Iterable["Finding"]]

DOC_SECTIONS = ("What it means", "Why it matters", "Example", "Fix")
# Where in a run's life a diagnosis can happen: decides a crash's stage when the traceback's frames
# do not (a lone `KeyError: '…k_scale'` line is a start-up failure; a leak check runs after batches).
STAGES = ("startup", "serving", "served")
FAMILIES = ("memory", "distributed", "hang", "kernels", "quantization", "speculative", "server", "performance", "info",
            "custom")  # custom: plugin rules that belong to no built-in family


# A record, not a @dataclass: the same frozen contract without generating its methods at import
# (every run imports the registry).
@record
class Rule(Record):
    code: str  # MEM001 — stable, unique
    name: str  # cuda-oom — kebab-case, names the problem; the public identifier
    family: str
    severity: Severity  # default severity; a finding may raise or lower it with evidence
    status: str  # stable / preview
    needs: tuple[str, ...]  # the views the rule reads (documentation, and skipping when absent)
    fn: RuleFn
    fallback: bool = False  # runs after the specific rules, on evidence no specific rule claimed
    # Declared roles: the engine decides outcome and root cause from these, never from rule names.
    # stage: "startup" (can only happen while a server starts), "served" (only after requests were
    # served), "serving", or None (any time; the traceback's frames decide).
    stage: str | None = None
    hang: bool = False  # an error of this rule means the run hangs rather than crashes
    # A generic error that, after a root cause in the same launch, is the teardown of that failure
    # (a scheduler crash, an NCCL error, a failed health check) rather than a second problem.
    follow_on: bool = False
    crash: bool = False  # by definition stands for an exception that killed a process
    origin: str = "logdiag"  # the distribution that registered the rule (plugins: their package)
    fixture_dir: str = ""  # plugins: their fixtures/<name>/ folder; built-ins: fixtures/rules/<name>/
    summary: str = ""  # one line: the first line of the docstring
    doc: str = ""
    sections: dict[str, str] = field(default_factory=dict)

    def __call__(self, ctx: RuleContext) -> Iterable[Finding]:
        return self.fn(ctx)


REGISTRY: dict[str, Rule] = {}  # by name
# The distribution whose rules are being registered (the plugin loader sets it while importing one).
_ORIGIN = ["logdiag"]
BY_CODE: dict[str, Rule] = {}


def _sections(doc: str) -> dict[str, str]:
    """Split a docstring at its '**What it means**' … heading lines (a line that is only a bold title)."""
    out: dict[str, str] = {}
    title: str | None = None
    body: list[str] = []
    for line in doc.splitlines():
        bare = line.strip()
        if len(bare) > 4 and bare.startswith("**") and bare.endswith("**") and "**" not in bare[2:-2]:
            if title is not None:
                out[title] = "\n".join(body).strip()
            title, body = bare[2:-2].strip(), []
        elif title is not None:
            body.append(line)
    if title is not None:
        out[title] = "\n".join(body).strip()
    return out


def rule(
    *,
    code: str,
    name: str,
    family: str,
    severity: Severity,
    status: str = "stable",
    needs: tuple[str, ...] = (),
    fallback: bool = False,
    stage: str | None = None,
    hang: bool = False,
    follow_on: bool = False,
    crash: bool = False,
) -> Callable[[RuleFn], Rule]:
    """Register a rule function. Its docstring: a one-line summary, then the sections
    **What it means**, **Why it matters**, **Example**, **Fix**.

    Order of execution (engine.execute): specific rules by code, then `fallback=True` rules (on what
    no specific rule claimed), then rules whose `needs` include "findings" (they read
    `ctx.findings`, every other rule's findings — e.g. startup-stalled speaks only when no error
    explains the end of the log)."""

    def register(fn: RuleFn) -> Rule:
        if name in REGISTRY or code in BY_CODE:
            raise ValueError(f"duplicate rule {code} {name}")
        if family not in FAMILIES:
            raise ValueError(f"rule {name}: unknown family {family}")
        if stage is not None and stage not in STAGES:
            raise ValueError(f"rule {name}: unknown stage {stage}")
        doc = inspect.cleandoc(fn.__doc__ or "")
        r = Rule(code=code, name=name, family=family, severity=severity, status=status, needs=needs, fn=fn,
                 fallback=fallback, stage=stage, hang=hang, follow_on=follow_on, crash=crash,
                 origin=_ORIGIN[0], summary=doc.split("\n", 1)[0].strip(), doc=doc, sections=_sections(doc))
        REGISTRY[name] = r
        BY_CODE[code] = r
        return r

    return register


def lookup(key: str) -> Rule | None:
    """A rule by name or code (case-insensitive code)."""
    return REGISTRY.get(key) or BY_CODE.get(key.upper())


def all_rules() -> list[Rule]:
    return sorted(REGISTRY.values(), key=lambda r: r.code)


def describe(r: Rule) -> dict[str, Any]:
    return {"code": r.code, "name": r.name, "family": r.family, "severity": str(r.severity), "status": r.status,
            "summary": r.summary, "needs": list(r.needs), "origin": r.origin,
            "roles": {"stage": r.stage, "hang": r.hang, "follow_on": r.follow_on, "crash": r.crash,
                      "fallback": r.fallback},
            "sections": r.sections}
