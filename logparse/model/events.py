"""Typed events: one frozen dataclass per kind of thing an SGLang log says.

Events are `@record` classes (logparse/model/record.py): frozen, slotted, keyword-only data classes
like `@dataclass(frozen=True, slots=True, kw_only=True)`, without its per-class code generation,
which cost ~40 % of the start-up of a short run. Every event carries where it came from (`line`, `end_line`, `source`), when (`ts`, or None when
the line had no timestamp) and which process printed it (`rank`: the rank tags as printed inside
the prefix, e.g. ``"TP3"``, ``"DP1 TP1"``, ``"TP5 EP5"``; None for the main process and for bare
lines). Optional fields are None, never missing.

The grammar's rule aliases name these classes one to one (``-> decode_batch`` ↔ `DecodeBatch`);
`tests/test_grammar_aliases.py` keeps them in step. Records assembled from several lines
(`Traceback`, `BenchServingResult`, ...) are events too; they have no grammar alias.
"""

from __future__ import annotations

import re
from dataclasses import field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from logparse.model.record import Record, record


class Severity(StrEnum):
    """A finding's severity. Members are declared most severe first: that order is THE severity
    order (`SEVERITY_ORDER`), which sorting, root-cause choice and --fail-on all derive from."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


# 0 = most severe. The one owner of the order: the engine sorts by it, the gate's --fail-on
# threshold ranks by it (as `len(Severity) - 1 - order`).
SEVERITY_ORDER: dict[Severity, int] = {s: i for i, s in enumerate(Severity)}


@record
class Event(Record):
    """Base of every event: provenance and envelope."""

    line: int = 0
    end_line: int = 0
    ts: datetime | None = None
    rank: str | None = None
    source: str = ""
    # Wrapper metadata that the reader stripped (container, Ray pid, ...), or None.
    wrapper: Any = None

    kind: ClassVar[str] = "event"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict of the event's fields (wrapper flattened to its stream)."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "wrapper":
                value = getattr(value, "stream", None) or None
            elif isinstance(value, datetime):
                value = value.isoformat(sep=" ")
            elif isinstance(value, tuple):
                value = [v.as_dict() if isinstance(v, Event) else v for v in value]
            out[f.name] = value
        return out


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def kind_of(cls: type[Event]) -> str:
    """The snake_case kind (and grammar alias) of an event class: DecodeBatch → decode_batch."""
    return _CAMEL.sub("_", cls.__name__).lower()


EVENT_CLASSES: dict[str, type[Event]] = {}


def event(cls: type[Event]) -> type[Event]:
    """Register an event class under its snake_case kind."""
    cls.kind = kind_of(cls)
    EVENT_CLASSES[cls.kind] = cls
    return cls


# --------------------------------------------------------------------------- generic


@event
@record
class Unparsed(Event):
    """A line the grammar does not know. Counted and grouped into templates, never an error."""

    text: str = ""


# --------------------------------------------------------------------------- startup


@event
@record
class ServerArgs(Event):
    """`server_args=ServerArgs(...)` (dataclass repr, ≤0.5.17) or `server_args={...}` (dict, 0.5.20+)."""

    args: dict[str, Any] = field(default_factory=dict)
    style: str = "dataclass"
    complete: bool = True  # False when the line was cut and only a prefix of the fields was read


@event
@record
class LaunchCommand(Event):
    """A pasted shell command that starts SGLang or one of its tools, with env vars and flags."""

    program: str = ""  # 'sglang.launch_server', 'sglang serve', 'sglang.bench_serving', ...
    env: dict[str, str] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@event
@record
class LaunchDp(Event):
    """`Launch DP1 starting at GPU #4.` (DataParallelController)."""

    dp_rank: int = 0
    base_gpu: int = 0


@event
@record
class DistInitBegin(Event):
    """`Init torch distributed begin.` / `Init nccl begin.` / `Init parallel begin.`"""

    variant: str = "torch"


@event
@record
class DistInitEnd(Event):
    """`Init torch distributed ends. [elapsed=1.93 s, ]mem usage=0.79 GB` / `Init parallel ends.`"""

    variant: str = "torch"
    elapsed_s: float | None = None
    mem_usage_gb: float | None = None


@event
@record
class NcclVersion(Event):
    """`sglang is using nccl==2.27.5`."""

    version: str = ""


@event
@record
class NcclLog(Event):
    """`host:pid:tid [dev] NCCL INFO|WARN text` (NCCL_DEBUG output)."""

    host: str = ""
    pid: int = 0
    tid: int = 0
    device: int = 0
    level: str = "INFO"
    text: str = ""
    nranks: int | None = None
    nccl_rank: int | None = None
    version: str | None = None


@event
@record
class GlooConnected(Event):
    """`[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7`."""

    gloo_rank: int = 0
    peers: int = 0
    expected: int = 0


@event
@record
class WeightLoadBegin(Event):
    """`Load weight begin. avail mem=78.31 GB`."""

    avail_mem_gb: float | None = None


@event
@record
class WeightLoadEnd(Event):
    """`Load weight end. [elapsed=4.12 s, ]type=X, [dtype=torch.bfloat16, ][quant=fp8, …, ]avail mem=… GB[, mem usage=… GB].`"""

    elapsed_s: float | None = None
    model_class: str | None = None
    dtype: str | None = None
    quant: str | None = None
    avail_mem_gb: float | None = None
    mem_usage_gb: float | None = None
    # 0.5.23 `Load weight end. Committed real weights after CUDA graph capture in 3.21 s (…)`: a
    # second end line per rank, elapsed_s = the commit time, not the load time.
    committed_after_capture: bool = False


@event
@record
class KvCacheAllocated(Event):
    """`KV Cache is allocated. [dtype: …, ]#tokens: N, K size: … GB, V size: … GB` (or `KV size:`)."""

    cache_name: str = "KV Cache"
    tokens: int | None = None
    k_size_gb: float | None = None
    v_size_gb: float | None = None
    kv_size_gb: float | None = None
    dtype: str | None = None
    upper_bound: bool = False  # `… KV Cache VA upper bound. …` (0.5.23 post-capture pools): not yet allocated


@event
@record
class KvCacheDtype(Event):
    """`Using KV cache dtype: torch.bfloat16`."""

    dtype: str = ""


@event
@record
class MambaCacheAllocated(Event):
    """`Mamba Cache is allocated. max_mamba_cache_size: 520, conv_state size: 0.60GB, ssm_state size: 25.16GB`."""

    max_size: int | None = None
    conv_gb: float | None = None
    ssm_gb: float | None = None
    # with speculative decoding: `intermediate_ssm_state_cache size: …GB intermediate_conv_window_cache size: …GB`
    intermediate_ssm_gb: float | None = None
    intermediate_conv_gb: float | None = None


@event
@record
class SwaPoolAllocated(Event):
    """`Use sliding window memory pool. full_layer_tokens=…, swa_layer_tokens=…` and the SWAKVPool line."""

    full_tokens: int | None = None
    swa_tokens: int | None = None
    mem_usage_gb: float | None = None


@event
@record
class MemoryPoolEnd(Event):
    """`Memory pool end. avail mem=8.43 GB`."""

    avail_mem_gb: float | None = None


class GraphKind(StrEnum):
    """Which CUDA graph a capture line is about."""

    TARGET = "target"  # the decode graph of the (target) model
    DRAFT = "draft"  # speculative draft decode graph
    DRAFT_EXTEND = "draft-extend"
    PIECEWISE = "piecewise"
    PREFILL = "prefill"
    VERIFY = "verify"


@event
@record
class CaptureBegin(Event):
    """`Capture cuda graph begin. This can take up to several minutes. avail mem=7.81 GB` and its siblings."""

    graph: str = "cuda graph"  # as printed: 'cuda graph', 'draft cuda graph', 'target decode CUDA graph', ...
    graph_kind: str = GraphKind.TARGET
    device: str = "cuda"  # cuda / cpu / npu / xpu
    avail_mem_gb: float | None = None
    backend: str | None = None
    # `bs=[…]` (0.5.14–0.5.20: the only place the captured batch sizes are printed) or, for prefill
    # graphs, `num_tokens=[…]`; () when the line has no list.
    sizes: tuple[int, ...] = ()


@event
@record
class CaptureBatchSizes(Event):
    """`Capture cuda graph bs [1, 2, 4, …]` (TP0 only) / `Capture cuda graph num tokens [...]`."""

    sizes: tuple[int, ...] = ()
    what: str = "bs"  # 'bs' or 'num tokens'


@event
@record
class CaptureEnd(Event):
    """`Capture cuda graph end. Time elapsed: 6.24 s. mem usage=0.55 GB. avail mem=7.26 GB.` and siblings."""

    graph: str = "cuda graph"
    graph_kind: str = GraphKind.TARGET
    device: str = "cuda"
    elapsed_s: float | None = None
    mem_usage_gb: float | None = None
    avail_mem_gb: float | None = None
    sizes: tuple[int, ...] = ()


@event
@record
class ProgressBar(Event):
    """One tqdm refresh: `Capturing batches (bs=1 avail_mem=7.26 GB): 100%|███| 36/36 [00:06<00:00,  5.77it/s]`."""

    desc: str = ""
    bar_kind: str = "other"  # 'checkpoint-load', 'capture', 'piecewise', 'prefill-capture', 'download', 'other'
    percent: int | None = None
    n: int | None = None
    total: int | None = None
    elapsed_s: float | None = None
    remaining_s: float | None = None


@event
@record
class SchedulerLimits(Event):
    """`max_total_num_tokens=…, chunked_prefill_size=…, max_prefill_tokens=…, max_running_requests=…, context_len=…[, available_gpu_mem=… GB]`."""

    max_total_num_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int | None = None
    max_running_requests: int | None = None
    context_len: int | None = None
    available_mem_gb: float | None = None


@event
@record
class ProfiledTokensExceeded(Event):
    """`max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.`"""

    max_total_tokens: int = 0
    profiled: int = 0


@event
@record
class EngineStartupTimings(Event):
    """`Engine startup timings (s): load_weight=21.40, …, cuda_graph={decode=7.02, prefill=18.33}, …` (0.5.17+)."""

    phases: dict[str, float] = field(default_factory=dict)


@event
@record
class UvicornLifecycle(Event):
    """uvicorn's own lines: Started server process / Waiting for application startup / ... / Finished."""

    stage: str = ""  # started, waiting-startup, startup-complete, running, shutting-down, waiting-shutdown, shutdown-complete, finished
    pid: int | None = None
    url: str | None = None


