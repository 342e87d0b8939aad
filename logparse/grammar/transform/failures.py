"""Transformer callbacks for grammars/failures.lark: traceback lines, torch/C++ lines, crash, hang and
shutdown lines, the warnings of formats §4 and failure notices (as `known_message`), Python `warnings`
output and JIT markers.

Known-message codes defined here (the kebab-case name of the first terminal; `fields` in brackets):

Tracebacks / native crashes
  faulthandler-thread [thread, current]

torch / NCCL
  nccl-watchdog-tail [timeout_ms, ran_ms] — the second half of a hard-wrapped watchdog line

Crash, hang, shutdown (§6)
  pyspy-failed [pid, error]             watchdog-debug-info [debug_name]
  watchdog-thread-crashed [debug_name, error]                watchdog-initialized [name]
  crash-dump-start [folder]             crash-dump-done [finished, unfinished, filename]
  crash-dump-skipped                    dumper-warning [operation, timeout_s, message]
  sigterm-received                      sigterm-node-rank [node_rank]
  graceful-exit [remaining]             sigterm-force-exit [reason]
  schedulers-still-alive [seconds]      health-check-during-shutdown
  http-server-error [error]             http-client-disconnected [error]
  request-error [error]                 tool-call-parse-error [error]
  reasoning-parse-error [error]         invalid-request [error, rid]
  abort-empty-rid                       abort-rid-not-found [rid]
  output-for-deleted-rid [rid]          custom-sigquit-handler [handler]
  sigquit-handler-not-added             weights-not-ready [timeout_s]
  grammar-accept-failed [rid, token_id, error]               port-in-use [ports]

Memory and startup-error notices (§5, §6.4)
  prefill-out-of-memory                 decode-out-of-memory [never_happen]
  try-allocate-tokens [tokens]
  mem-leak-token-kv-pool [values]       mem-leak-req-token-pool [values]
  mem-leak-kv-pool [values]             memory-unbalanced [values]
  model-import-ignored [module, model, error]
  model-instantiate-failed [model, error]
  sgl-kernel-common-ops-missing         sgl-kernel-log [level, message]
  gpu-context [device, gpu_id, cuda_visible_devices, tp_rank, tp_size]     (W19)
  device-assert-failed [file, line, condition]
  cuda-device-assert [file, line, condition]
  cutlass-disabled-piecewise

Warnings of formats §4 (W-number)
  deepgemm-scale-fmt (W1)               quant-not-optimized [quantization] (W2)
  context-length-override [reason, context_length, derived_context_length] (W3)
  draft-max-position-override [context_length] (W3)
  dtype-cast [from_dtype, to_dtype, downcast] (W4)
  transformers-version-rope [version, model_type] (W5)
  fp8-kv-no-scales (W6)                 fp4-kv-accuracy, fp4-kv-fallback (W7)
  modelopt-experimental [format] (W8)   compressed-tensors-fallback (W9)
  transformers-impl-fallback [architecture] (W10)
  mtp-safetensors-unreferenced (W11)    kv-scale-deprecated, kv-scale-not-loaded (W12)
  gpt-oss-moe-kernel [kernel] (W13)
  custom-ar-multinode (W14)             custom-ar-world-size [world_size, supported] (W15)
  custom-ar-pcie (W16)                  custom-ar-no-p2p (W17)
  custom-ar-setup-failed [error] (W18)  pp-no-overlap (W20)
  numa-nodes-unused [numa_nodes, tp_size], numa-tp-larger [tp_size, numa_nodes] (W21)
  max-running-reset [max_running_requests, reason] (W22)
  spec-v2-enabled (W23)                 overlap-disabled-spec-v1 (W24)
  spec-v2-non-overlap [algorithms] (W25)
  mixed-chunk-disabled-spec [reason] (W26)
  spec-draft-tokens-adjusted (W27)      mtp-draft-path-unneeded (W28)
  ngram-overlap-disabled, ngram-draft-tokens-default [num_draft_tokens] (W29)
  mamba-overlap-disabled (W30)          radix-cache-disabled [reason] (W31)
  dp-attention-chunked-prefill [chunked_prefill_size] (W32)
  pd-decode-chunk-cache (W33)           (W34, W35: startup.lark)
  input-truncated [input_tokens, context_len] (W38)
  max-new-tokens-truncated [input_tokens, max_new_tokens, context_len] (W38)
  cuda-graph-disabled [reason] (W40–W43)
  piecewise-cuda-graph-disabled [graph, reason] (W44)
  fa3-fp8-fallback (W45)                page-size-override [backend, page_size_from, page_size] (W46)
  attention-platform-fallback [backend] (W47)
  hybrid-attention-experimental (W48)   draft-attention-override [backend] (W49)
  deterministic-override [setting] (W50)
  trtllm-moe-shared-fusion-off (W51)    ep-size-adjusted [backend, ep_size] (W52)
  deepgemm-warmup-reduced [memory_budget_gb, required_memory_gb, max_m] (W54)
  cutlass-moe-env-deprecated (W55)      mxfp8-moe-backend-override [overridden] (W56)
  deepep-mode-forced (W57)              fp8-gemm-deepgemm-fallback [block] (W58)
  endpoint-deprecated [endpoint, replacement] (W61)
  cli-arg-deprecated [option] (W62)     tool-call-parser-deprecated [parser, replacement] (W63)
  symm-mem-prealloc [size_gb] (W64)     cudnn-version-unknown [torch_version] (W65)
  lora-flag-adjusted [enable_lora] (W66)
  rlimit-failed [resource, error] (W67)
  long-gc [generation, duration_s] (W68)
  gc-start [generation], gc-end [generation, duration_s, collected, uncollectable], gc-logger-enabled

Event classes (not known_message): TracebackStart, TracebackFrame, TracebackSource, ExceptionLine,
ExceptionChain, ExceptionHeader, ProcessHeader, CppStack, CppTerminate, NcclWatchdogTimeout, C10dLog,
SigquitReceived, SchedulerDead, ExitCode, Killed, ShellSignal, SubprocessCrashed, SglangWatchdog
(W69 is the soft one), BatchDump, HealthCheckFailed, PythonWarning (W59, W60), JitCompile (W53).
"""

