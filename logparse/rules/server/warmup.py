"""warmup-failed: the server's own warmup request failed, so it never became ready."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.frames import frame_funcs
from logparse.rules.registry import rule
from logparse.run.spacing import line_before

# The functions of SGLang's HTTP servers that send the warmup request (0.3–0.5.x), the diffusion
# server's included (multimodal_gen: its warmup first waits for its own /health).
_DIFFUSION_WARMUP = "_run_server_warmup_after_http_ready"
_WARMUP_FUNCS = frozenset({"_wait_and_warmup", "_execute_server_warmup", _DIFFUSION_WARMUP})
_ABORTED_REMEDY = ("the reason after `aborting startup:` is what the warmup hit (the server's own readiness probe of "
                   "its /health comes first): fix what it names — the address it probes must be one the HTTP server "
                   "listens on — then start again")
# Statuses a proxy answers with when it cannot (or may not) reach the target.
_PROXY_STATUSES = (403, 407, 502, 503, 504)


def _is_warmup(ctx: RuleContext, tb: Traceback) -> bool:
    """A traceback of the warmup request: printed as `Initialization failed. warmup error:`, or
    raised in the warmup functions."""
    if tb.process == "warmup" or _WARMUP_FUNCS & set(frame_funcs(tb)):
        return True
    return ctx.match("warmup-error", ctx.traceback_text(tb)) is not None


@rule(code="SRV003", name="warmup-failed", family="server", severity=Severity.ERROR,
      needs=("tracebacks", "events"), stage="startup")
def warmup_failed(ctx: RuleContext) -> Iterator[Finding]:
    """The server's own warmup request failed, so it never became ready.

    **What it means**
    After uvicorn starts, SGLang sends one request to itself (`POST /generate` on 127.0.0.1) and
    kills its process tree if the answer is not 200: `Initialization failed. warmup error: …
    AssertionError: res=<Response [503]>`. A 502/503 whose body is an HTTP proxy's error page (Squid,
    …) means the request to 127.0.0.1 went through `http_proxy`.

    **Why it matters**
    The server exits right after it looked ready. The model and GPUs are fine; the local request did
    not reach the server (proxy) or the first real forward pass failed (see the error above it).

    **Example**
    ```
    [2025-03-05 10:34:48] Initialization failed. warmup error: Traceback (most recent call last):
      File "miniconda3/envs/sglang/lib/python3.10/site-packages/sglang/srt/entrypoints/http_server.py", line 548, in _wait_and_warmup
        assert res.status_code == 200, f"{res=}, {res.text=}"
    AssertionError: res=<Response [503]>, res.text='<!DOCTYPE html … Squid …'
    ```

    **Fix**
    `no_proxy=127.0.0.1,localhost` (and `NO_PROXY`) in the server's environment when a proxy answered;
    otherwise fix the error the first request hit (`--skip-server-warmup` only hides it).
    """
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if not _is_warmup(ctx, tb):
            continue
        body = ctx.traceback_text(tb)
        text = f"{tb.exc_type}: {tb.message}" if tb.exc_type else ""
        data: dict[str, Any] = {}
        got = ctx.collect("warmup-http-status", body) or {}
        status = got.get("status") or got.get("status_code")
        if isinstance(status, int):
            data["warmup_http_status"] = status
        proxy = (ctx.match("http-proxy-page", body) is not None
                 or any(k.lower() in ("http_proxy", "https_proxy") for k in ctx.views.env_vars))
        data["proxy"] = proxy
        code = data.get("warmup_http_status")
        if proxy and (code is None or code in _PROXY_STATUSES):
            who = "a Squid proxy" if ctx.match("squid-proxy", body) is not None else "an HTTP proxy"
            message = (f"The warmup request to 127.0.0.1 was answered by {who} (HTTP {code or '?'}), not by the server: "
                       "http_proxy applies to local requests")
            remedy = ("`export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost` before launching (or unset "
                      "http_proxy/https_proxy for the server)")
        elif _DIFFUSION_WARMUP in frame_funcs(tb):
            # The diffusion server's warmup waits for its own /health before any request is sent.
            message = f"The server's warmup failed and it aborted its start-up: {short(text, 200) if text else 'the exception line is cut'}"
            remedy = _ABORTED_REMEDY
        else:
            message = (f"The warmup request failed{f' with HTTP {code}' if code else ''}: "
                       f"{short(text, 200) if text else 'the exception line is cut'}")
            remedy = ("fix the error the first request hit (the traceback or scheduler error before this line); "
                      "`--skip-server-warmup` only hides it")
        # `logger.exception(…)`: the record saying the warmup failed is the line right above its traceback.
        above = line_before(ctx.log, tb.line)
        record = [(above, above)] if above is not None and ctx.match("warmup-error", ctx.text(above)) is not None else []
        yield ctx.finding("warmup-failed", message, remedy, events=[tb], lines=record, data=data)
    for hit in find_message(ctx, "server-warmup-aborted"):
        reason = str(hit.fields.get("reason") or "").strip()
        yield ctx.finding("warmup-failed", f"The server's warmup failed and it aborted its start-up: {short(reason, 200)}",
                          _ABORTED_REMEDY,
                          events=[hit.event], data={"reason": reason})
    for hit in find_message(ctx, "disagg-warmup-failed"):
        yield ctx.finding("warmup-failed", f"The disaggregation warmup failed: {short(hit.text, 200)}",
                          "check the prefill/decode peers and the bootstrap connection named in the message",
                          events=[hit.event], data={})