@event
@record
class ServerReady(Event):
    """`The server is fired up and ready to roll!` — the readiness marker."""


@event
@record
class WeightsReady(Event):
    """`Weights are ready after 12.00 seconds` (checkpoint-engine wait)."""

    seconds: float | None = None


# --------------------------------------------------------------------------- runtime


@event
@record
class DecodeBatch(Event):
    """A `Decode batch` stats line (any release). Hot: stored in columns, see `columns.py`."""

    running: int | None = None
    tokens: int | None = None
    token_usage: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    cuda_graph: bool | None = None
    gen_throughput: float | None = None
    queue: int | None = None
    iteration: int | None = None
    extra: dict[str, float] = field(default_factory=dict)


@event
@record
class PrefillBatch(Event):
    """A `Prefill batch` stats line (any release). Hot: stored in columns."""

    new_seq: int | None = None
    new_token: int | None = None
    cached_token: int | None = None
    token_usage: float | None = None
    running: int | None = None
    queue: int | None = None
    cuda_graph: bool | None = None
    input_throughput: float | None = None
    iteration: int | None = None
    extra: dict[str, float] = field(default_factory=dict)


@event
@record
class Retraction(Event):
    """`KV cache pool is full. Retract requests. #retracted_reqs: …` / `Decode out of memory happened. …`."""

    retracted: int | None = None
    new_tokens_gained: int | None = None
    ratio_from: float | None = None
    ratio_to: float | None = None