from __future__ import annotations

import re
from typing import Any

from logparse.grammar.transform.known import known_fields
from logparse.model.events import (
    BatchDump,
    C10dLog,
    CppStack,
    CppTerminate,
    ExceptionChain,
    ExceptionHeader,
    ExceptionLine,
    ExitCode,
    HealthCheckFailed,
    JitCompile,
    Killed,
    NcclWatchdogTimeout,
    ProcessHeader,
    PythonWarning,
    SchedulerDead,
    SglangWatchdog,
    ShellSignal,
    SigquitReceived,
    SubprocessCrashed,
    TracebackFrame,
    TracebackSource,
    TracebackStart,
)
from logparse.model.lazyre import lazy_compile
from logparse.model.numbers import MAX_COUNT, present, to_float_or_none, to_int

Children = list[Any]
Result = tuple[type, dict[str, Any]]

_INT = lazy_compile(r"-?\d+")
_NUM = lazy_compile(r"-?\d+(?:\.\d+)?")
# `  File "path", line 12, in func` / faulthandler `  File "path", line 12 in func`; any part may be cut.
_FRAME = lazy_compile(
    r' *File "(?P<path>[^"]*)(?:"(?:, line (?P<lineno>\d+)(?:,? in (?P<func>.*))?)?)?'
)
# `Key=value` items of a WorkNCCL(...) dump; a value is trusted only when a `,` or `)` follows it
# (a hard-wrapped or cut line may end in the middle of a number).
_WORK_ITEM = lazy_compile(r"(\w+(?:\(ms\))?)=([\w.]+)(?=[,)])")
_RAN_FOR = lazy_compile(r"ran for (\d+) milliseconds")
# `name=12`, `self.x.size()=3`, `local_gpu_memory * 0.9=71.19` (leak checks, memory-balance check).
_KV_ITEM = lazy_compile(r"([A-Za-z_][\w.]*(?:\(\))?(?: \* \d+(?:\.\d+)?)?)=(-?\d+(?:\.\d+)?)(?!\d)")
_WORK_KEYS = {
    "SeqNum": "seq",
    "NumelIn": "numel_in",
    "NumelOut": "numel_out",
    "Timeout(ms)": "timeout_ms",
}


def _text(children: Children, index: int = 1) -> str:
    return str(children[index]) if len(children) > index else ""


def _ints(text: str) -> list[int | None]:
    """Every integer in the text, in order; None for a damaged one (positions stay meaningful)."""
    return [to_int(x) for x in _INT.findall(text)]


def _first_int(text: str) -> int | None:
    found = _INT.search(text)
    return to_int(found.group()) if found else None


def _num(text: str) -> float | int | None:
    value = to_float_or_none(text)
    if value is None:
        return None
    return int(value) if value.is_integer() and "." not in text and abs(value) <= MAX_COUNT else value


def _kv_values(text: str) -> dict[str, float | int]:
    """`name=value` pairs with numeric values (`self.x=5, y=2.5` → {'x': 5, 'y': 2.5})."""
    out: dict[str, float | int] = {}
    for m in _KV_ITEM.finditer(text):
        value = _num(m.group(2))
        if value is not None:
            out[m.group(1).removeprefix("self.").replace(" ", "")] = value
    return out


