"""Baselines: fingerprints of accepted findings, so that CI fails only on new ones.

A fingerprint must survive a rerun of the same problem: other timestamps, other line numbers
(lines added above), other PIDs, ports, sizes, temp paths and rank counts. So it is made of the
rule name and the finding's evidence text with timestamps, hex, paths (directories; the file
name stays), IP addresses and numbers masked, the masked lines de-duplicated and sorted
(interleaved ranks print in any order, and 7 or 8 ranks printing the same line is one problem).
The log's own path is not part of it: nightly logs are usually named after the date.

A baseline file is a previous `logdiag check --format json` output (`--write-baseline` writes
one). `logdiag analyze --format json` output and logdiag SARIF are accepted too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FINGERPRINT_KEY", "Baseline", "BaselineError", "fingerprint", "load_baseline", "normalize"]

FINGERPRINT_KEY = "logdiag/v1"  # the SARIF partialFingerprints key; bump when the recipe changes

_MASKS: list[tuple[re.Pattern[str], str]] = [
    # 2026-01-31 12:00:00.123, 2026-01-31T12:00:00Z, +02:00 offsets
    (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?"), "<ts>"),
    (re.compile(r"\b\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d+)?"), "<ts>"),  # MM-DD HH:MM:SS (torch, vLLM)
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<ts>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b"), "<hex>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    # a path of two or more components: keep its last component (scheduler.py), mask the rest
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.+@~-]+)+[\\/](?=[\w.+@~-])"), "<path>/"),
    (re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"), "#"),
    (re.compile(r"\s+"), " "),
]


class BaselineError(Exception):
    """A baseline file that cannot be read or is not a logdiag output; str() is one line."""


def normalize(text: str) -> str:
    """One evidence line → the form that is stable across reruns."""
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text.strip()


def fingerprint(name: str, evidence_texts: Iterable[str], message: str = "") -> str:
    """sha256 of the rule name and the sorted set of normalized evidence lines (the normalized
    message when there is no evidence); 32 hex digits."""
    lines = sorted({normalize(t) for t in evidence_texts} - {""})
    if not lines:
        lines = [normalize(message)]
    h = hashlib.sha256()
    h.update(name.encode())
    for line in lines:
        h.update(b"\n")
        h.update(line.encode("utf-8", "replace"))
    return h.hexdigest()[:32]


def finding_fingerprint(finding: Any) -> str:
    """The fingerprint of a `Finding` (its evidence texts must be filled, as the engine does)."""
    texts = [t for ev in finding.evidence for _, t in ev.lines]
    return fingerprint(finding.name, texts, finding.message)


@dataclass
class Baseline:
    path: str
    fingerprints: set[str] = field(default_factory=set)

    def __contains__(self, fp: object) -> bool:
        return fp in self.fingerprints

    def __len__(self) -> int:
        return len(self.fingerprints)


def _dict_fingerprint(item: dict[str, Any]) -> str | None:
    """A finding dict of a check JSON (has 'fingerprint') or an analyze JSON (recomputed)."""
    fp = item.get("fingerprint")
    if isinstance(fp, str) and fp:
        return fp
    name = item.get("name")
    if not isinstance(name, str):
        return None
    evidence = item.get("evidence")
    texts = [e.get("text", "") for e in evidence if isinstance(e, dict)] if isinstance(evidence, list) else []
    return fingerprint(name, [t for t in texts if isinstance(t, str)], str(item.get("message", "")))


def _walk_analyze(findings: Any) -> Iterator[dict[str, Any]]:
    # Iterative: a hostile file's nesting must not reach the recursion limit.
    stack = [findings]
    while stack:
        level = stack.pop()
        for f in level if isinstance(level, list) else []:
            if isinstance(f, dict):
                yield f
                stack.append(f.get("consequences"))


def fingerprints_of(doc: Any) -> set[str] | None:
    """The fingerprints in a check JSON, analyze JSON or logdiag SARIF document (None: none of these)."""
    if not isinstance(doc, dict):
        return None
    out: set[str] = set()
    if isinstance(doc.get("findings"), list):  # logdiag check --format json
        items: Iterable[dict[str, Any]] = (f for f in doc["findings"] if isinstance(f, dict))
    elif isinstance(doc.get("files"), list):  # logdiag analyze --format json
        items = (f for entry in doc["files"] if isinstance(entry, dict) for f in _walk_analyze(entry.get("findings")))
    elif isinstance(doc.get("runs"), list):  # SARIF written by logdiag check
        for run in doc["runs"]:
            results = run.get("results") if isinstance(run, dict) else None
            for res in results if isinstance(results, list) else []:
                prints = res.get("partialFingerprints") if isinstance(res, dict) else None
                fp = prints.get(FINGERPRINT_KEY) if isinstance(prints, dict) else None
                if isinstance(fp, str):
                    out.add(fp)
        return out
    else:
        return None
    for item in items:
        fp = _dict_fingerprint(item)
        if fp:
            out.add(fp)
    return out


# A baseline is a JSON report of findings: megabytes at most. Reading is bounded so that
# `--baseline /dev/zero` (or a huge wrong file) is an error, not gigabytes of memory.
MAX_BASELINE_BYTES = 64 << 20


def load_baseline(path: str) -> Baseline:
    """Read a baseline file (check JSON, analyze JSON or logdiag SARIF). Raises BaselineError
    with one line for every problem: unreadable, too large, not JSON, nested too deep, not a
    logdiag output."""
    try:
        with open(path, "rb") as f:
            if stat.S_ISCHR(os.fstat(f.fileno()).st_mode):
                raise BaselineError(f"cannot read baseline {path}: a character device, not a file")
            raw = f.read(MAX_BASELINE_BYTES + 1)
    except FileNotFoundError:
        raise BaselineError(f"cannot read baseline {path}: No such file or directory") from None
    except IsADirectoryError:
        raise BaselineError(f"cannot read baseline {path}: Is a directory") from None
    except OSError as err:
        raise BaselineError(f"cannot read baseline {path}: {err.strerror or err}") from None
    if len(raw) > MAX_BASELINE_BYTES:
        raise BaselineError(f"baseline {path} is larger than {MAX_BASELINE_BYTES >> 20} MiB; "
                            "write one with --write-baseline")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BaselineError(f"baseline {path} is not JSON ({err}); write one with --write-baseline") from None
    except RecursionError:
        raise BaselineError(f"baseline {path} is not a logdiag output (JSON nested too deeply)") from None
    try:
        fps = fingerprints_of(doc)
    except RecursionError:
        fps = None
    if fps is None:
        raise BaselineError(f"baseline {path} is not a logdiag check --format json output (no 'findings' list)")
    return Baseline(path=path, fingerprints=fps)
