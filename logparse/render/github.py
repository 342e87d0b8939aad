"""GitHub Actions workflow commands, so findings become annotations on the log's lines:
`::error file=…,line=…,endLine=…,title=…::message` (`::warning`, `::notice` for info).

Escaping follows the Actions toolkit: in the message `%`, `\\r`, `\\n`; in properties also `:`
and `,`. Findings in the baseline are accepted and not annotated."""

from __future__ import annotations

from logparse.gate.report import CheckItem, CheckReport
from logparse.render.check_json import display_path

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(item: CheckItem) -> str:
    props = [f"file={escape_property(display_path(item.path))}"]
    if item.line is not None:
        props.append(f"line={item.line}")
        props.append(f"endLine={item.end_line or item.line}")
    props.append(f"title={escape_property(f'{item.name} ({item.code})')}")
    prefix = ""
    if item.consequence:
        prefix = f"[consequence of {item.cause}] " if item.cause else "[consequence] "
    elif item.root_cause:
        prefix = "[root cause] "
    message = prefix + item.message + (f"\nFix: {item.remedy}" if item.remedy else "")
    return f"::{COMMANDS[str(item.severity)]} {','.join(props)}::{escape_data(message)}"


def render(report: CheckReport) -> str:
    lines = [command(i) for i in report.items if not i.baselined]
    return "".join(line + "\n" for line in lines)