# torch's wording when the watchdog thread ends on a timed-out collective (torch 2.4+).
_WD_CAUGHT = "Watchdog caught collective operation timeout:"
_WD_THREAD = "watchdog thread terminated with exception:"
_RANK_TAG_END = lazy_compile(r"\[Rank (\d+)\] *$")


def _parse_watchdog_body(text: str) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for key, value in _WORK_ITEM.findall(text):
        if key == "OpType":
            kw["op"] = value
        elif key in _WORK_KEYS and value.isdigit():
            kw.update(present(**{_WORK_KEYS[key]: to_int(value)}))
    m = _RAN_FOR.search(text)
    if m:
        kw.update(present(ran_ms=to_int(m.group(1))))
    return kw


class FailureCallbacks:
    # These callbacks read token texts only (never `.type`): the fast path passes them plain str
    # (frames and source lines are most of a crash log's lines).
    PLAIN_TOKEN_CALLBACKS: tuple[str, ...] = ("traceback_frame", "traceback_source", "c10d_log", "cpp_stack")
    # ------------------------------------------------------------------ tracebacks

    def traceback_start(self, children: Children) -> Result:
        return TracebackStart, {}

    def exception_chain(self, children: Children) -> Result:
        relation = "cause" if children[0].type == "CHAIN_CAUSE" else "context"
        return ExceptionChain, {"relation": relation}

    def traceback_frame(self, children: Children) -> Result:
        text = str(children[0])
        if 'File \\"' in text:
            # Copied out of a JSON log field: its quotes are still escaped (`File \"…\", line N`).
            text = text.replace('\\"', '"')
        m = _FRAME.match(text)
        assert m is not None  # the terminal guarantees the shape
        lineno = m.group("lineno")
        func = m.group("func")
        return TracebackFrame, {
            "path": m.group("path"),
            "lineno": to_int(lineno) if lineno else None,
            "func": func.strip() if func else None,
        }

    def traceback_source(self, children: Children) -> Result:
        return TracebackSource, {"text": str(children[0]).strip()}

    def exception_line(self, children: Children) -> Result:
        head = str(children[0])
        if children[0].type == "EXC_BARE":
            return ExceptionLine, {"exc_type": head, "message": ""}
        return ExceptionLine, {"exc_type": head.rstrip(" ")[:-1], "message": _text(children)}

    def exception_header(self, children: Children) -> Result:
        head = children[0]
        if head.type == "WARMUP_ERROR":
            process = "warmup"
        elif head.type == "INIT_STATE_ERROR":
            # The main process printing the traceback a child sent instead of "init ok" (0.1.x–0.2.x
            # launch_server): `router init` / `controller init` / `detoken init`, a start-up failure.
            text = str(head)
            name = text.split("Initialization failed. ", 1)[-1].split("_init_state", 1)[0].split(" init state", 1)[0]
            process = f"{name} init"
            # The terminal holds the `Traceback (most recent call last):` line itself.
            return ExceptionHeader, {"process": process, "rest": text[text.index("Traceback") :] + _text(children)}
        else:
            process = str(head).split(" hit an exception", 1)[0]
        return ExceptionHeader, {"process": process, "rest": _text(children)}

    def process_header(self, children: Children) -> Result:
        text = str(children[0])
        if text.startswith("Exception in "):
            name = text[len("Exception in ") : -1]
            name = name.removeprefix("thread ")
        else:
            name = text[len("Process ") :].split(":", 1)[0]
        return ProcessHeader, {"name": name}

    # ------------------------------------------------------------------ torch / C++

    def nccl_watchdog_timeout(self, children: Children) -> Result:
        head = str(children[0])
        kw: dict[str, Any] = {}
        if head.startswith("[Rank "):
            kw.update(present(nccl_rank=to_int(head[6 : head.index("]")] if "]" in head else None)))
        kw.update(_parse_watchdog_body(_text(children)))
        return NcclWatchdogTimeout, kw

    def c10d_log(self, children: Children) -> Result:
        head = str(children[0])
        text = head.strip() + (" " + _text(children) if len(children) > 1 else "")
        at = text.find(_WD_CAUGHT)
        if at > 0 and _WD_THREAD in text[:at]:
            # The watchdog thread's own record of the timeout (`[PG ID 2 PG GUID 3 Rank 3] Process group
            # watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation
            # timeout: WorkNCCL(…)`): the same event as the bare watchdog line, not a c10d notice.
            kw: dict[str, Any] = {}
            m = _RANK_TAG_END.search(text, 0, at)
            if m:
                kw.update(present(nccl_rank=to_int(m.group(1))))
            kw.update(_parse_watchdog_body(text[at + len(_WD_CAUGHT):]))
            return NcclWatchdogTimeout, kw
        if head.startswith("[") and "Rank " in head and "]" in head:
            rank = to_int(head[head.rindex("Rank ") + 5 : head.rindex("]")])
        elif head.startswith("Stack trace"):  # the watchdog's trace of the failed collective: no rank
            rank = None
        else:  # Gloo `Rank 3 successfully reached monitoredBarrier, …`
            rank = to_int((head.split(" ", 2) + [""])[1])
        # The file and level are in the c10d envelope, which a message callback does not see.
        return C10dLog, {**present(torch_rank=rank), "text": text.strip()}

    def cpp_stack(self, children: Children) -> Result:
        return CppStack, {"text": str(children[0])}

    def cpp_terminate(self, children: Children) -> Result:
        head = children[0]
        if head.type == "CPP_WHAT":
            return CppTerminate, {"what": _text(children)}
        text = str(head)
        exc_type = text.split("'")[1] if "'" in text else ""
        return CppTerminate, {"exc_type": exc_type}

    # ------------------------------------------------------------------ crash, hang, shutdown

    def sigquit_received(self, children: Children) -> Result:
        phase = "running" if children[0].type == "SIGQUIT_RUNNING" else "launch"
        return SigquitReceived, {"phase": phase}

    def scheduler_dead(self, children: Children) -> Result:
        return SchedulerDead, present(dead_rank=_first_int(str(children[0])))

    def exit_code(self, children: Children) -> Result:
        return ExitCode, present(code=to_int(str(children[0]).rsplit(" ", 1)[-1]))

    def killed(self, children: Children) -> Result:
        return Killed, {}

    def shell_signal(self, children: Children) -> Result:
        return ShellSignal, {"text": "".join(str(c) for c in children)}

    def subprocess_crashed(self, children: Children) -> Result:
        text = str(children[0])
        if children[0].type == "SUBPROCESS_TERMINATED":
            # Scheduler or DataParallelController 1234 terminated with -9
            pid, code = (_ints(text) + [None, None])[:2]
            return SubprocessCrashed, {
                "name": "Scheduler or DataParallelController",
                **present(pid=pid, exit_code=code),
            }
        name = text[len("Subprocess ") : text.index(" (pid=")]
        pid = to_int(text[text.index("(pid=") + 5 : text.index(")", text.index("(pid="))])
        code = to_int(text[text.rindex(" ") + 1 : -1])
        return SubprocessCrashed, {"name": name, **present(pid=pid, exit_code=code)}

    def sglang_watchdog(self, children: Children) -> Result:
        text = str(children[0])
        timeout = to_float_or_none(text[text.index("watchdog_timeout=") + 17 :].split(",")[0].rstrip(")"))
        if children[0].type == "SGLANG_WATCHDOG_OLD":
            return SglangWatchdog, {"debug_name": "Scheduler", "timeout_s": timeout, "soft": False}
        return SglangWatchdog, {
            "debug_name": text.split(" ", 1)[0],
            "timeout_s": timeout,
            "soft": text.endswith("self.soft=True)"),
        }

    def batch_dump(self, children: Children) -> Result:
        return BatchDump, present(batch_size=_first_int(str(children[0])))

    def health_check_failed(self, children: Children) -> Result:
        text = str(children[0])
        value = text[text.index("for last ") + 9 :].split(" ")[0]
        return HealthCheckFailed, present(timeout_s=to_float_or_none(value))

    # ------------------------------------------------------------------ warnings output, JIT

    def python_warning(self, children: Children) -> Result:
        head = str(children[0])
        location, category, _ = head.rsplit(":", 2)
        path, lineno = location.rsplit(":", 1)
        return PythonWarning, {
            "path": path,
            **present(lineno=to_int(lineno)),
            "category": category.strip(),
            "message": _text(children),
        }

    def jit_compile(self, children: Children) -> Result:
        head = children[0]
        if head.type == "DEEPGEMM_JIT_SESSION":
            return JitCompile, {"library": "deepgemm", "stage": "begin", "name": "pre-compile"}
        stage = "end" if head.type == "JIT_FINISHED" else "begin"
        return JitCompile, {
            "library": "flashinfer",
            "stage": stage,
            "name": _text(children).strip(),
        }


