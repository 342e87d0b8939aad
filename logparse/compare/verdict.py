"""The comparability verdict: every setting that differs between a baseline and a candidate
(`key: baseline → candidate`), what only one side states (unknown, never equal), and whether the
differences all lie inside the declared factors or the keys explicitly allowed."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from logparse.compare.factors import NEVER_DIFFERENT, Factor
from logparse.compare.settings import RunSettings
from logparse.run.settings import LaunchSettings

UNSET = "(unset)"  # a variable the captured shell environment did not set
# Settings without which no two runs can be called alike: unknown when neither log states them.
ESSENTIAL = ("model_path", "tp_size")


@dataclass(frozen=True)
class Difference:
    """One setting that differs: its values on both sides and why it is (not) accepted."""

    key: str
    baseline: Any
    candidate: Any
    factor: str | None = None  # the declared factor that owns the key
    allowed: bool = False  # accepted with --allow
    derived: bool = False  # SGLang derives it from the factor

    @property
    def expected(self) -> bool:
        return self.factor is not None or self.allowed

    def as_dict(self) -> dict[str, Any]:
        out = {"key": self.key, "baseline": _plain(self.baseline), "candidate": _plain(self.candidate),
               "expected": self.expected}
        if self.factor:
            out["factor"] = self.factor
        if self.allowed:
            out["allowed"] = True
        if self.derived:
            out["derived"] = True
        return out


@dataclass(frozen=True)
class Unknown:
    """A setting one log states and the other does not (or whose environment it did not capture)."""

    key: str
    stated_in: str  # 'baseline', 'candidate' or 'neither'
    value: Any
    reason: str
    kind: str = "setting"  # 'env', 'bench', 'release' (a server argument one release does not print), 'setting'

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "stated_in": self.stated_in, "value": _plain(self.value), "reason": self.reason,
                "kind": self.kind}


@dataclass
class Verdict:
    """Baseline vs one candidate."""

    baseline: str
    candidate: str
    differences: list[Difference] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def blocking(self) -> list[Difference]:
        return [d for d in self.differences if not d.expected]

    @property
    def comparable(self) -> bool:
        return not self.blocking

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "candidate": self.candidate, "comparable": self.comparable,
                "differences": [d.as_dict() for d in self.differences],
                "unknown": [u.as_dict() for u in self.unknown], "notes": list(self.notes)}


def _plain(v: Any) -> Any:
    """A value for JSON: lists for tuples, text for what JSON cannot hold (`--request-rate inf`)."""
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v if isinstance(v, (int, float, bool, str)) or v is None else str(v)


def _norm(v: Any) -> Any:
    """A value as SGLang reads it: 'None'/None, '1'/True/'true', 4/'4'/4.0 compare equal."""
    if isinstance(v, str):
        t = v.strip().strip("'\"")
        low = t.lower()
        if low in ("none", "null"):
            return None
        if low in ("true", "false"):
            return low == "true"
        try:
            f = float(t)
        except ValueError:
            return t
        return t.lower() if not math.isfinite(f) else int(f) if f.is_integer() else f
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, float):
        return str(v) if not math.isfinite(v) else int(v) if v.is_integer() else v
    if isinstance(v, tuple):
        return tuple(_norm(x) for x in v)
    return v


def same(a: Any, b: Any) -> bool:
    return bool(_norm(a) == _norm(b))


def decide(base: RunSettings, cand: RunSettings, factors: Sequence[Factor], allow: Iterable[str] = ()) -> Verdict:
    """The verdict for baseline vs candidate under the declared factors and allowed keys."""
    allowed = frozenset(allow)
    verdict = Verdict(base.source, cand.source)
    b, c = base.settings, cand.settings
    for key in sorted(set(b.values) | set(c.values)):
        if key in NEVER_DIFFERENT:
            continue
        in_b, in_c = key in b, key in c
        if in_b and in_c:
            if same(b.get(key), c.get(key)):
                continue
            _differ(verdict, key, b.get(key), c.get(key), factors, allowed, base, cand)
            continue
        stated_in, present, other = ("baseline", b, cand) if in_b else ("candidate", c, base)
        value = present.get(key)
        if key.startswith("env:") and other.settings.env_captured:
            # the other side's shell environment is in its log and does not set it: a difference
            pair = (value, UNSET) if in_b else (UNSET, value)
            _differ(verdict, key, pair[0], pair[1], factors, allowed, base, cand)
            continue
        if value is None:
            continue
        verdict.unknown.append(Unknown(key, stated_in, value, _reason(key, other), _kind(key, present, other)))
    for key in ESSENTIAL:
        if key not in b and key not in c:
            verdict.unknown.append(Unknown(key, "neither", None, f"neither log states {key}", "setting"))
    for side in (base, cand):
        if not side.settings.env_captured:
            who = "BASELINE" if side is base else "CANDIDATE"
            verdict.notes.append(f"environment not captured in {who} ({side.source}): "
                                 "NCCL and SGLang variables unknown")
        if not side.settings.bench:
            who = "BASELINE" if side is base else "CANDIDATE"
            verdict.notes.append(f"no benchmark in {who} ({side.source}): benchmark settings unknown")
    return verdict


def _kind(key: str, present: LaunchSettings, other: RunSettings) -> str:
    if key.startswith(("env:", "bench:")):
        return key.split(":", 1)[0]
    stated = present.values[key].source
    if stated == "server_args" and any(s.source == "server_args" for s in other.settings.values.values()):
        return "release"  # both print server_args: the other release has no such argument
    return "setting"


def _reason(key: str, other: RunSettings) -> str:
    who = other.role.upper()
    if key.startswith("env:"):
        return f"environment not captured in {who}: {key[4:]} unknown"
    if key.startswith("bench:"):
        return f"{who} does not state the benchmark's {key[6:]}"
    return f"{who} does not state {key}"


def _differ(verdict: Verdict, key: str, a: Any, b: Any, factors: Sequence[Factor], allowed: frozenset[str],
            base: RunSettings, cand: RunSettings) -> None:
    owner: str | None = None
    derived = False
    for f in factors:
        if f.owns(key):
            owner = f.name
            break
        if key in f.derived and not _explicitly_different(key, base, cand):
            owner, derived = f.name, True
            break
    verdict.differences.append(Difference(key, a, b, owner, key in allowed, derived))


def _explicitly_different(key: str, base: RunSettings, cand: RunSettings) -> bool:
    """A derived key a user set on one command line (or differently on both) is the user's change."""
    eb, ec = key in base.settings.explicit, key in cand.settings.explicit
    if not eb and not ec:
        return False
    return not (eb and ec and same(base.settings.get(key), cand.settings.get(key)))