@event
@record
class HttpAccess(Event):
    """uvicorn access line: `INFO:     127.0.0.1:43092 - "GET /health HTTP/1.1" 200 OK`. Hot: columns."""

    client: str = ""
    method: str = ""
    path: str = ""
    status: int = 0
    reason: str = ""


class _NoFields(dict):  # type: ignore[type-arg]
    """The fields of a known message that has none: one shared empty dict that refuses changes
    (a dict of its own per event cost ~64 bytes on every such line: 16 MB at a 1M-line log with
    request logging). Copy it (`dict(e.fields)`) to add to it."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a known message's empty fields are shared: copy them (dict(fields)) to change them")

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_no_fields, ())  # one object again after pickling (worker processes)


def _no_fields() -> dict[str, Any]:
    return NO_FIELDS


NO_FIELDS: dict[str, Any] = _NoFields()


@event
@record
class KnownMessage(Event):
    """A recognised fixed-text message (warnings of formats §4, notices): `code` names it, `fields` holds its values."""

    code: str = ""  # stable id, e.g. 'deepgemm-scale-fmt', 'custom-ar-pcie', 'max-running-reset'
    text: str = ""
    fields: dict[str, Any] = field(default_factory=dict)


@event
@record
class PythonWarning(Event):
    """Python `warnings` output: `/path/file.py:71: UserWarning: message`."""

    path: str = ""
    lineno: int = 0
    category: str = ""
    message: str = ""


@event
@record
class JitCompile(Event):
    """JIT compilation markers (FlashInfer `Loading JIT ops: X` / `Finished loading JIT ops: X`, DeepGEMM)."""

    library: str = ""
    stage: str = "begin"  # begin / end
    name: str = ""


# --------------------------------------------------------------------------- failures (line level)


@event
@record
class ExceptionHeader(Event):
    """`Scheduler hit an exception: Traceback …` and siblings; opens a traceback record."""

    process: str = ""  # Scheduler, TokenizerManager, DetokenizerManager, DataParallelController, warmup, ControllerSingle, ...
    rest: str = ""


@event
@record
class TracebackStart(Event):
    """`Traceback (most recent call last):`."""


@event
@record
class TracebackFrame(Event):
    """`  File "/…/scheduler.py", line 2753, in run_scheduler_process` (possibly cut)."""

    path: str = ""
    lineno: int | None = None
    func: str | None = None


@event
@record
class TracebackSource(Event):
    """An indented source or caret line inside a traceback."""

    text: str = ""


@event
@record
class ExceptionLine(Event):
    """`RuntimeError: message` — the last line of a traceback (or an excerpt that shows only it)."""

    exc_type: str = ""
    message: str = ""


@event
@record
class ExceptionChain(Event):
    """`During handling of the above exception, another exception occurred:` / `The above exception was the direct cause …`."""

    relation: str = "context"  # context / cause


@event
@record
class ProcessHeader(Event):
    """`Process SpawnProcess-1:` / `Exception in ControllerSingle:` before a child's traceback."""

    name: str = ""