# ---------------------------------------------------------------------- known-message field parsers
# `t` = texts of the kept tokens, the code terminal first (then the TEXT rest, if any).


def _rest(t: list[str]) -> str:
    return t[1] if len(t) > 1 else ""


@known_fields("FAULTHANDLER_THREAD")
def _faulthandler(t: list[str]) -> dict[str, Any]:
    return {"thread": t[0].split(" 0x")[1].split(" ")[0], "current": t[0].startswith("Current")}


@known_fields("NCCL_WATCHDOG_TAIL")
def _nccl_tail(t: list[str]) -> dict[str, Any]:
    text = t[0].strip()
    if text[:1].isdigit():  # wrapped right after `Timeout(ms)=`: the first number is the timeout
        text = "Timeout(ms)=" + text
    return _parse_watchdog_body(text)


@known_fields("PYSPY_FAILED")
def _pyspy(t: list[str]) -> dict[str, Any]:
    error = _rest(t).strip()
    return {"pid": _ints(t[0])[0], "error": error.removeprefix("Error:").strip()}


@known_fields("WATCHDOG_DEBUG_INFO")
def _debug_info(t: list[str]) -> dict[str, Any]:
    return {"debug_name": t[0].split(" ", 1)[0]}


@known_fields("WATCHDOG_THREAD_CRASHED")
def _watchdog_crashed(t: list[str]) -> dict[str, Any]:
    return {"debug_name": t[0].split(" ", 1)[0], "error": _rest(t)}


