"""port-in-use: a port the server needs is already taken."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, KnownMessage, Severity
from logparse.model.findings import Finding
from logparse.model.text import short
from logparse.rules.context import RuleContext
from logparse.rules.errors import find_message
from logparse.rules.registry import rule


def _ports(ctx: RuleContext, text: str, ev: Event) -> dict[str, int]:
    """The ports a bind error names: the grammar's fields, SGLang's `name_port=N` pairs, else the
    one port of a uvicorn tuple / ZMQ address / `port N`."""
    if isinstance(ev, KnownMessage) and ev.fields.get("ports"):
        return dict(ev.fields["ports"])
    named = {o["name"]: o["port"] for o in ctx.occurrences("named-port", text) if isinstance(o.get("port"), int)}
    if named:
        return named
    found = ctx.match("port-number", text)
    if found and isinstance(found.get("port"), int):
        return {"port": found["port"]}
    return {}


@rule(code="SRV001", name="port-in-use", family="server", severity=Severity.ERROR, needs=("tracebacks", "events"),
      stage="startup")
def port_in_use(ctx: RuleContext) -> Iterator[Finding]:
    """A port the server needs is already taken.

    **What it means**
    Binding a socket failed: uvicorn's HTTP port (`error while attempting to bind on address …:
    address already in use`), a ZMQ IPC/TCP port (`zmq.error.ZMQError: Address already in use`), the
    NCCL / dist-init port, or SGLang's own check (`Port is already in use. dist_init_port=… nccl_port=…`).

    **Why it matters**
    The server (or one of its processes) cannot start. Usually another SGLang instance — or a previous
    one that did not exit — holds the port, or several instances share the same derived ports.

    **Example**
    ```
    [2026-02-26 16:40:41] Port is already in use. dist_init_port=30005 port_base=30000 detokenizer_port=30001 nccl_port=30003 scheduler_input_port=30002
    Traceback (most recent call last):
      File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 5488, in init_new
        wait_port_available(dist_init_port, "dist_init_port")
    ValueError: dist_init_port=30005 is used by other processes after waiting 30 seconds. [Errno 98] Address already in use
    ```

    **Fix**
    Stop the process holding the port (`ss -ltnp | grep :PORT`) or start on a free `--port`; for the
    internal ports use a different `--port` / `--nccl-port` / `--dist-init-addr` per instance, and
    unset pinned port environment variables.
    """
    hits = find_message(ctx, "port-in-use")
    if not hits:
        return
    first = hits[0]
    ports: dict[str, int] = {}
    for h in hits:
        for k, v in _ports(ctx, h.text, h.event).items():
            ports.setdefault(k, v)
    http_port = ctx.views.arg("port")
    data: dict[str, Any] = {"ports": ports}
    if http_port is not None:
        data["http_port"] = http_port
    blamed = None
    for h in hits:
        held = ctx.match("port-held-by-other", h.text)
        if held and isinstance(held.get("port"), int):
            blamed = (str(held["name"]), int(held["port"]))
    if blamed:
        data["conflict"] = {blamed[0]: blamed[1]}
    if ports:
        shown = ", ".join(f"{k}={v}" for k, v in ports.items())
        num = blamed[1] if blamed else next(iter(ports.values()))
        first_text = first.event.text if isinstance(first.event, KnownMessage) else first.text
        message = f"Port already in use ({shown}): {short(first_text, 160)}"
        if blamed:
            message += f" — {blamed[0]}={blamed[1]} is held by another process"
        internal = bool(blamed) or any(k.endswith("_port") for k in ports)
        if not internal:
            remedy = (f"stop the process listening on {num} (`ss -ltnp | grep :{num}`) or start on a free port, e.g. "
                      f"`--port {num + 10}`")
        else:
            which = f"{blamed[0]}={blamed[1]}" if blamed else shown
            base = http_port if isinstance(http_port, int) else ports.get("port_base", 30000)
            remedy = (f"another process holds SGLang's internal port ({which}; `ss -ltnp | grep :{num}`): stop it, or "
                      f"give this instance its own port range — `--port {base + 100}` (internal ports are derived from "
                      "it) or its own `--nccl-port` / `--dist-init-addr` port — and unset pinned port environment "
                      "variables")
    else:
        message = f"Port already in use: {short(first.text, 160)} (the port number is not in the log)"
        remedy = ("find the process holding SGLang's ports (`ss -ltnp`) and stop it, or start on a free `--port`; "
                  "unset pinned port environment variables")
    events = [h.event for h in hits[:16]]
    yield ctx.finding("port-in-use", message, remedy, events=events, data=data, fingerprint="port-in-use")
