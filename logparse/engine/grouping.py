"""Group repeated findings: the same problem on several ranks or for several requests → one finding."""

from __future__ import annotations

from logparse.model.findings import Evidence, Finding
from logparse.model.linesets import LineSet
from logparse.run.ranks import rank_key, rank_range
from logparse.run.vocab import severity_rank

MAX_GROUPED_EVIDENCE = 64
# A rule may put this placeholder in a message: the engine puts " on TP0–TP7 (8 times)" there.
WHERE = "{where}"


def _group_key(f: Finding) -> tuple[str, str, bool]:
    from logparse.model.text import mask_numbers

    return (f.name, f.fingerprint or mask_numbers(f.message), f.consequence)


def group_findings(findings: list[Finding]) -> list[Finding]:
    """Merge findings with the same name and fingerprint (the same traceback on TP0–TP7, the same
    warning per request) into one: ranks merged, occurrences counted, the message says where —
    at the `{where}` placeholder if the rule's message has one, else at the end."""
    groups: dict[tuple[str, str, bool], list[Finding]] = {}
    for f in findings:
        groups.setdefault(_group_key(f), []).append(f)
    out: list[Finding] = []
    for members in groups.values():
        if len(members) == 1:
            f = members[0]
            if WHERE in f.message:
                f.message = f.message.replace(WHERE, f" on {rank_range(f.ranks)}" if f.ranks else "")
            out.append(f)
            continue
        out.append(_merge(members))
    out.sort(key=lambda f: f.first_line)
    return out


def _merge(members: list[Finding]) -> Finding:
    members.sort(key=lambda f: f.first_line)
    first = members[0]
    ranks = sorted({r for f in members for r in f.ranks}, key=rank_key)
    count = sum(f.count for f in members)
    evidence = list(first.evidence)
    seen = {(e.line, e.end_line) for e in evidence}
    for f in members[1:]:
        if len(evidence) >= MAX_GROUPED_EVIDENCE:
            break
        # Later occurrences show the first line of their own problem only (not context lines
        # they share with the first occurrence): the first occurrence shows the rest.
        key = (f.first_line, f.first_line)
        if f.first_line and key not in seen:
            seen.add(key)
            evidence.append(Evidence(first.evidence[0].file if first.evidence else "", *key))
    evidence.sort(key=lambda e: (e.line, e.end_line))
    if WHERE in first.message:
        place = f" on {rank_range(ranks)} ({count} times)" if ranks else f" ({count} times)"
        message = first.message.replace(WHERE, place)
    else:
        where = f"on {rank_range(ranks)}, " if ranks else ""
        message = f"{first.message} ({where}{count} times)"
    return Finding(
        code=first.code,
        name=first.name,
        severity=min((f.severity for f in members), key=severity_rank),
        message=message,
        remedy=first.remedy,
        family=first.family,
        evidence=evidence,
        ranks=ranks,
        data={**first.data, "occurrences": count},
        consequences=[c for f in members for c in f.consequences],
        first_line=first.first_line,
        consequence=first.consequence,
        fingerprint=first.fingerprint,
        claims=LineSet().union(*(f.claims for f in members)),
        count=count,
        stage=first.stage,
    )