@known_fields("WATCHDOG_INITIALIZED")
def _watchdog_init(t: list[str]) -> dict[str, Any]:
    return {"name": t[0].split(" ")[1]}


@known_fields("CRASH_DUMP_START")
def _crash_dump_start(t: list[str]) -> dict[str, Any]:
    m = re.search(r"crash_dump_folder=(['\"])(.*)\1", _rest(t))
    return {"folder": m.group(2)} if m else {}


@known_fields("CRASH_DUMP_DONE")
def _crash_dump_done(t: list[str]) -> dict[str, Any]:
    finished, unfinished = (_ints(t[0]) + [None, None])[:2]
    return {"finished": finished, "unfinished": unfinished, "filename": _rest(t).strip()}


@known_fields("DUMPER_WARNING")
def _dumper(t: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"message": _rest(t)}
    m = re.match(r"'([^']*)' has not completed after (\d+(?:\.\d+)?)s", _rest(t))
    if m:
        out["operation"] = m.group(1)
        out["timeout_s"] = to_float_or_none(m.group(2))
    return out


@known_fields("SIGTERM_NODE_RANK")
def _sigterm_node(t: list[str]) -> dict[str, Any]:
    return {"node_rank": _ints(t[0])[0]}


@known_fields("GRACEFUL_EXIT")
def _graceful(t: list[str]) -> dict[str, Any]:
    return {"remaining": _ints(t[0])[0]}


@known_fields("SIGTERM_FORCE_EXIT")
def _force_exit(t: list[str]) -> dict[str, Any]:
    return {"reason": t[0][len("Signal SIGTERM received while ") :].split(". Force exiting")[0]}


@known_fields("SCHEDULERS_STILL_ALIVE")
def _still_alive(t: list[str]) -> dict[str, Any]:
    return {"seconds": to_float_or_none((_NUM.findall(t[0]) or [None])[0])}


@known_fields(
    "HTTP_SERVER_ERROR",
    "HTTP_CLIENT_DISCONNECTED",
    "REQUEST_ERROR",
    "TOOL_CALL_PARSE_ERROR",
    "REASONING_PARSE_ERROR",
)
def _error_rest(t: list[str]) -> dict[str, Any]:
    return {"error": _rest(t)}


@known_fields("CUSTOM_AR_SETUP_FAILED")
def _custom_ar_failed(t: list[str]) -> dict[str, Any]:
    return {"error": _rest(t).split(". To silence this warning")[0]}


@known_fields("INVALID_REQUEST")
def _invalid_request(t: list[str]) -> dict[str, Any]:
    rest = _rest(t)
    m = re.search(r", (?:self|req)\.rid=(['\"]?)([^'\"]*)\1\s*$", rest)
    if m:
        return {"error": rest[: m.start()], "rid": m.group(2)}
    return {"error": rest}


@known_fields("ABORT_RID_NOT_FOUND", "OUTPUT_FOR_DELETED_RID")
def _rid_rest(t: list[str]) -> dict[str, Any]:
    m = re.match(r"(['\"]?)([^'\"\s]+)\1", _rest(t))
    return {"rid": m.group(2)} if m else {}


@known_fields("CUSTOM_SIGQUIT_HANDLER")
def _custom_handler(t: list[str]) -> dict[str, Any]:
    return {"handler": _rest(t)}


@known_fields("WEIGHTS_NOT_READY")
def _weights_not_ready(t: list[str]) -> dict[str, Any]:
    return {"timeout_s": to_float_or_none((_NUM.findall(t[0]) or [None])[0])}


@known_fields("GRAMMAR_ACCEPT_FAILED")
def _grammar_accept(t: list[str]) -> dict[str, Any]:
    m = re.match(r"(\S+) with token (-?\d+): ?(.*)", _rest(t))
    if not m:
        return {}
    return {"rid": m.group(1), "token_id": to_int(m.group(2)), "error": m.group(3)}


