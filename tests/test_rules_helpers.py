"""The shared rule helpers: catalog lookups wherever the log shows an error (rules.errors), traceback
structure (rules.frames) and the text helpers of model/text.py."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from logparse.model.events import Frame, Traceback
from logparse.model.text import dated_timestamps, mask_numbers, short
from logparse.parsing.pipeline import parse_file
from logparse.rules.context import RuleContext
from logparse.rules.errors import event_at, find_message
from logparse.rules.frames import is_args_traceback
from logparse.run.views import Views

SG = "/usr/local/lib/python3.12/dist-packages/sglang/srt"


def _ctx(tmp_path: Path, *lines: str) -> RuleContext:
    path = tmp_path / "x.log"
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    log = parse_file(str(path))
    return RuleContext(log, Views(log))


def test_find_message_reports_a_traceback_once_and_lone_lines_too(tmp_path: Path) -> None:
    ctx = _ctx(
        tmp_path,
        "[2026-02-26 16:40:41] Port is already in use. dist_init_port=30005 port_base=30000 nccl_port=30003",
        "Traceback (most recent call last):",
        f'  File "{SG}/server_args.py", line 5488, in init_new',
        '    wait_port_available(dist_init_port, "dist_init_port")',
        "ValueError: dist_init_port=30005 is used by other processes after waiting 30 seconds. [Errno 98] Address "
        "already in use",
    )
    hits = find_message(ctx, "port-in-use")
    assert [h.line for h in hits] == [1, 2]
    assert hits[1].traceback is not None and hits[1].text.startswith("ValueError: dist_init_port=30005")
    assert hits[0].traceback is None and hits[0].event.line == 1
    ctx.claimed.update({1})
    assert [h.line for h in find_message(ctx, "port-in-use")] == [2]
    assert [h.line for h in find_message(ctx, "port-in-use", include_claimed=True)] == [1, 2]


def test_event_at_finds_the_event_of_a_line_or_a_bare_one(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "[2026-03-07 15:29:58 TP0] Init torch distributed begin.", "some unknown text")
    assert event_at(ctx, 1).rank == "TP0"
    bare = event_at(ctx, 2)
    assert (bare.line, bare.end_line, bare.rank) == (2, 2, None)


def _tb(*frames: tuple[str, str]) -> Traceback:
    return Traceback(line=1, end_line=5, exc_type="AssertionError", message="x",
                     frames=tuple(Frame(f"{SG}/{path}", 1, func) for path, func in frames))


def test_argument_tracebacks_are_decided_by_their_frames() -> None:
    assert is_args_traceback(_tb(("entrypoints/engine.py", "_launch_subprocesses"),
                                 ("server_args.py", "check_server_args")))
    assert is_args_traceback(_tb(("cli.py", "main"), ("x.py", "__post_init__")))
    # Raised in a server process (a memory pool while serving): not an argument check, whatever it names.
    assert not is_args_traceback(_tb(("managers/scheduler.py", "event_loop_overlap"),
                                     ("mem_cache/memory_pool.py", "alloc"), ("server_args.py", "__post_init__")))
    assert not is_args_traceback(None)


def test_text_helpers() -> None:
    assert mask_numbers("rid='a1b2c3d4e5f6a7b8c9d0' at 0x7f3a2b, 12.5 GB") == "rid='#' at #, # GB"
    assert short("a  b\n c", 10) == "a b c" and short("x" * 20, 5) == "xxxx…"
    assert dated_timestamps("[2025-03-07 09:20:03 TP3] x 2025-13-40 10:00:00 y 2025-03-07T09:20:04") == [
        datetime(2025, 3, 7, 9, 20, 3), datetime(2025, 3, 7, 9, 20, 4)]
