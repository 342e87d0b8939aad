"""A remedy never proposes what the attempt already set: drop the alternatives whose settings
(`--flag value`, `VAR=value` in backticks) the launch attempt already has."""

from __future__ import annotations

import re

from logparse.model.findings import Finding
from logparse.run.launches import Launch

# Alternatives of a remedy: "`A`, or `B`", "`A`; `B`", "`A` or `B`".
_ALTERNATIVES = re.compile(r",?\s+or\s+(?=`)|;\s+(?=`)")
_CODE = re.compile(r"`([^`]+)`")
_SETTING = re.compile(r"^(?:--[A-Za-z0-9][\w-]*(?:[ =][^\s-][^\s]*)?|[A-Z][A-Z0-9_]*=\S*)$")


def settings_of(text: str) -> list[str]:
    """The `--flag value` and `VAR=value` settings written in backticks in a remedy's text."""
    out: list[str] = []
    for code in _CODE.findall(text):
        for part in re.split(r"\s+(?=--)", code.strip()):
            if _SETTING.match(part.strip()):
                out.append(part.strip())
    return out


def drop_already_set(f: Finding, launch: Launch) -> None:
    """Remove the remedy's alternatives that only ask for what the attempt already set; when every
    alternative does, keep the text and say so (the cause lies elsewhere). The dropped settings go
    to `data["remedy_already_set"]`."""
    if not f.remedy:
        return
    parts = _ALTERNATIVES.split(f.remedy)
    kept: list[str] = []
    done: list[str] = []
    for part in parts:
        settings = settings_of(part)
        if settings and all(launch.sets(s) for s in settings):
            done.extend(settings)
        else:
            kept.append(part)
    # Inside the alternatives that stay, a code span the attempt already set is marked as such.
    marked: list[str] = []
    for i, part in enumerate(kept):
        for code in dict.fromkeys(_CODE.findall(part)):
            settings = settings_of(f"`{code}`")
            if settings and all(launch.sets(s) for s in settings):
                part = part.replace(f"`{code}`", f"`{code}` (already set)")
                marked.extend(settings)
        kept[i] = part
    if not done and not marked:
        return
    f.data["remedy_already_set"] = done + marked
    if not kept:
        f.remedy = f"(already set by this launch: {', '.join(done)}) {f.remedy}"
    elif done:
        f.remedy = " or ".join(kept)
    else:
        f.remedy = _rejoin(f.remedy, kept)  # nothing dropped: the original separators stay


def _rejoin(original: str, parts: list[str]) -> str:
    """The remedy with its alternatives replaced by `parts`, keeping the original separators."""
    seps = _ALTERNATIVES.findall(original)
    out = parts[0]
    for sep, part in zip(seps, parts[1:], strict=False):
        out += sep + part
    return out