@known_fields("PORT_IN_USE")
def _port_in_use(t: list[str]) -> dict[str, Any]:
    ports = {k: to_int(v) for k, v in re.findall(r"(\w+)=(\d+)", _rest(t))}
    return {"ports": {k: v for k, v in ports.items() if v is not None}}


@known_fields("DECODE_OUT_OF_MEMORY")
def _decode_oom(t: list[str]) -> dict[str, Any]:
    return {"never_happen": "never happen" in t[0]}


@known_fields("TRY_ALLOCATE_TOKENS")
def _try_allocate(t: list[str]) -> dict[str, Any]:
    return {"tokens": _ints(t[0])[0]}


@known_fields(
    "MEM_LEAK_TOKEN_KV_POOL", "MEM_LEAK_REQ_TOKEN_POOL", "MEM_LEAK_KV_POOL", "MEMORY_UNBALANCED"
)
def _leak_values(t: list[str]) -> dict[str, Any]:
    return {"values": _kv_values(_rest(t))}


@known_fields("MODEL_IMPORT_IGNORED")
def _import_ignored(t: list[str]) -> dict[str, Any]:
    module = t[0][len("Ignore import error when loading ") :].rstrip(" ")[:-1]
    return {"module": module, "model": module.rsplit(".", 1)[-1], "error": _rest(t)}


@known_fields("MODEL_INSTANTIATE_FAILED")
def _instantiate_failed(t: list[str]) -> dict[str, Any]:
    return {"model": t[0][len("Failed to instantiate ") :].split(":")[0], "error": _rest(t)}


@known_fields("SGL_KERNEL_LOG")
def _sgl_kernel(t: list[str]) -> dict[str, Any]:
    return {"level": t[0].split("] ")[1].rstrip(": "), "message": _rest(t)}


@known_fields("GPU_CONTEXT")
def _gpu_context(t: list[str]) -> dict[str, Any]:
    text = "".join(t)
    out: dict[str, Any] = {}
    m = re.search(r"self\.device=(['\"]?)([^'\"\s]*)\1", text)
    if m:
        out["device"] = m.group(2)
    m = re.search(r"CUDA_VISIBLE_DEVICES'\)=(None|'[^']*')", text)
    if m:
        out["cuda_visible_devices"] = None if m.group(1) == "None" else m.group(1)[1:-1]
    for key in ("gpu_id", "tp_rank", "tp_size"):
        m = re.search(rf"self\.{key}=(\d+)", text)
        if m:
            out[key] = to_int(m.group(1))
    return out


@known_fields("DEVICE_ASSERT_FAILED")
def _device_assert(t: list[str]) -> dict[str, Any]:
    m = re.match(r"(.+?):(\d+), condition: (.*)", _rest(t))
    if not m:
        return {"condition": _rest(t)}
    return {"file": m.group(1), "line": to_int(m.group(2)), "condition": m.group(3)}


@known_fields("CUDA_DEVICE_ASSERT")
def _cuda_device_assert(t: list[str]) -> dict[str, Any]:
    m = re.match(r"([^\s:]+):(\d+): .*Assertion `(.*)` failed\.", t[0])
    assert m is not None
    return {"file": m.group(1), "line": to_int(m.group(2)), "condition": m.group(3)}


# ---- §4 warnings


@known_fields("QUANT_NOT_OPTIMIZED")
def _quant(t: list[str]) -> dict[str, Any]:
    return {"quantization": t[0].split(" ", 1)[0]}


@known_fields("CONTEXT_LENGTH_OVERRIDE")
def _context_override(t: list[str]) -> dict[str, Any]:
    m = re.match(
        r"Warning: (.+?) context_length \((\d+)\) is greater than the derived context_length \((\d+)\)",
        t[0],
    )
    assert m is not None
    return {
        "reason": m.group(1),
        "context_length": to_int(m.group(2)),
        "derived_context_length": to_int(m.group(3)),
    }


@known_fields("DRAFT_MAX_POSITION_OVERRIDE")
def _draft_max_pos(t: list[str]) -> dict[str, Any]:
    return {"context_length": _ints(t[0])[0]}


@known_fields("DTYPE_CAST")
def _dtype_cast(t: list[str]) -> dict[str, Any]:
    verb, src, _to, dst = t[0].rstrip(".").split(" ")
    return {"from_dtype": src, "to_dtype": dst, "downcast": verb == "Downcasting"}


@known_fields("TRANSFORMERS_VERSION_ROPE")
def _transformers_version(t: list[str]) -> dict[str, Any]:
    words = t[0].rstrip(".").split(" ")
    return {"version": words[2], "model_type": words[-1]}


