"""`logdiag rules` (the catalog) and `logdiag rule NAME|CODE` (one rule's documentation and example);
`docs/rules.md` is generated from the same registry (`python -m logparse.cli.rules > docs/rules.md`)."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import click

from logparse.rules.registry import DOC_SECTIONS, Rule, describe

FIXTURE_EXCERPT_LINES = 40
_WIDTH = 100


def fixtures_dir() -> Path | None:
    """fixtures/rules/ of a source checkout (the examples are not shipped in the wheel)."""
    folder = Path(__file__).resolve().parents[2] / "fixtures" / "rules"
    return folder if folder.is_dir() else None


def fixture_paths(r: Rule) -> dict[str, Path]:
    """The rule's fixture files that exist: {'bad': …/bad.log, 'good': …/good.log} (a plugin rule's
    come from its own package)."""
    folder = Path(r.fixture_dir).parent if r.fixture_dir else fixtures_dir()
    if folder is None:
        return {}
    out = {}
    for kind in ("bad", "good"):
        p = folder / r.name / f"{kind}.log"
        if p.is_file():
            out[kind] = p
    return out


def _catalog() -> list[Rule]:
    from logparse.rules import all_rules

    return all_rules()


def _lookup(key: str) -> Rule | None:
    from logparse.rules import lookup

    return lookup(key)


# --------------------------------------------------------------------------- renderings


def rules_text(rules: list[Rule]) -> str:
    from logparse.rules.plugins import PROBLEMS

    rows = [(r.code, r.name, r.family, str(r.severity), r.status, r.origin, r.summary) for r in rules]
    head = ("CODE", "NAME", "FAMILY", "SEVERITY", "STATUS", "ORIGIN", "SUMMARY")
    n = len(head) - 1
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(n)]
    out = []
    for row in [head, *rows]:
        cells = [row[i].ljust(widths[i]) for i in range(n)]
        line = "  ".join(cells) + "  " + row[n]
        out.append(line if len(line) <= _WIDTH + 60 else line[: _WIDTH + 59] + "…")
    plugins = sorted({r.origin for r in rules} - {"logdiag"})
    origin = f" ({len(rules) - sum(r.origin != 'logdiag' for r in rules)} built in; plugins: {', '.join(plugins)})" if plugins else ""
    out.append(
        f"\n{len(rules)} rules{origin}. `logdiag rule NAME` shows one rule's documentation and its example."
    )
    out.extend(f"plugin problem: {p}" for p in PROBLEMS)
    return "\n".join(out) + "\n"


def rules_json(rules: list[Rule]) -> str:
    items = []
    for r in rules:
        d = describe(r)
        d["fallback"] = r.fallback
        d["fixtures"] = sorted(fixture_paths(r))
        items.append(d)
    from logparse.rules.plugins import PROBLEMS

    problems = [{"origin": p.origin, "entry_point": p.entry_point, "rule": p.rule, "reason": p.reason}
                for p in PROBLEMS]
    return json.dumps({"rules": items, "plugin_problems": problems}, indent=2, ensure_ascii=False) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def rules_markdown(rules: list[Rule]) -> str:
    """The whole docs/rules.md page, deterministic (generated from the registry's docstrings)."""
    out = [
        "# Rule catalog",
        "",
        (
            "<!-- Generated from the rule registry by `python -m logparse.cli.rules > docs/rules.md`"
            " (or `logdiag rules --format md`); do not edit by hand: tests/test_rule_docs.py fails when it is stale. -->"
        ),
        "",
        (
            "Every diagnosis logdiag can report. Names are the stable public identifiers (configuration,"
            " `--select`/`--ignore`, JSON output); codes group them by family. Each rule has a real log"
            " excerpt that makes it fire (`fixtures/rules/<name>/bad.log`) and one that must not"
            " (`good.log`); `logdiag rule NAME` prints the documentation with that example."
        ),
        "",
        "A *fallback* rule fires only on evidence that no specific rule explained.",
        "",
        "| code | name | family | severity | status | summary |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        name = f"[`{r.name}`](#{r.name})" + (" (fallback)" if r.fallback else "")
        out.append(
            f"| {r.code} | {name} | {r.family} | {r.severity} | {r.status} | {_md_escape(r.summary)} |"
        )
    for r in rules:
        out += ["", f"## {r.name}", ""]
        meta = (
            f"`{r.code}` · family **{r.family}** · default severity **{r.severity}** · {r.status}"
        )
        if r.fallback:
            meta += " · fallback"
        if r.needs:
            meta += " · reads: " + ", ".join(r.needs)
        out += [meta, "", r.summary, ""]
        for section in DOC_SECTIONS:
            out += [f"**{section}**", "", r.sections.get(section, "").strip(), ""]
        out.append(
            f"Fixtures: `fixtures/rules/{r.name}/bad.log` (fires), `fixtures/rules/{r.name}/good.log` (does not)."
        )
    return "\n".join(out).rstrip() + "\n"


def rule_text(r: Rule) -> str:
    out = [
        f"{r.name} ({r.code}) — family {r.family}, default severity {r.severity}, {r.status}"
        + (", fallback (fires only on evidence no specific rule explained)" if r.fallback else ""),
        "",
        r.summary,
        "",
    ]
    for section in DOC_SECTIONS:
        out.append(section)
        body = r.sections.get(section, "").strip()
        out.extend("  " + line if line else "" for line in body.splitlines())
        out.append("")
    paths = fixture_paths(r)
    bad = paths.get("bad")
    if bad is None:
        out.append(
            "Fixture example: not available (fixtures/rules/ is part of the source checkout, not the wheel)."
        )
    else:
        lines = bad.read_text(encoding="utf-8", errors="replace").splitlines()
        shown = excerpt_lines(r, bad, len(lines))
        out.append(
            f"Fixture example (fixtures/rules/{r.name}/bad.log, {len(lines)} lines; ► = evidence):"
        )
        evidence = _evidence_lines(r, bad)
        previous = 0
        for n in shown:
            if n > previous + 1:
                out.append("       …")
            mark = "►" if n in evidence else " "
            out.append(f" {mark}{n:>4} | {lines[n - 1][: _WIDTH + 60]}")
            previous = n
        if previous < len(lines):
            out.append(f"       … ({len(lines) - previous} more lines)")
    return "\n".join(out).rstrip() + "\n"


def _evidence_lines(r: Rule, path: Path) -> set[int]:
    """The lines the rule's findings on `path` cite as evidence (empty if it does not fire)."""
    from logparse.engine.core import analyze

    try:
        analysis = analyze(str(path))
    except Exception:  # noqa: BLE001 — the documentation must print even if analysis breaks
        return set()
    return {
        n
        for f in analysis.all_findings()
        if f.name == r.name
        for ev in f.evidence
        for n in range(ev.line, ev.end_line + 1)
    }


def excerpt_lines(r: Rule, path: Path, total: int) -> list[int]:
    """Line numbers to print: the evidence lines with two lines of context each, at most
    FIXTURE_EXCERPT_LINES; the head of the file when the rule cites no line."""
    evidence = sorted(_evidence_lines(r, path))
    if not evidence:
        return list(range(1, min(total, FIXTURE_EXCERPT_LINES) + 1))
    wanted: set[int] = set()
    for n in evidence:
        wanted.update(k for k in range(n - 2, n + 3) if 1 <= k <= total)
        if len(wanted) >= FIXTURE_EXCERPT_LINES:
            break
    return sorted(wanted)[:FIXTURE_EXCERPT_LINES]


# --------------------------------------------------------------------------- commands


@click.command("rules", epilog="\b\nExamples:\n  logdiag rules\n  logdiag rules --format json\n"
               "  logdiag rules --format md")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "md"]), default="text", show_default=True
)
def rules_command(fmt: str) -> None:
    """List the rule catalog (md: the docs/rules.md page)."""
    rules = _catalog()
    render = {"text": rules_text, "json": rules_json, "md": rules_markdown}[fmt]
    click.echo(render(rules), nl=False)


@click.command("rule", epilog="\b\nExamples:\n  logdiag rule cuda-oom\n  logdiag rule MEM001")
@click.argument("key", metavar="NAME|CODE")
def rule_command(key: str) -> None:
    """Show one rule's documentation and its fixture example."""
    r = _lookup(key) or _lookup(key.lower())
    if r is None:
        names = [x.name for x in _catalog()] + [x.code for x in _catalog()]
        close = difflib.get_close_matches(key, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else " (see: logdiag rules)"
        click.echo(f"logdiag: unknown rule '{key}'{hint}", err=True)
        sys.exit(2)
    click.echo(rule_text(r), nl=False)


def main(argv: list[str] | None = None) -> int:
    """`python -m logparse.cli.rules [OUT]`: write the Markdown catalog to OUT (default stdout)."""
    args = sys.argv[1:] if argv is None else argv
    text = rules_markdown(_catalog())
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
