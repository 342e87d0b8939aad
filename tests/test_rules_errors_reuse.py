"""rules.errors.find_message on a failure-heavy log: every rank raises the same exception, so each
distinct exception text is matched against the asked codes once, and every hit still gets a
fields dict of its own (a rule may add to it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logparse.parsing.pipeline import parse_file
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.run.views import Views

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def test_repeated_exceptions_are_matched_once_per_text(tmp_path: Path) -> None:
    lines = []
    for rank in range(8):
        lines += [
            f"[2026-04-14 09:15:0{rank} TP{rank}] Scheduler hit an exception: Traceback (most recent call last):",
            f'  File "{SG}/managers/scheduler.py", line 3183, in run_scheduler_process',
            "    scheduler.event_loop_normal()",
            "ValueError: dist_init_port=30005 is used by other processes after waiting 30 seconds. "
            "[Errno 98] Address already in use",
            "",
        ]
    path = tmp_path / "x.log"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    log = parse_file(str(path))
    ctx = RuleContext(log, Views(log))
    asked: list[tuple[str, str]] = []
    inner = ctx.match

    def counted(code: str, text: str) -> Any:
        asked.append((code, text))
        return inner(code, text)

    ctx.match = counted  # type: ignore[method-assign]
    hits = find_message(ctx, ("cuda-oom", "port-in-use"), texts=False)
    assert len(hits) == 8 and {h.code for h in hits} == {"port-in-use"}
    assert len(asked) == len(set(asked)) == 2, asked  # one text, two codes: once each
    hits[0].fields["extra"] = 1
    assert all("extra" not in h.fields for h in hits[1:])