@known_fields("MODELOPT_EXPERIMENTAL")
def _modelopt(t: list[str]) -> dict[str, Any]:
    return {"format": t[0][len("Detected ") : -len(" checkpoint.")]}


@known_fields("TRANSFORMERS_IMPL_FALLBACK")
def _impl_fallback(t: list[str]) -> dict[str, Any]:
    return {"architecture": t[0].split(" ", 1)[0]}


@known_fields("GPT_OSS_MOE_KERNEL")
def _gpt_oss_kernel(t: list[str]) -> dict[str, Any]:
    rest = _rest(t)
    m = re.search(r"(?:enabling|using) (.+?) (?:MOE|MoE) kernel", rest)
    out: dict[str, Any] = {"kernel": m.group(1) if m else rest.rstrip(".")}
    m = re.search(r"SM(\d+)", t[0])
    if m:
        out["sm"] = to_int(m.group(1))
    return out


@known_fields("CUSTOM_AR_WORLD_SIZE")
def _ar_world_size(t: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"world_size": _ints(t[0])[0]}
    m = re.search(r"Supported world sizes: (\[[^\]]*\]|[^.]*)", _rest(t))
    if m:
        sizes = _ints(m.group(1))
        out["supported"] = sizes
    return out


@known_fields("NUMA_NODES_UNUSED")
def _numa_unused(t: list[str]) -> dict[str, Any]:
    nodes, tp = _ints(t[0])[:2]
    return {"numa_nodes": nodes, "tp_size": tp}


@known_fields("NUMA_TP_LARGER")
def _numa_larger(t: list[str]) -> dict[str, Any]:
    tp, nodes = _ints(t[0])[:2]
    return {"tp_size": tp, "numa_nodes": nodes}


@known_fields("MAX_RUNNING_RESET")
def _max_running(t: list[str]) -> dict[str, Any]:
    reason = _rest(t).split(". You can override")[0].rstrip(".")
    return {"max_running_requests": _ints(t[0])[0], "reason": reason}


@known_fields("SPEC_V2_NON_OVERLAP")
def _spec_v2_non_overlap(t: list[str]) -> dict[str, Any]:
    return {"algorithms": _rest(t).split(" speculative decoding")[0]}


@known_fields("MIXED_CHUNK_DISABLED_SPEC")
def _mixed_chunk(t: list[str]) -> dict[str, Any]:
    return {"reason": _rest(t).rstrip(".")}


@known_fields("NGRAM_DRAFT_TOKENS_DEFAULT")
def _ngram_tokens(t: list[str]) -> dict[str, Any]:
    return {"num_draft_tokens": _ints(t[0])[0]}


@known_fields("RADIX_CACHE_DISABLED")
def _radix_disabled(t: list[str]) -> dict[str, Any]:
    return {"reason": (t[0].split(" ", 3)[3] + _rest(t)).rstrip(".")}


@known_fields("DP_ATTENTION_CHUNKED_PREFILL")
def _dp_chunked(t: list[str]) -> dict[str, Any]:
    return {"chunked_prefill_size": _ints(t[0])[0]}


@known_fields("INPUT_TRUNCATED")
def _input_truncated(t: list[str]) -> dict[str, Any]:
    tokens, ctx = _ints(t[0])[:2]
    return {"input_tokens": tokens, "context_len": ctx}


@known_fields("MAX_NEW_TOKENS_TRUNCATED")
def _max_new_truncated(t: list[str]) -> dict[str, Any]:
    tokens, new, ctx = _ints(t[0])[:3]
    return {"input_tokens": tokens, "max_new_tokens": new, "context_len": ctx}


@known_fields("CUDA_GRAPH_DISABLED")
def _cuda_graph_disabled(t: list[str]) -> dict[str, Any]:
    reason = _rest(t).rstrip(".")
    return {"reason": reason.removeprefix("of using ")}


@known_fields("PIECEWISE_CUDA_GRAPH_DISABLED")
def _piecewise_disabled(t: list[str]) -> dict[str, Any]:
    return {"graph": t[0].split(" ")[1], "reason": _rest(t).rstrip(".")}


@known_fields("PAGE_SIZE_OVERRIDE")
def _page_size(t: list[str]) -> dict[str, Any]:
    rest = _rest(t)
    out: dict[str, Any] = {"backend": t[0][: -len(" only supports ")]}
    m = re.search(r"from (\d+) to (\d+)", rest) or re.search(r"change page_size to (\d+)", rest)
    if m and m.lastindex == 2:
        out["page_size_from"] = to_int(m.group(1))
        out["page_size"] = to_int(m.group(2))
    elif m:
        out["page_size"] = to_int(m.group(1))
    return out


