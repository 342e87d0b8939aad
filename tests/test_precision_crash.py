"""Precision of scheduler-crash: a traceback the web layer prints when a client goes away (a
streamed request cancelled, a disconnect) is not a server process dying; the same exception in a
scheduler, or another exception in the web layer, still is."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

# uvicorn's report of a streaming response whose client disconnected (starlette's
# listen_for_disconnect task cancelled), as SGLang's HTTP server prints it.
_STREAM_CANCELLED = """\
[2026-04-02 10:11:12] INFO:     127.0.0.1:50412 - "POST /v1/chat/completions HTTP/1.1" 200 OK
ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/opt/venv/lib/python3.10/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(  # type: ignore[func-returns-value]
  File "/opt/venv/lib/python3.10/site-packages/fastapi/applications.py", line 1054, in __call__
    await super().__call__(scope, receive, send)
  File "/opt/venv/lib/python3.10/site-packages/starlette/responses.py", line 281, in __call__
    await wrap(partial(self.listen_for_disconnect, receive))
  File "/opt/venv/lib/python3.10/site-packages/starlette/responses.py", line 244, in listen_for_disconnect
    message = await receive()
  File "/opt/venv/lib/python3.10/site-packages/uvicorn/protocols/http/h11_impl.py", line 537, in receive
    await self.message_event.wait()
  File "/usr/lib/python3.10/asyncio/locks.py", line 214, in wait
    await fut
{exc}
"""


def _fired(tmp_path: Path, text: str) -> set[str]:
    return set(analyze_text(tmp_path, text).fired())


def test_a_cancelled_stream_in_the_web_layer_is_no_crash(tmp_path: Path) -> None:
    assert "scheduler-crash" not in _fired(tmp_path, _STREAM_CANCELLED.format(exc="asyncio.exceptions.CancelledError"))


def test_the_tail_of_a_cancelled_stream_pasted_alone_is_no_crash(tmp_path: Path) -> None:
    # Only the last frames, with the paste's markdown links in the file names (dev j-027's shape).
    tail = "\n".join(_STREAM_CANCELLED.format(exc="asyncio.CancelledError").splitlines()[7:])
    tail = tail.replace("responses.py", "[responses.py](https://responses.py/)")
    assert "scheduler-crash" not in _fired(tmp_path, tail)


def test_the_futures_alias_of_cancellation_is_no_crash(tmp_path: Path) -> None:
    assert "scheduler-crash" not in _fired(tmp_path, _STREAM_CANCELLED.format(exc="concurrent.futures._base.CancelledError"))


def test_another_exception_in_the_web_layer_is_still_reported(tmp_path: Path) -> None:
    text = _STREAM_CANCELLED.format(exc="RuntimeError: Unexpected ASGI message 'http.response.body' sent")
    assert "scheduler-crash" in _fired(tmp_path, text)


def test_a_scheduler_cancelled_in_its_event_loop_is_still_a_crash(tmp_path: Path) -> None:
    text = """\
[2026-04-02 10:11:12 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2753, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 812, in event_loop_overlap
    self.process_input_requests(recv_reqs)
  File "/opt/venv/lib/python3.10/site-packages/anyio/_backends/_asyncio.py", line 597, in __exit__
    raise CancelledError
asyncio.exceptions.CancelledError
"""
    assert "scheduler-crash" in _fired(tmp_path, text)


def test_a_traceback_quoted_as_a_repr_value_is_no_crash(tmp_path: Path) -> None:
    # A checker printing a dict whose string value holds a subprocess's traceback with `\n` escapes.
    quoted = ("{'supported': False, 'help_output': 'Traceback (most recent call last):\\n"
              "  File \"<frozen runpy>\", line 198, in _run_module_as_main\\n"
              "  File \"/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py\", line 30, in <module>\\n"
              "    from sglang.srt.server_args import prepare_server_args\\n"
              "  File \"/opt/venv/lib/python3.12/site-packages/sglang/srt/configs/deepseek_v4.py\", line 7, in <module>\\n"
              "    @dataclass\\n'}\n")
    assert "scheduler-crash" not in _fired(tmp_path, quoted)


def test_a_traceback_after_a_process_header_on_its_line_is_still_a_crash(tmp_path: Path) -> None:
    text = ("[2026-04-02 10:11:12 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2753, in run_scheduler_process\n'
            "    scheduler.event_loop_overlap()\n"
            "ValueError: bad batch\n")
    assert "scheduler-crash" in _fired(tmp_path, text)