@event
@record
class CppStack(Event):
    """C++ stack text: `Exception raised from checkTimeout at …`, `frame #0: …`."""

    text: str = ""


@event
@record
class CppTerminate(Event):
    """`terminate called after throwing an instance of 'c10::DistBackendError'` (and its `  what():` line)."""

    exc_type: str = ""
    what: str = ""


@event
@record
class SigquitReceived(Event):
    """`Received sigquit from a child process…` (launch) / `SIGQUIT received. signum=3, …` (running)."""

    phase: str = "launch"  # launch / running


@event
@record
class SchedulerDead(Event):
    """`Rank 0 scheduler is dead. Please check if there are relevant logs.`"""

    dead_rank: int = 0


@event
@record
class ExitCode(Event):
    """`Exit code: -9` after a dead-scheduler line."""

    code: int = 0


@event
@record
class Killed(Event):
    """The shell's `Killed` (SIGKILL of the foreground job)."""


@event
@record
class ShellSignal(Event):
    """`Segmentation fault (core dumped)` / `Aborted (core dumped)` / `Fatal Python error: …`."""

    text: str = ""


@event
@record
class SubprocessCrashed(Event):
    """`Subprocess X (pid=N) crashed with exit code C. Triggering SIGQUIT for cleanup...` / `… terminated with C`."""

    name: str = ""
    pid: int | None = None
    exit_code: int | None = None


@event
@record
class SglangWatchdog(Event):
    """`Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)` / old `Watchdog timeout (…=300)`."""

    debug_name: str = "Scheduler"
    timeout_s: float | None = None
    soft: bool = False


@event
@record
class BatchDump(Event):
    """`self.cur_batch.batch_size()=26, self.cur_batch.reqs=[…]` printed by the watchdog."""

    batch_size: int | None = None