@known_fields("ATTENTION_PLATFORM_FALLBACK")
def _platform_fallback(t: list[str]) -> dict[str, Any]:
    m = re.search(r"fallback to (\w+) backend", t[0])
    return {"backend": m.group(1) if m else "torch_native"}


@known_fields("DRAFT_ATTENTION_OVERRIDE")
def _draft_attention(t: list[str]) -> dict[str, Any]:
    return {"backend": t[0].rsplit(" ", 1)[1].rstrip(".")}


@known_fields("DETERMINISTIC_OVERRIDE")
def _deterministic(t: list[str]) -> dict[str, Any]:
    text = t[0]
    if text.startswith("Attention"):
        return {"setting": "attention_backend", "value": text.split("'")[1]}
    if text.startswith("Sampling"):
        return {"setting": "sampling_backend", "value": "pytorch"}
    return {"setting": "nccl_algo", "value": "allreduce:tree"}


@known_fields("EP_SIZE_ADJUSTED")
def _ep_adjusted(t: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": t[0].split(" MoE", 1)[0]}
    sizes = _ints(_rest(t))
    if sizes:
        out["ep_size"] = sizes[0]
    return out


@known_fields("DEEPGEMM_WARMUP_REDUCED")
def _deepgemm_warmup(t: list[str]) -> dict[str, Any]:
    budget, required, max_m = (_NUM.findall(t[0]) + ["", "", ""])[:3]
    return {
        "memory_budget_gb": to_float_or_none(budget),
        "required_memory_gb": to_float_or_none(required),
        "max_m": to_int(max_m),
    }


@known_fields("MXFP8_MOE_BACKEND_OVERRIDE")
def _mxfp8(t: list[str]) -> dict[str, Any]:
    return {"overridden": _rest(t).rstrip(".").strip("'\"")}


@known_fields("FP8_GEMM_DEEPGEMM_FALLBACK")
def _fp8_gemm(t: list[str]) -> dict[str, Any]:
    m = re.match(r"(\[[^\]]*\])", _rest(t))
    return {"block": _ints(m.group(1))} if m else {}


def _renamed(t: list[str], key: str) -> dict[str, Any]:
    """`'<old>' is deprecated … use '<new>'`: the quoted old name under `key`, and its replacement."""
    out: dict[str, Any] = {key: t[0].split("'")[1]}
    m = re.search(r"use '([^']+)'", _rest(t))
    if m:
        out["replacement"] = m.group(1)
    return out


@known_fields("ENDPOINT_DEPRECATED")
def _endpoint(t: list[str]) -> dict[str, Any]:
    return _renamed(t, "endpoint")


@known_fields("CLI_ARG_DEPRECATED")
def _cli_arg(t: list[str]) -> dict[str, Any]:
    return {"option": t[0].split("'")[1]}


@known_fields("TOOL_CALL_PARSER_DEPRECATED")
def _tool_parser(t: list[str]) -> dict[str, Any]:
    return _renamed(t, "parser")


@known_fields("SYMM_MEM_PREALLOC")
def _symm_mem(t: list[str]) -> dict[str, Any]:
    m = _NUM.search(_rest(t))
    return {"size_gb": to_float_or_none(m.group(0))} if m else {}


@known_fields("CUDNN_VERSION_UNKNOWN")
def _cudnn(t: list[str]) -> dict[str, Any]:
    return {"torch_version": t[0].split("torch==", 1)[1].split(" ")[0].rstrip(".")}


@known_fields("LORA_FLAG_ADJUSTED")
def _lora(t: list[str]) -> dict[str, Any]:
    return {"enable_lora": "set to True" in t[0]}


@known_fields("RLIMIT_FAILED")
def _rlimit(t: list[str]) -> dict[str, Any]:
    return {"resource": t[0].split(" ")[3].rstrip(": "), "error": _rest(t)}


@known_fields("LONG_GC")
def _long_gc(t: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    m = re.match(r"(\d+)", _rest(t))
    if m:
        out["generation"] = to_int(m.group(1))
    m = re.search(r"Duration: (\d+(?:\.\d+)?)s", _rest(t))
    if m:
        out["duration_s"] = to_float_or_none(m.group(1))
    return out


@known_fields("GC_START")
def _gc_start(t: list[str]) -> dict[str, Any]:
    return {"generation": to_int(t[0].rsplit(" ", 1)[-1])}


@known_fields("GC_END")
def _gc_end(t: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"generation": to_int(t[0].rsplit(" ", 1)[-1])}
    rest = _rest(t)
    for key, name, conv in (
        ("Duration", "duration_s", to_float_or_none),
        ("Collected", "collected", to_int),
        ("Uncollectable", "uncollectable", to_int),
    ):
        m = re.search(rf"{key}: (\d+(?:\.\d+)?)", rest)
        if m:
            out[name] = conv(m.group(1))
    return out
