"""Rules of the 'server' family (see shared/diagnoses.md): ports, model loading, the warmup request,
argument validation, the health check, and the fallback for scheduler/tokenizer exceptions that no
specific rule explains."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from logparse.model.events import (
    Event,
    HealthCheckFailed,
    KnownMessage,
    SchedulerDead,
    Severity,
    Traceback,
)
from logparse.model.findings import Finding
from logparse.model.lazyre import lazy_compile
from logparse.io.reader import ReadReport, read_lines
from logparse.rules.context import RuleContext, sglang_frames
from logparse.rules.matching import (
    Hit,
    find_errors,
    first_sglang_frame,
    frame_files,
    frame_funcs,
    is_args_traceback,
    short,
    traceback_after,
)
from logparse.rules.registry import rule

# --------------------------------------------------------------------------- port-in-use

_PORT = lazy_compile(r"[Aa]ddress already in use|EADDRINUSE|Port is already in use|\[Errno 98\]|\[Errno 48\]"
                   r"|port \d+ is already in use|is already in use\. When running multiple instances")
_PORT_NUMS = (
    re.compile(r"\('[\d.:a-fA-F]*', (\d+)\)"),  # uvicorn: ('0.0.0.0', 30000)
    re.compile(r"tcp://[^'\s\"]*:(\d+)"),  # zmq: addr='tcp://127.0.0.1:5757'
    re.compile(r"(?:engine_info_bootstrap_port|[Pp]ort)[ =:]+(\d{2,5})\b"),
)


def _ports(text: str, ctx: RuleContext, ev: Event) -> dict[str, int]:
    if isinstance(ev, KnownMessage) and ev.fields.get("ports"):
        return dict(ev.fields["ports"])
    named = {k: int(v) for k, v in re.findall(r"(\w+_port)=(\d+)", text)}
    if named:
        return named
    for pattern in _PORT_NUMS:
        if m := pattern.search(text):
            return {"port": int(m.group(1))}
    return {}


@rule(code="SRV001", name="port-in-use", family="server", severity=Severity.ERROR, needs=("tracebacks", "events"),
    stage="startup",
)
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
    hits = find_errors(ctx, _PORT)
    if not hits:
        return
    first = hits[0]
    ports: dict[str, int] = {}
    for h in hits:
        for k, v in _ports(h.text, ctx, h.event).items():
            ports.setdefault(k, v)
    http_port = ctx.views.arg("port")
    data: dict[str, Any] = {"ports": ports}
    if http_port is not None:
        data["http_port"] = http_port
    blamed = None
    for h in hits:
        if m := re.search(r"(\w+_port)=(\d+) is used by other processes", h.text):
            blamed = (m.group(1), int(m.group(2)))
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


# --------------------------------------------------------------------------- model-load-failure

_MODEL_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("auth", re.compile(r"401 Client Error|GatedRepoError|Cannot access gated repo|Access to model \S+ is restricted"
                        r"|You are trying to access a gated repo|Invalid (?:user )?token|403 Client Error[^\n]*huggingface",
                        re.IGNORECASE)),
    ("not-found", re.compile(r"RepositoryNotFoundError|Repository Not Found|is not a local folder and is not a valid "
                             r"model identifier|does not appear to have (?:a )?file(?:s)? named|Can't load (?:the )?"
                             r"(?:configuration|tokenizer|config)|No such file or directory: '[^']*(?:config\.json|"
                             r"\.safetensors|tokenizer[^']*)'|HFValidationError|Could not find model locally"
                             r"|Incorrect path_or_model_id|EntryNotFoundError|LocalEntryNotFoundError", re.IGNORECASE)),
    ("unknown-model-type", re.compile(r"model type `(\w+)` but Transformers does not recognize|Unrecognized model in"
                                      r"|does not recognize this architecture|model_type['\"]?\]? ?(?:is )?not "
                                      r"(?:recognized|supported)", re.IGNORECASE)),
    ("architecture", re.compile(r"Model architectures? \[?([^\]\n]*)\]? (?:are|is) not supported|architectures? "
                                r"\[[^\]]*\] (?:are|is) not supported|not supported for now", re.IGNORECASE)),
    ("transformers-version", re.compile(r"Transformers version \S+ is not supported|Please upgrade transformers"
                                        r"|requires? transformers ?[>=]=?", re.IGNORECASE)),
)
_ANY_MODEL = lazy_compile("|".join(p.pattern for _, p in _MODEL_KINDS), re.IGNORECASE)


def _model_kind(text: str) -> str:
    for kind, pattern in _MODEL_KINDS:
        if pattern.search(text):
            return kind
    return "unknown"


def _ignored_imports(ctx: RuleContext, before: int) -> list[KnownMessage]:
    return [e for e in ctx.log.of(KnownMessage) if e.code == "model-import-ignored" and e.line < before]


def _model_remedy(kind: str, text: str, model: str | None, ignored: list[KnownMessage]) -> str:
    m_ = f" {model}" if model else ""
    if kind == "auth":
        return (f"accept the model's license on its Hugging Face page and authenticate: `huggingface-cli login` or "
                f"`HF_TOKEN=<token>` in the server's environment (for{m_ or ' the gated repo'})")
    if kind == "not-found":
        return (f"check `--model-path`{m_} (a local directory with config.json and the weights, or an exact hub id), "
                "a complete download, and `HF_HUB_OFFLINE` / mount paths in the container")
    if kind == "unknown-model-type":
        mt = re.search(r"model type `(\w+)`|KeyError: '(\w+)'", text)
        name = (mt.group(1) or mt.group(2)) if mt else None
        return (f"the installed transformers does not know the config's model_type{' ' + name if name else ''}: upgrade it "
                "(`pip install -U transformers`, to the version the model card names) or the SGLang release that "
                "pins it")
    if kind == "architecture":
        hint = ""
        if ignored:
            e = ignored[0]
            hint = (f"; first fix the import error of {e.fields.get('module', 'the model module')} at line {e.line} "
                    f"({short(str(e.fields.get('error', '')), 100)}), which made SGLang skip that model")
        return f"upgrade SGLang to a release that implements this architecture, or `--model-impl transformers`{hint}"
    if kind == "transformers-version":
        return f"install the transformers version the message asks for: {short(text, 140)}"
    return f"fix the model files / versions the message names: {short(text, 140)}"


@rule(code="SRV002", name="model-load-failure", family="server", severity=Severity.ERROR,
      needs=("tracebacks", "events"),
    stage="startup",
)
def model_load_failure(ctx: RuleContext) -> Iterator[Finding]:
    """The model (config, tokenizer or weights) could not be loaded.

    **What it means**
    Hugging Face refused a gated repo (401), the path or files are missing, the installed transformers
    does not know the config's `model_type`, SGLang does not implement the architecture (`Model
    architectures [...] are not supported`, often after an earlier `Ignore import error when loading
    sglang.srt.models.X`), or transformers is too old.

    **Why it matters**
    The server cannot start; the fix is authentication, the path, or a version, not a memory setting.

    **Example**
    ```
    sglang  | [2026-05-19 00:09:18 TP5 EP5] Scheduler hit an exception: Traceback (most recent call last):
    sglang  |   File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 405, in from_pretrained
    sglang  |     config_class = CONFIG_MAPPING[config_dict["model_type"]]
    ```

    **Fix**
    Authenticate (`HF_TOKEN`), fix `--model-path`, or install the transformers / SGLang version the log
    names; when an earlier `Ignore import error` names the model's module, fix that import first.
    """
    model = ctx.views.arg("model_path")
    model = str(model) if model else None
    hits = find_errors(ctx, _ANY_MODEL)
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if any(h.traceback is tb for h in hits):
            continue
        body = ctx.traceback_text(tb)
        if "configuration_auto.py" in " ".join(frame_files(tb)) and re.search(r"CONFIG_MAPPING\[", body):
            m = re.search(r"CONFIG_MAPPING", body)
            assert m is not None
            hits.append(Hit(tb.line, f"{tb.exc_type or 'KeyError'}: {tb.message}" if tb.exc_type else body, m, tb, tb))
    for hit in sorted(hits, key=lambda h: h.line):
        tb = hit.traceback
        body = ctx.traceback_text(tb) if tb is not None else hit.text
        kind = _model_kind(hit.text)
        if kind == "unknown" and "CONFIG_MAPPING[" in body:
            kind = "unknown-model-type"
        ignored = _ignored_imports(ctx, hit.line)
        data: dict[str, Any] = {"kind": kind, "model_path": model}
        if ignored:
            data["ignored_imports"] = [{"line": e.line, "module": e.fields.get("module")} for e in ignored[:8]]
        if m := re.search(r"model type `(\w+)`|KeyError: '(\w+)'", body):
            data["model_type"] = m.group(1) or m.group(2)
        if tb is not None and tb.exc_type is None:
            what = "the exception line is cut"
            if kind == "unknown-model-type":
                what = ("transformers' CONFIG_MAPPING lookup of the config's model_type failed (the exception line is "
                        "cut; it would name the model_type)")
        else:
            what = short(hit.text, 220)
        labels = {"auth": "access to the model repo was refused", "not-found": "model files not found",
                  "unknown-model-type": "unknown model_type", "architecture": "architecture not supported",
                  "transformers-version": "transformers version mismatch", "unknown": "model could not be loaded"}
        message = f"Model load failed ({labels[kind]}{f', {model}' if model else ''}): {what}"
        if ignored:
            message += (f" — note the earlier `Ignore import error when loading {ignored[0].fields.get('module')}` "
                        f"(line {ignored[0].line})")
        events: list[Event] = [hit.event]
        if tb is None:
            after = traceback_after(ctx, hit.line, 4, hit.rank)
            if after is not None and after.line not in ctx.claimed:
                events.append(after)
        yield ctx.finding("model-load-failure", message, _model_remedy(kind, body, model, ignored), events=events,
                          data=data)


# --------------------------------------------------------------------------- warmup-failed

_PROXY = lazy_compile(r"squid|proxy|The requested URL could not be retrieved|X-Squid|Privoxy|Zscaler|Bluecoat", re.IGNORECASE)
_WARMUP = lazy_compile(r"warmup error|warm ?up failed|Disaggregation warmup failed|_wait_and_warmup|_execute_server_warmup",
                     re.IGNORECASE)


@rule(code="SRV003", name="warmup-failed", family="server", severity=Severity.ERROR,
      needs=("tracebacks", "events"),
    stage="startup",
)
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
        body = ctx.traceback_text(tb)
        if not (tb.process == "warmup" or _WARMUP.search(body) or "_wait_and_warmup" in frame_funcs(tb)):
            continue
        text = f"{tb.exc_type}: {tb.message}" if tb.exc_type else ""
        data: dict[str, Any] = {}
        status = re.search(r"res=<Response \[(\d{3})\]>|status code:? (\d{3})", body)
        if status:
            data["warmup_http_status"] = int(status.group(1) or status.group(2))
        proxy = bool(_PROXY.search(body)) or any(k.lower() in ("http_proxy", "https_proxy") for k in ctx.views.env_vars)
        data["proxy"] = proxy
        code = data.get("warmup_http_status")
        if proxy and (code is None or code in (403, 407, 502, 503, 504)):
            who = "a Squid proxy" if re.search(r"squid", body, re.IGNORECASE) else "an HTTP proxy"
            message = (f"The warmup request to 127.0.0.1 was answered by {who} (HTTP {code or '?'}), not by the server: "
                       "http_proxy applies to local requests")
            remedy = ("`export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost` before launching (or unset "
                      "http_proxy/https_proxy for the server)")
        else:
            message = (f"The warmup request failed{f' with HTTP {code}' if code else ''}: "
                       f"{short(text, 200) if text else 'the exception line is cut'}")
            remedy = ("fix the error the first request hit (the traceback or scheduler error before this line); "
                      "`--skip-server-warmup` only hides it")
        yield ctx.finding("warmup-failed", message, remedy, events=[tb], data=data)
    for hit in find_errors(ctx, re.compile(r"warm ?up failed|Disaggregation warmup failed", re.IGNORECASE)):
        yield ctx.finding("warmup-failed", f"The disaggregation warmup failed: {short(hit.text, 200)}",
                          "check the prefill/decode peers and the bootstrap connection named in the message",
                          events=[hit.event], data={})


# --------------------------------------------------------------------------- invalid-server-args (fallback)

_ARGPARSE = lazy_compile(r"^(?:usage: .*|\S+\.py: error: .+|error: (?:argument|unrecognized arguments|the following "
                       r"arguments are required).*)$")
_ARGISH = lazy_compile(r"--[a-z][\w-]+|\b\w+_size\b|must be (?:divisible|positive|non-negative|in|greater|less|set)"
                     r"|mutually exclusive|is required|should be in range|not supported with|only supports?|cannot be|"
                     r"is not compatible with|Invalid configuration|Please (?:use|set|enable|provide)", re.IGNORECASE)


def _arg_remedy(ctx: RuleContext, message: str) -> str:
    if m := re.search(r"User-specified context_length \((\d+)\) is greater than the derived context_length \((\d+)\)", message):
        return (f"`--context-length {m.group(2)}` (the model's limit), or set "
                f"`SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1` to keep {m.group(1)} at your own risk")
    if "chunked_prefill_size must be divisible by page_size" in message:
        page = ctx.views.arg("page_size")
        chunk = ctx.views.arg("chunked_prefill_size")
        if isinstance(page, int) and isinstance(chunk, int) and page > 0:
            return f"`--chunked-prefill-size {chunk // page * page or page}` (a multiple of --page-size {page})"
    if m := re.search(r"tp_size (\d+) must be divisible by ep_size (\d+)", message):
        tp = int(m.group(1))
        eps = [e for e in (1, 2, 4, 8, 16, 32) if tp % e == 0]
        return f"`--ep-size` dividing --tp {tp}: one of {eps}"
    return f"the constraint the message states: {short(message, 180)}"


@rule(code="SRV004", name="invalid-server-args", family="server", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True,
    stage="startup",
)
def invalid_server_args(ctx: RuleContext) -> Iterator[Finding]:
    """The server arguments were rejected before any scheduler started (fallback).

    **What it means**
    SGLang's argument processing (`ServerArgs.__post_init__`, `check_server_args`, the model-config
    checks) raised a `ValueError` / `AssertionError`, or argparse refused the command line, and no
    more specific rule (speculative, mamba, quantization, port, …) explains it.

    **Why it matters**
    Nothing started; the message names the constraint the flags violate.

    **Example**
    ```
    Traceback (most recent call last):
      File "/usr/local/lib/python3.12/dist-packages/sglang/srt/entrypoints/engine.py", line 771, in _launch_subprocesses
        server_args.check_server_args()
      File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 5102, in check_server_args
        assert (
    AssertionError: chunked_prefill_size must be divisible by page_size
    ```

    **Fix**
    Change the flags as the message says (the finding computes the value for the common checks).
    """
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if not tb.exc_type:
            continue
        lone_argish = not tb.frames and tb.exc_type in ("ValueError", "AssertionError") and _ARGISH.search(tb.message)
        if not (is_args_traceback(tb) or lone_argish):
            continue
        where = first_sglang_frame(tb)
        msg = tb.message.strip() or "(bare assertion, no message)"
        message = f"Server arguments rejected{f' in {where}' if where else ''}: {tb.exc_type}: {short(msg, 220)}"
        remedy = _arg_remedy(ctx, tb.message) if tb.message.strip() else (
            f"the assertion has no message: read the condition at {where or 'the last frame'} and change the flag it tests")
        yield ctx.finding("invalid-server-args", message, remedy, events=[tb], data={"exception": tb.exc_type})
    errors = [(no, m) for no, m in ctx.texts_matching(_ARGPARSE) if ": error: " in ctx.text(no) or
              ctx.text(no).startswith("error: ")]
    if errors:
        no = errors[0][0]
        text = ctx.text(no)
        usage = [n for n, _ in ctx.texts_matching(re.compile(r"^usage: ")) if n < no]
        lines = [(no, no)] + ([(usage[-1], usage[-1])] if usage else [])
        yield ctx.finding("invalid-server-args", f"The command line was rejected: {short(text, 200)}",
                          f"fix the flag the error names: {short(text.split('error:', 1)[-1], 160)} "
                          "(`python -m sglang.launch_server --help` lists the valid ones)", lines=lines, data={})


# --------------------------------------------------------------------------- health-check-failed


@rule(code="SRV005", name="health-check-failed", family="server", severity=Severity.ERROR, needs=("events",),
    follow_on=True,
)
def health_check_failed(ctx: RuleContext) -> Iterator[Finding]:
    """`/health_generate` got no answer from the detokenizer in time.

    **What it means**
    The health endpoint ran a one-token generation and the detokenizer produced nothing for
    `SGLANG_HEALTH_CHECK_TIMEOUT` seconds (default 20): `Health check failed. Server couldn't get a
    response from detokenizer for last 20 seconds.` The endpoint then answers 503.

    **Why it matters**
    Orchestrators restart the server on 503. The check itself is a symptom: the scheduler is stuck
    (a hang, a long prefill, a dead peer) or dead.

    **Example**
    ```
    [2026-03-07 15:40:22] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 15:40:02. last_heartbeat time: 15:39:11
    ```

    **Fix**
    Find the stall behind it (the watchdog / NCCL / crash findings of the same log); raise
    `SGLANG_HEALTH_CHECK_TIMEOUT` only when long prefills legitimately exceed it.
    """
    events = ctx.unclaimed(ctx.log.of(HealthCheckFailed))
    if not events:
        return
    first = events[0]
    timeout = first.timeout_s
    data: dict[str, Any] = {"timeout_s": timeout, "count": len(events)}
    text = ctx.text(first.line)
    if m := re.search(r"last_heartbeat time: ([\d:]+)", text):
        data["last_heartbeat"] = m.group(1)
    prior = [f for f in ctx.findings if f.severity == Severity.ERROR and f.first_line <= first.line]
    cause = f"; see {prior[0].name} at line {prior[0].first_line}" if prior else ""
    message = (f"Health check failed {len(events)} time{'s' if len(events) > 1 else ''}: no response from the "
               f"detokenizer for {timeout:g} s" if timeout else "Health check failed")
    message += f" (last heartbeat {data['last_heartbeat']})" if "last_heartbeat" in data else ""
    message += cause
    remedy = ("find the stall behind it (scheduler hang, dead rank, NCCL, very long prefill)" + cause
              + f"; raise `SGLANG_HEALTH_CHECK_TIMEOUT` (now {timeout:g} s) only if long prefills legitimately take "
                "longer" if timeout else "")
    yield ctx.finding("health-check-failed", message, remedy, events=events[:16], data=data,
                      fingerprint="health-check-failed")


# --------------------------------------------------------------------------- scheduler-crash (fallback)

_CONSEQUENCE_MSG = lazy_compile(r"Please see the error messages above|Initialization failed\.?$", re.IGNORECASE)
# A dynamo/rust-tracing record cut right after its target: `… ERROR scheduler.run_sch`.
_CUT_TARGET = lazy_compile(r"^(?:scheduler|tp_worker|model_runner|detokenizer_manager|tokenizer_manager|"
                         r"data_parallel_controller)\.[\w.]*$")


def _wrapper_levels(ctx: RuleContext, lines: set[int]) -> dict[int, str]:
    """The wrapper log level of some lines, read again from the file (unparsed lines keep no wrapper)."""
    out: dict[int, str] = {}
    if not lines or ctx.log.path == "-":
        return out
    last = max(lines)
    try:
        for no, _text, wrapper in read_lines(ctx.log.path, ReadReport(path=ctx.log.path)):
            level = getattr(wrapper, "level", None) if wrapper is not None else None
            if no in lines and level:
                out[no] = str(level)
            if no >= last:
                break
    except Exception:  # noqa: BLE001 — evidence lookup only
        return out
    return out


@rule(code="SRV006", name="scheduler-crash", family="server", severity=Severity.ERROR,
      needs=("tracebacks",), fallback=True,
    follow_on=True,
    crash=True,
)
def scheduler_crash(ctx: RuleContext) -> Iterator[Finding]:
    """A scheduler, tokenizer or detokenizer raised an exception that no specific rule explains (fallback).

    **What it means**
    A process of the server died on an exception: `Scheduler hit an exception: Traceback …`,
    `TokenizerManager hit an exception`, a 2024 `Exception in ControllerSingle`, or the main process's
    `Rank N scheduler died during initialization`. No specific rule recognised the exception, or the
    excerpt is cut before the exception line. The finding reports the exception type, its message and
    the innermost SGLang frame.

    **Why it matters**
    The process is gone and the server with it. When the exception line is missing, the excerpt
    cannot tell why: the full log of that rank can.

    **Example**
    ```
    [2025-04-16 14:22:53] Received sigquit from a child process. It usually means the child failed.
    [2025-04-16 14:22:53 TP3] Scheduler hit an exception: Traceback (most recent call last):
    ```

    **Fix**
    Read the exception and the frame named in the finding; when it is cut, get the complete traceback
    of that rank (its last line names the exception). Search the SGLang issues for the exception text.
    """
    dead_lines = [e.line for e in ctx.log.of(SchedulerDead)]
    for tb in ctx.unclaimed(ctx.log.of(Traceback)):
        if tb.exc_type in ("KeyboardInterrupt", "SystemExit"):
            continue
        if tb.exc_type and _CONSEQUENCE_MSG.search(tb.message.strip()):
            continue  # the main process echoing a child's failure
        if tb.exc_type == "EOFError" and any(0 < tb.line - d <= 6 for d in dead_lines):
            continue  # waiting for a scheduler that is already reported dead
        where = first_sglang_frame(tb)
        process = tb.process or ("Scheduler" if any(f in ("run_scheduler_process", "event_loop_normal",
                                                          "event_loop_overlap") for f in frame_funcs(tb)) else None)
        who = f"{process} " if process and process not in ("warmup",) else "A process "
        data: dict[str, Any] = {"exception": tb.exc_type, "frame": where, "sglang_frames": sglang_frames(tb),
                                "process": tb.process, "cut": tb.exc_type is None}
        if tb.exc_type:
            msg = tb.message.strip()
            data["message"] = short(msg, 300)
            message = f"{who}raised {tb.exc_type}: {short(msg, 200) or '(no message)'}" + (f" (at {where})" if where else "")
            remedy = (f"read {tb.exc_type} at {where or 'the last frame'}; search the SGLang issues for "
                      f"'{short(msg, 60)}', and report it with the full traceback if it is a bug")
            if m := re.search(r"scheduler died during initialization \(exit code: (-?\d+)\)", msg):
                code = int(m.group(1))
                data["exit_code"] = code
                sig = {-3: "SIGQUIT: the scheduler's own error path, not the OOM killer", -6: "SIGABRT (a native abort)",
                       -11: "SIGSEGV (a native crash)", 1: "a Python exception in the scheduler"}.get(code)
                if sig:
                    message += f" — exit code {code} = {sig}"
                remedy = ("the scheduler's own error is not in this excerpt: look for its `Scheduler hit an exception` "
                          "traceback (or an assertion) earlier in the full log of that rank")
        else:
            last = tb.frames[-1] if tb.frames else None
            at = (f"; the last visible frame is {where}" if where else
                  f"; the last visible frame is {last.func}" if last and last.func else "")
            message = f"{who}raised an exception (the traceback is cut before its exception line){at}"
            remedy = ("the exception line (the traceback's last line) is not in the log: get the complete log of "
                      f"{tb.rank or 'this process'} to see which exception it was")
        message = message[0].upper() + message[1:]
        yield ctx.finding("scheduler-crash", message, remedy, events=[tb], data=data)
    # A wrapper-formatted ERROR record of the scheduler cut before its message (dynamo's tracing format).
    candidates = {no for no, _ in ctx.texts_matching(_CUT_TARGET)}
    levels = _wrapper_levels(ctx, candidates)
    for no in sorted(n for n, lvl in levels.items() if lvl.upper() in ("ERROR", "CRITICAL")):
        text = ctx.text(no)
        yield ctx.finding("scheduler-crash",
                          f"An ERROR record of {text}… is cut before its message (the scheduler failed right after "
                          "initialisation)",
                          "the message of this ERROR record is not in the log: get the complete log to see the exception",
                          lines=[(no, no)], data={"exception": None, "cut": True, "target": text})