@event
@record
class NcclWatchdogTimeout(Event):
    """torch ProcessGroupNCCL `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…, OpType=…, …, Timeout(ms)=…) ran for … milliseconds`."""

    nccl_rank: int | None = None
    seq: int | None = None
    op: str | None = None
    numel_in: int | None = None
    numel_out: int | None = None
    timeout_ms: int | None = None
    ran_ms: int | None = None


@event
@record
class C10dLog(Event):
    """Other torch C++ log lines: `[rank4]:[E304 12:54:52.12 ProcessGroupNCCL.cpp:1785] text`."""

    level: str = ""  # I W E F
    torch_rank: int | None = None
    file: str = ""
    text: str = ""


@event
@record
class HealthCheckFailed(Event):
    """`Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. …`."""

    timeout_s: float | None = None


# --------------------------------------------------------------------------- benchmark tools (line level)


@event
@record
class BenchBanner(Event):
    """A `====== Title ======` / `----- Section -----` rule line of a benchmark result block."""

    title: str = ""
    rule: str = "="  # '=' header/footer, '-' section


@event
@record
class BenchRow(Event):
    """`Label (unit):<pad> value` row of a benchmark block."""

    label: str = ""
    value: str = ""


@event
@record
class OneBatchLine(Event):
    """bench_one_batch output: `Prefill. latency: …`, `Decode 0. Batch size: …`, `Decode.  median …`, `Total. …`."""

    stage: str = ""  # prefill / decode-step / decode-median / total
    step: int | None = None
    batch_size: int | None = None
    latency_s: float | None = None
    throughput: float | None = None


# --------------------------------------------------------------------------- records (several lines)


@record(kw_only=False)
class Frame(Record):
    path: str
    lineno: int | None
    func: str | None


@event
@record
class Traceback(Event):
    """A Python traceback assembled from its lines: who raised what, through which frames."""

    process: str | None = None  # 'Scheduler', 'TokenizerManager', 'warmup', 'SpawnProcess-1', ...
    exc_type: str | None = None  # None when the excerpt is cut before the exception line
    message: str = ""
    frames: tuple[Frame, ...] = ()
    chain: tuple[tuple[str, str], ...] = ()  # earlier (exc_type, message) pairs of a chained traceback
    cut: bool = False  # no exception line: the excerpt ends inside the traceback
    headless: bool = False  # the excerpt starts inside the traceback (no header line)


@event
@record
class BenchServingResult(Event):
    """A `bench_serving` (or offline-throughput) result block, keyed by normalised field names."""

    title: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    complete: bool = True  # False when the block is cut before its footer


@event
@record
class BenchOneBatchResult(Event):
    """The result of one `bench_one_batch` run."""

    fields: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- pasted shell sessions
# (grammars/shell.lark). A command continued over several physical lines (`\`, `> ` continuation
# prompts, indented flags) is assembled into ONE LaunchCommand / ShellCommand by
# logparse/parsing/commands.py; the continuation lines' own events are consumed by it.


@event
@record
class ShellPrompt(Event):
    """A shell prompt with nothing typed after it: `root@abc123:/workspace# `, `(venv) $`."""

    prompt: str = ""


@event
@record
class ShellExport(Event):
    """`export VAR=value` (quotes removed). One event per variable: a line that exports several
    (`export A=1 B="x y"`) yields one event each, all on that line; `env` holds every assignment of
    the line, in order."""

    name: str = ""
    value: str = ""
    env: dict[str, str] = field(default_factory=dict)


@event
@record
class ShellCommand(Event):
    """A pasted shell command that does not start SGLang (`nvidia-smi`, `pip install …`, `cd /w`):
    recognised, so that its output is not mistaken for the server's."""

    text: str = ""  # the command as typed, without its prompt (continuation lines joined)
    program: str = ""  # its first word: 'nvidia-smi', 'pip', 'docker', ...
    prompt: str = ""


@event
@record
class CommandContinuation(Event):
    """A continuation line of a pasted command (`>     --tp 8 \\`, `    -v /data:/data \\`) whose
    command head is not in the excerpt (otherwise it is part of that command's event)."""

    text: str = ""  # the line without its `> ` continuation prompt


@event
@record
class PythonReplInput(Event):
    """A line typed at the Python REPL (`>>> import sglang`): not a shell command."""

    code: str = ""
