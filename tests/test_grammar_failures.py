"""Failures family of the grammar (grammars/failures.lark): one real line per shape → event.

Lines come from shared/sglang-log-formats.md (§1.6, §1.7, §4, §5, §6) and the development corpus.
Every line is also checked to give the same result on the fast path and on the LALR parser.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from logparse.grammar.build import get_parser
from logparse.io.reader import ReadReport, read_lines
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
    KnownMessage,
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
    Unparsed,
)
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def parser():
    return get_parser(strict=True)


def corpus_lines(name: str) -> list[str]:
    path = str(CORPUS / name)
    return [text for _no, text, _w in read_lines(path, ReadReport(path))]


# (line, envelope (style, rank) or None, event class, fields). For KnownMessage the fields are
# {"code", "fields"}; its `text` is checked to be the message part of the line.
CASES: list[tuple[str, tuple[str, str | None] | None, type, dict[str, Any]]] = [
    # ---- Python tracebacks (formats §1.6, §1.7)
    ("Traceback (most recent call last):", None, TracebackStart, {}),
    (
        "[2024-10-08 10:00:00 TP0] Traceback (most recent call last):",
        ("sglang", "TP0"),
        TracebackStart,
        {},
    ),
    ("[15:31:10 TP0] Traceback (most recent call last):", ("time", "TP0"), TracebackStart, {}),
    ("[rank0]: Traceback (most recent call last):", ("torch-rank", "rank0"), TracebackStart, {}),
    (
        "During handling of the above exception, another exception occurred:",
        None,
        ExceptionChain,
        {"relation": "context"},
    ),
    (
        "The above exception was the direct cause of the following exception:",
        None,
        ExceptionChain,
        {"relation": "cause"},
    ),
    (
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 3183, in run_scheduler_process',
        None,
        TracebackFrame,
        {
            "path": "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py",
            "lineno": 3183,
            "func": "run_scheduler_process",
        },
    ),
    (
        '  File "/home/xiaoi/sglang/python/sglang/srt/managers/sche',
        None,
        TracebackFrame,
        {
            "path": "/home/xiaoi/sglang/python/sglang/srt/managers/sche",
            "lineno": None,
            "func": None,
        },
    ),
    (
        '  File "/mnt/zzhbr/syncworkspace/fastrl/third-party/sglang/python/sglang/srt/managers/scheduler.py", line 3130',
        None,
        TracebackFrame,
        {
            "path": "/mnt/zzhbr/syncworkspace/fastrl/third-party/sglang/python/sglang/srt/managers/scheduler.py",
            "lineno": 3130,
            "func": None,
        },
    ),
    (
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1105 in event_loop_normal',
        None,
        TracebackFrame,
        {
            "path": "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py",
            "lineno": 1105,
            "func": "event_loop_normal",
        },
    ),
    (  # dev k-012 (sglang#22592): a frame copied out of a JSON log field keeps its quotes escaped
        'File \\"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\\", line 3805, in run_scheduler_process',
        None,
        TracebackFrame,
        {
            "path": "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py",
            "lineno": 3805,
            "func": "run_scheduler_process",
        },
    ),
    (  # … and cut right after its path (the excerpt's last line)
        'File \\"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\\",',
        None,
        TracebackFrame,
        {"path": "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", "lineno": None, "func": None},
    ),
    (
        '  File "<frozen runpy>", line 198, in _run_module_as_main',
        None,
        TracebackFrame,
        {"path": "<frozen runpy>", "lineno": 198, "func": "_run_module_as_main"},
    ),
    (
        '[rank0]:   File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2753, in run_scheduler_process',
        ("torch-rank", "rank0"),
        TracebackFrame,
        {
            "path": "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py",
            "lineno": 2753,
            "func": "run_scheduler_process",
        },
    ),
    ("    scheduler = Scheduler(", None, TracebackSource, {"text": "scheduler = Scheduler("}),
    ("                ^^^^^^^^^^", None, TracebackSource, {"text": "^^^^^^^^^^"}),
    (
        "                    ~~~~~~~~~~~~~~^^^^^^",
        None,
        TracebackSource,
        {"text": "~~~~~~~~~~~~~~^^^^^^"},
    ),
    ("  warnings.warn(", None, TracebackSource, {"text": "warnings.warn("}),
    (
        "  Example: sglang serve --model-path <model> [options]",
        None,
        TracebackSource,
        {"text": "Example: sglang serve --model-path <model> [options]"},
    ),
    (
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        None,
        TracebackSource,
        {"text": "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
    ),
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88",
        None,
        ExceptionLine,
        {
            "exc_type": "RuntimeError",
            "message": "Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.88",
        },
    ),
    ("AssertionError", None, ExceptionLine, {"exc_type": "AssertionError", "message": ""}),
    ("AssertionError: ", None, ExceptionLine, {"exc_type": "AssertionError", "message": ""}),
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.02 GiB is free.",
        None,
        ExceptionLine,
        {
            "exc_type": "torch.OutOfMemoryError",
            "message": "CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.02 GiB is free.",
        },
    ),
    (
        "tvm.error.InternalError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture",
        None,
        ExceptionLine,
        {
            "exc_type": "tvm.error.InternalError",
            "message": "Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture",
        },
    ),
    (
        "ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task() (pid=508648, ip=10.1.200.6)",
        None,
        ExceptionLine,
        {
            "exc_type": "ray.exceptions.RayTaskError(OutOfMemoryError)",
            "message": "ray::main_task() (pid=508648, ip=10.1.200.6)",
        },
    ),
    (
        "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30001')",
        None,
        ExceptionLine,
        {
            "exc_type": "zmq.error.ZMQError",
            "message": "Address already in use (addr='tcp://127.0.0.1:30001')",
        },
    ),
    (
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        None,
        ExceptionLine,
        {
            "exc_type": "torch.distributed.DistBackendError",
            "message": "NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        },
    ),
    (
        "KeyError: 'language_model.model.layers.0.self_attn.qkv_proj.k_scale'",
        None,
        ExceptionLine,
        {
            "exc_type": "KeyError",
            "message": "'language_model.model.layers.0.self_attn.qkv_proj.k_scale'",
        },
    ),
    (
        "OSError: [Errno 12] Cannot allocate memory",
        None,
        ExceptionLine,
        {"exc_type": "OSError", "message": "[Errno 12] Cannot allocate memory"},
    ),
    (
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00",
        None,
        ExceptionLine,
        {
            "exc_type": "Exception",
            "message": "Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00",
        },
    ),
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376.",
        None,
        ExceptionLine,
        {
            "exc_type": "triton.runtime.errors.OutOfResources",
            "message": "out of resource: shared memory, Required: 131072, Hardware limit: 101376.",
        },
    ),
    (
        "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='127.0.0.1', port=30000): Read timed out. (read timeout=600)",
        None,
        ExceptionLine,
        {
            "exc_type": "requests.exceptions.ReadTimeout",
            "message": "HTTPConnectionPool(host='127.0.0.1', port=30000): Read timed out. (read timeout=600)",
        },
    ),
    ("KeyboardInterrupt", None, ExceptionLine, {"exc_type": "KeyboardInterrupt", "message": ""}),
    ("StopIteration", None, ExceptionLine, {"exc_type": "StopIteration", "message": ""}),
    (
        "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered",
        ("torch-rank", "rank0"),
        ExceptionLine,
        {
            "exc_type": "RuntimeError",
            "message": "CUDA error: an illegal memory access was encountered",
        },
    ),
    # ---- headers that open a traceback (§6.1)
    (
        "[2026-03-07 15:30:19 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        ("sglang", "TP1"),
        ExceptionHeader,
        {"process": "Scheduler", "rest": "Traceback (most recent call last):"},
    ),
    (
        "Scheduler hit an exception: Traceback (most recent call last):",
        None,
        ExceptionHeader,
        {"process": "Scheduler", "rest": "Traceback (most recent call last):"},
    ),
    (
        "DetokenizerManager hit an exception: Traceback (most recent call last):",
        None,
        ExceptionHeader,
        {"process": "DetokenizerManager", "rest": "Traceback (most recent call last):"},
    ),
    (
        "[2026-03-07 15:30:19] TokenizerManager hit an exception: Traceback (most recent call last):",
        ("sglang", None),
        ExceptionHeader,
        {"process": "TokenizerManager", "rest": "Traceback (most recent call last):"},
    ),
    (
        "DataParallelController hit an exception: Traceback (most recent call last):",
        None,
        ExceptionHeader,
        {"process": "DataParallelController", "rest": "Traceback (most recent call last):"},
    ),
    (
        "MultiTokenizerRouter hit an exception: Traceback (most recent call last):",
        None,
        ExceptionHeader,
        {"process": "MultiTokenizerRouter", "rest": "Traceback (most recent call last):"},
    ),
    (
        "GrpcRequestManager hit an exception: Traceback (most recent call last):",
        None,
        ExceptionHeader,
        {"process": "GrpcRequestManager", "rest": "Traceback (most recent call last):"},
    ),
    (
        "[2025-03-05 10:34:48] Initialization failed. warmup error: Traceback (most recent call last):",
        ("sglang", None),
        ExceptionHeader,
        {"process": "warmup", "rest": "Traceback (most recent call last):"},
    ),
    ("Exception in ControllerSingle:", None, ProcessHeader, {"name": "ControllerSingle"}),
    ("Exception in ModelTpServer:", None, ProcessHeader, {"name": "ModelTpServer"}),
    ("Exception in thread Thread-3 (_run):", None, ProcessHeader, {"name": "Thread-3 (_run)"}),
    ("Process SpawnProcess-1:", None, ProcessHeader, {"name": "SpawnProcess-1"}),
    ("Process Process-6:", None, ProcessHeader, {"name": "Process-6"}),
    ("Process SpawnProcess-1:1:", None, ProcessHeader, {"name": "SpawnProcess-1"}),
    # ---- faulthandler dump after a native crash (§1.7)
    (
        "Thread 0x00007f3a2bfff640 (most recent call first):",
        None,
        KnownMessage,
        {"code": "faulthandler-thread", "fields": {"thread": "00007f3a2bfff640", "current": False}},
    ),
    (
        "Current thread 0x00007f3a2bfff640 (most recent call first):",
        None,
        KnownMessage,
        {"code": "faulthandler-thread", "fields": {"thread": "00007f3a2bfff640", "current": True}},
    ),
    # ---- torch c10d / C++ (§1.7, §6.3); corpus dev-027 (markdown stars, hard-wrapped), dev-031, dev-039
    (
        "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.",
        ("c10d", "rank0"),
        NcclWatchdogTimeout,
        {
            "nccl_rank": 0,
            "seq": 7753,
            "op": "_REDUCE_SCATTER_BASE",
            "numel_in": 544997376,
            "numel_out": 68124672,
            "timeout_ms": 600000,
            "ran_ms": 600061,
        },
    ),
    # the watchdog thread's own record of the same timeout (torch 2.4+): dev/r-006, sgl-project/sglang#10124
    (
        "[rank3]:[E908 08:39:25.432755661 ProcessGroupNCCL.cpp:2068] [PG ID 2 PG GUID 3 Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=432927, OpType=_REDUCE_SCATTER_BASE, NumelIn=88080384, NumelOut=5505024, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.",
        ("c10d", "rank3"),
        NcclWatchdogTimeout,
        {"nccl_rank": 3, "seq": 432927, "op": "_REDUCE_SCATTER_BASE", "numel_in": 88080384, "numel_out": 5505024,
         "timeout_ms": 600000, "ran_ms": 600045},
    ),
    # the same record ending on another exception stays a c10d notice
    (
        "[rank3]:[E908 08:39:25.432755661 ProcessGroupNCCL.cpp:2068] [PG ID 2 PG GUID 3 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
        ("c10d", "rank3"),
        C10dLog,
        {"torch_rank": 3, "text": "[PG ID 2 PG GUID 3 Rank 3] Process group watchdog thread terminated with exception: "
                                  "CUDA error: an illegal memory access was encountered"},
    ),
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800325 milliseconds before timing out.",
        ("c10d", None),
        NcclWatchdogTimeout,
        {"nccl_rank": 1, "seq": 12, "op": "ALLREDUCE", "timeout_ms": 1800000, "ran_ms": 1800325},
    ),
    (
        "[Rank 4] **Watchdog caught collective operation timeout:** WorkNCCL(SeqNum=151721, OpType=_ALLGATHER_BASE, NumelIn=8080, NumelOut=1",
        None,
        NcclWatchdogTimeout,
        {"nccl_rank": 4, "seq": 151721, "op": "_ALLGATHER_BASE", "numel_in": 8080},
    ),
    (
        "29280, Timeout(ms)=600000) ran for 600049 milliseconds before timing out.",
        None,
        KnownMessage,
        {"code": "nccl-watchdog-tail", "fields": {"timeout_ms": 600000, "ran_ms": 600049}},
    ),
    (
        "[rank4]:[E1304 12:54:52.123659968 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 3 Rank 4] Exception (either an error or timeout) detected by watchdog at work: 151721, last enqueued NCCL work: 151721, last completed NCCL work: 151720.",
        ("c10d", "rank4"),
        C10dLog,
        {
            "torch_rank": 4,
            "text": "[PG ID 2 PG GUID 3 Rank 4] Exception (either an error or timeout) detected by watchdog at work: 151721, last enqueued NCCL work: 151721, last completed NCCL work: 151720.",
        },
    ),
    (
        '[PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer',
        None,
        C10dLog,
        {
            "torch_rank": 8,
            "text": '[PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer',
        },
    ),
    (
        "[rank3]:[E1206 18:44:12.715298746 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for fault",
        ("c10d", "rank3"),
        C10dLog,
        {
            "torch_rank": 3,
            "text": "Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for fault",
        },
    ),
    (
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):",
        None,
        CppStack,
        {
            "text": "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):"
        },
    ),
    (
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7ea82996c446 in /opt/conda/envs/sglang/lib/python3.10/site-packages/torch/lib/libc10.so)",
        None,
        CppStack,
        {
            "text": "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7ea82996c446 in /opt/conda/envs/sglang/lib/python3.10/site-packages/torch/lib/libc10.so)"
        },
    ),
    (
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        None,
        CppTerminate,
        {"exc_type": "c10::DistBackendError"},
    ),
    ("terminate called without an active exception", None, CppTerminate, {"exc_type": ""}),
    (
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 15] Process group watchdog thread terminated with exception: [Rank 15] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600000 milliseconds before timing out.",
        None,
        CppTerminate,
        {
            "what": "[PG ID 0 PG GUID 0(default_pg) Rank 15] Process group watchdog thread terminated with exception: [Rank 15] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600000 milliseconds before timing out."
        },
    ),
    # ---- crash, hang, shutdown (§6.2–§6.5); corpus dev-023 (extra spaces, old watchdog, batch dump, py-spy)
    (
        "[2026-03-07 15:30:19] Received sigquit from a child process. It usually means the child failed.",
        ("sglang", None),
        SigquitReceived,
        {"phase": "launch"},
    ),
    (
        "[2025-06-22 16:14:00] Received sigquit from a child process.   It usually means the child failed.",
        ("sglang", None),
        SigquitReceived,
        {"phase": "launch"},
    ),
    (
        "[2026-03-07 15:40:02] SIGQUIT received. signum=3, frame=<frame at 0x7f0a, file '/x.py', line 10, code run>. It usually means one child failed.",
        ("sglang", None),
        SigquitReceived,
        {"phase": "running"},
    ),
    (
        "[2025-01-27 10:00:00] Rank 0 scheduler is dead. Please check if there are relevant logs.",
        ("sglang", None),
        SchedulerDead,
        {"dead_rank": 0},
    ),
    (
        "[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.",
        ("diffusion", None),
        SchedulerDead,
        {"dead_rank": 0},
    ),
    ("[2025-01-27 10:00:00] Exit code: -9", ("sglang", None), ExitCode, {"code": -9}),
    ("Killed", None, Killed, {}),
    (
        "Segmentation fault (core dumped)",
        None,
        ShellSignal,
        {"text": "Segmentation fault (core dumped)"},
    ),
    ("Aborted (core dumped)", None, ShellSignal, {"text": "Aborted (core dumped)"}),
    (
        "Fatal Python error: Segmentation fault",
        None,
        ShellSignal,
        {"text": "Fatal Python error: Segmentation fault"},
    ),
    (
        "[2026-04-05 10:00:00] Subprocess scheduler_0 (pid=1234) crashed with exit code -6. Triggering SIGQUIT for cleanup...",
        ("sglang", None),
        SubprocessCrashed,
        {"name": "scheduler_0", "pid": 1234, "exit_code": -6},
    ),
    (
        "[2026-04-05 10:00:00] Scheduler or DataParallelController 1234 terminated with -9",
        ("sglang", None),
        SubprocessCrashed,
        {"name": "Scheduler or DataParallelController", "pid": 1234, "exit_code": -9},
    ),
    (
        "[2026-03-07 15:40:02 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
        ("sglang", "TP0"),
        SglangWatchdog,
        {"debug_name": "Scheduler", "timeout_s": 300.0, "soft": False},
    ),
    (
        "[2026-03-07 15:40:02] TokenizerManager watchdog timeout (self.watchdog_timeout=120.5, self.soft=True)",
        ("sglang", None),
        SglangWatchdog,
        {"debug_name": "TokenizerManager", "timeout_s": 120.5, "soft": True},
    ),
    (
        "[2025-06-22 16:13:55 TP0] Watchdog timeout (self.watchdog_timeout=300)",
        ("sglang", "TP0"),
        SglangWatchdog,
        {"debug_name": "Scheduler", "timeout_s": 300.0, "soft": False},
    ),
    (
        "[2025-06-22 16:13:55 TP0] self.cur_batch.batch_size()=26,  self.cur_batch.reqs=[Req(rid=d4424f3eb90345f0a863068978c0f17c......................",
        ("sglang", "TP0"),
        BatchDump,
        {"batch_size": 26},
    ),
    (
        "[2026-03-07 15:40:02] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 15:40:02. last_heartbeat time: 15:39:11",
        ("sglang", None),
        HealthCheckFailed,
        {"timeout_s": 20.0},
    ),
    # ---- failure notices -> known_message (§6.2–§6.4)
    (
        "[2025-06-22 16:13:55 TP0] Pyspy failed to dump PID 63217.   Error: /bin/sh: py-spy: command not found",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "pyspy-failed",
            "fields": {"pid": 63217, "error": "/bin/sh: py-spy: command not found"},
        },
    ),
    (
        "[2026-03-07 15:40:02] Scheduler debug info:",
        ("sglang", None),
        KnownMessage,
        {"code": "watchdog-debug-info", "fields": {"debug_name": "Scheduler"}},
    ),
    (
        "[2026-03-07 15:40:02] Scheduler watchdog thread crashed: boom",
        ("sglang", None),
        KnownMessage,
        {"code": "watchdog-thread-crashed", "fields": {"debug_name": "Scheduler", "error": "boom"}},
    ),
    (
        "[2026-03-07 15:40:02] Watchdog Scheduler initialized.",
        ("sglang", None),
        KnownMessage,
        {"code": "watchdog-initialized", "fields": {"name": "Scheduler"}},
    ),
    (
        "[2026-03-07 15:40:02] Dumping requests before crash. self.crash_dump_folder='/tmp/crash'",
        ("sglang", None),
        KnownMessage,
        {"code": "crash-dump-start", "fields": {"folder": "/tmp/crash"}},
    ),
    (
        "[2026-03-07 15:40:02] Dumped 3 finished and 5 unfinished requests before crash to /tmp/crash/dump.pkl",
        ("sglang", None),
        KnownMessage,
        {
            "code": "crash-dump-done",
            "fields": {"finished": 3, "unfinished": 5, "filename": "/tmp/crash/dump.pkl"},
        },
    ),
    (
        "[2026-03-07 15:40:02] SIGTERM/SIGQUIT/Exception triggered, but crash dump already performed, skipping.",
        ("sglang", None),
        KnownMessage,
        {"code": "crash-dump-skipped", "fields": {}},
    ),
    (
        "[Dumper] WARNING: 'all_reduce' has not completed after 60s. This usually means not all ranks are participating in this collective operation.",
        None,
        KnownMessage,
        {
            "code": "dumper-warning",
            "fields": {
                "message": "'all_reduce' has not completed after 60s. This usually means not all ranks are participating in this collective operation.",
                "operation": "all_reduce",
                "timeout_s": 60.0,
            },
        },
    ),
    (
        "[2026-03-07 15:50:00] SIGTERM received. signum=15 frame=<frame at 0x7f0a>. Draining requests and shutting down...",
        ("sglang", None),
        KnownMessage,
        {"code": "sigterm-received", "fields": {}},
    ),
    (
        "[2026-10-30 10:00:00] SIGTERM received on node_rank 1; waiting for the rank-0 ShutdownReq broadcast to stop the schedulers.",
        ("sglang", None),
        KnownMessage,
        {"code": "sigterm-node-rank", "fields": {"node_rank": 1}},
    ),
    (
        "[2026-03-07 15:50:00] Gracefully exiting... Remaining number of requests 3. Remaining requests remaining_rids=['a', 'b', 'c'].",
        ("sglang", None),
        KnownMessage,
        {"code": "graceful-exit", "fields": {"remaining": 3}},
    ),
    (
        "[2026-03-07 15:50:00] Signal SIGTERM received while health check failed. Force exiting.",
        ("sglang", None),
        KnownMessage,
        {"code": "sigterm-force-exit", "fields": {"reason": "health check failed"}},
    ),
    (
        "[2026-10-30 10:00:00] Schedulers still alive 30s after ShutdownReq, killing them before they released: [1234]",
        ("sglang", None),
        KnownMessage,
        {"code": "schedulers-still-alive", "fields": {"seconds": 30.0}},
    ),
    (
        "[2026-03-07 15:50:00] Health check request received during shutdown. Returning 503.",
        ("sglang", None),
        KnownMessage,
        {"code": "health-check-during-shutdown", "fields": {}},
    ),
    (
        "[2026-03-07 15:50:00] [http_server] Error: Request is disconnected from the client side (type 1). Abort request obj.rid='9a1c'",
        ("sglang", None),
        KnownMessage,
        {
            "code": "http-server-error",
            "fields": {
                "error": "Request is disconnected from the client side (type 1). Abort request obj.rid='9a1c'"
            },
        },
    ),
    (
        "[2026-10-30 10:00:00] [http_server] Client disconnected: Request is disconnected from the client side (type 3). Abort request obj.rid='9a1c'",
        ("sglang", None),
        KnownMessage,
        {
            "code": "http-client-disconnected",
            "fields": {
                "error": "Request is disconnected from the client side (type 3). Abort request obj.rid='9a1c'"
            },
        },
    ),
    (
        "[2026-03-07 15:50:00] Error in request: Request is disconnected from the client side (type 3). Abort request obj.rid='9a1c'",
        ("sglang", None),
        KnownMessage,
        {
            "code": "request-error",
            "fields": {
                "error": "Request is disconnected from the client side (type 3). Abort request obj.rid='9a1c'"
            },
        },
    ),
    (
        "[2026-03-07 15:50:00] Tool call parsing error: bad json",
        ("sglang", None),
        KnownMessage,
        {"code": "tool-call-parse-error", "fields": {"error": "bad json"}},
    ),
    (
        "[2026-03-07 15:50:00] Reasoning parsing error: bad tag",
        ("sglang", None),
        KnownMessage,
        {"code": "reasoning-parse-error", "fields": {"error": "bad tag"}},
    ),
    (
        "[2026-03-07 15:50:00 TP0] Invalid request: session id 42 does not exist, self.rid='a1b2'",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "invalid-request",
            "fields": {"error": "session id 42 does not exist", "rid": "a1b2"},
        },
    ),
    (
        "[2026-03-07 15:50:00] Ignore abort_request with empty rid and abort_all=False",
        ("sglang", None),
        KnownMessage,
        {"code": "abort-empty-rid", "fields": {}},
    ),
    (
        "[2026-10-30 10:00:00] Abort request for rid=a1b2 not found in rid_to_state; likely already finished/removed.",
        ("sglang", None),
        KnownMessage,
        {"code": "abort-rid-not-found", "fields": {"rid": "a1b2"}},
    ),
    (
        "[2026-10-30 10:00:00] Received output for rid='a1b2' but the state was deleted in TokenizerManager.",
        ("sglang", None),
        KnownMessage,
        {"code": "output-for-deleted-rid", "fields": {"rid": "a1b2"}},
    ),
    (
        "[2026-03-07 15:50:00] Using custom SIGQUIT handler: <function handler at 0x7f0a>",
        ("sglang", None),
        KnownMessage,
        {"code": "custom-sigquit-handler", "fields": {"handler": "<function handler at 0x7f0a>"}},
    ),
    (
        "[2026-10-30 10:00:00] Signal handler is not added because the engine is not in the main thread. This disables the SIGQUIT handler for cleaning up the process tree when a child process fails.",
        ("sglang", None),
        KnownMessage,
        {"code": "sigquit-handler-not-added", "fields": {}},
    ),
    (
        "[2026-03-07 15:50:00] Weights are not ready after waiting 300 seconds. Consider increasing SGLANG_WAIT_WEIGHTS_READY_TIMEOUT environment variable. Current status: initial_weights_loaded=False",
        ("sglang", None),
        KnownMessage,
        {"code": "weights-not-ready", "fields": {"timeout_s": 300.0}},
    ),
    (
        "[2026-03-07 15:50:00 TP0] Grammar accept_token failed for req a1b2 with token 1234: invalid token",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "grammar-accept-failed",
            "fields": {"rid": "a1b2", "token_id": 1234, "error": "invalid token"},
        },
    ),
    (
        "[2026-03-07 15:50:00] Port is already in use. dist_init_port=5000 port_base=30000 detokenizer_port=30001 nccl_port=30002 scheduler_input_port=30003",
        ("sglang", None),
        KnownMessage,
        {
            "code": "port-in-use",
            "fields": {
                "ports": {
                    "dist_init_port": 5000,
                    "port_base": 30000,
                    "detokenizer_port": 30001,
                    "nccl_port": 30002,
                    "scheduler_input_port": 30003,
                }
            },
        },
    ),
    # ---- memory and startup-error notices (§5.3, §6.4); corpus dev-001, dev-008, dev-013, dev-026, dev-044
    (
        "[2026-03-07 15:50:00 TP0] Prefill out of memory. Try to lower your batch size.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "prefill-out-of-memory", "fields": {}},
    ),
    (
        "[2026-03-07 15:50:00 TP0] Decode out of memory. Try to lower your batch size.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "decode-out-of-memory", "fields": {"never_happen": False}},
    ),
    (
        "Decode out of memory. This should never happen.",
        None,
        KnownMessage,
        {"code": "decode-out-of-memory", "fields": {"never_happen": True}},
    ),
    (
        "Try to allocate 8192 tokens.",
        None,
        KnownMessage,
        {"code": "try-allocate-tokens", "fields": {"tokens": 8192}},
    ),
    (
        "[2026-03-07 15:50:00 TP0] token_to_kv_pool_allocator memory leak detected! self.max_total_num_tokens=1000, available_size=990, evictable_size=0, protected_size=0",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "mem-leak-token-kv-pool",
            "fields": {
                "values": {
                    "max_total_num_tokens": 1000,
                    "available_size": 990,
                    "evictable_size": 0,
                    "protected_size": 0,
                }
            },
        },
    ),
    (
        "[2026-03-07 15:50:00 TP0] req_to_token_pool memory leak detected!available_size=10, total_size=12",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "mem-leak-req-token-pool",
            "fields": {"values": {"available_size": 10, "total_size": 12}},
        },
    ),
    (
        "[2024-11-22 10:00:00 TP0] KV cache pool leak detected!available_size=123, self.max_total_num_tokens=456",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "mem-leak-kv-pool",
            "fields": {"values": {"available_size": 123, "max_total_num_tokens": 456}},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP0] The memory capacity is unbalanced. Some GPUs may be occupied by other processes. min_per_gpu_memory=70.5, local_gpu_memory=79.1, local_gpu_memory * 0.9=71.19",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "memory-unbalanced",
            "fields": {
                "values": {
                    "min_per_gpu_memory": 70.5,
                    "local_gpu_memory": 79.1,
                    "local_gpu_memory*0.9": 71.19,
                }
            },
        },
    ),
    (
        "[2025-12-23 14:18:01] Ignore import error when loading sglang.srt.models.mindspore: name 'Tensor' is not defined",
        ("sglang", None),
        KnownMessage,
        {
            "code": "model-import-ignored",
            "fields": {
                "module": "sglang.srt.models.mindspore",
                "model": "mindspore",
                "error": "name 'Tensor' is not defined",
            },
        },
    ),
    (
        "[2025-03-10 14:17:52 TP6] Ignore import error when loading sglang.srt.models.deepseek_v2. Command '['/usr/bin/gcc', '/tmp/tmp6x1f85tg/main.c', '-O3']' returned non-zero exit status 1.",
        ("sglang", "TP6"),
        KnownMessage,
        {
            "code": "model-import-ignored",
            "fields": {
                "module": "sglang.srt.models.deepseek_v2",
                "model": "deepseek_v2",
                "error": "Command '['/usr/bin/gcc', '/tmp/tmp6x1f85tg/main.c', '-O3']' returned non-zero exit status 1.",
            },
        },
    ),
    (
        "Failed to instantiate MiniCPMV: The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.",
        None,
        KnownMessage,
        {
            "code": "model-instantiate-failed",
            "fields": {
                "model": "MiniCPMV",
                "error": "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.",
            },
        },
    ),
    (
        "[sgl_kernel] CRITICAL: Could not load any common_ops library!",
        None,
        KnownMessage,
        {"code": "sgl-kernel-common-ops-missing", "fields": {}},
    ),
    (
        "[sgl_kernel] WARNING: fallback to sm90 build",
        None,
        KnownMessage,
        {
            "code": "sgl-kernel-log",
            "fields": {"level": "WARNING", "message": "fallback to sm90 build"},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP3] Context: self.device='cuda' self.gpu_id=3 os.environ.get('CUDA_VISIBLE_DEVICES')='0,1' self.tp_rank=3 self.tp_size=4",
        ("sglang", "TP3"),
        KnownMessage,
        {
            "code": "gpu-context",
            "fields": {
                "device": "cuda",
                "cuda_visible_devices": "0,1",
                "gpu_id": 3,
                "tp_rank": 3,
                "tp_size": 4,
            },
        },
    ),
    (
        "Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0",
        None,
        KnownMessage,
        {
            "code": "device-assert-failed",
            "fields": {
                "file": "deep_gemm/include/deep_gemm/impls/smxx_layout.cuh",
                "line": 131,
                "condition": "(values[j] & 0x807fffffu) == 0",
            },
        },
    ),
    (
        '/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.',
        None,
        KnownMessage,
        {
            "code": "cuda-device-assert",
            "fields": {
                "file": "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu",
                "line": 92,
                "condition": '-sizes[i] <= index && index < sizes[i] && "index out of bounds"',
            },
        },
    ),
    (
        "[2025-11-30 12:50:10] CUTLASS backend is disabled when piecewise cuda graph is enabled due to TMA descriptor initialization issues on B200. Using auto backend instead for stability.",
        ("sglang", None),
        KnownMessage,
        {"code": "cutlass-disabled-piecewise", "fields": {}},
    ),
    # ---- warnings of formats §4 (W1–W68)
    (
        "[2026-03-07 15:30:12] DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.",
        ("sglang", None),
        KnownMessage,
        {"code": "deepgemm-scale-fmt", "fields": {}},
    ),
    (
        "DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.",
        None,
        KnownMessage,
        {"code": "deepgemm-scale-fmt", "fields": {}},
    ),
    (
        "[2025-04-01 18:12:47 TP0] awq quantization is not fully optimized yet. The speed can be slower than non-quantized models.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "quant-not-optimized", "fields": {"quantization": "awq"}},
    ),
    (
        "[2025-11-11 15:55:06] WARNING model_config.py:707: mxfp4 quantization is not fully optimized yet. The speed can be slower than non-quantized models.",
        ("sglang", None),
        KnownMessage,
        {"code": "quant-not-optimized", "fields": {"quantization": "mxfp4"}},
    ),
    (
        "Warning: User-specified context_length (262144) is greater than the derived context_length (131072). This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config.",
        None,
        KnownMessage,
        {
            "code": "context-length-override",
            "fields": {
                "reason": "User-specified",
                "context_length": 262144,
                "derived_context_length": 131072,
            },
        },
    ),
    (
        "[2026-03-07 15:30:12] Warning: Target model's context_length (262144) is greater than the derived context_length (131072). This may lead to incorrect model outputs or CUDA errors.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "context-length-override",
            "fields": {
                "reason": "Target model's",
                "context_length": 262144,
                "derived_context_length": 131072,
            },
        },
    ),
    (
        "[2026-03-07 15:30:12] Overriding the draft model's max_position_embeddings to 262144.",
        ("sglang", None),
        KnownMessage,
        {"code": "draft-max-position-override", "fields": {"context_length": 262144}},
    ),
    (
        "[2026-03-07 15:30:12] Casting torch.float32 to torch.bfloat16.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "dtype-cast",
            "fields": {
                "from_dtype": "torch.float32",
                "to_dtype": "torch.bfloat16",
                "downcast": False,
            },
        },
    ),
    (
        "[2026-03-07 15:30:12] Downcasting torch.float32 to torch.float16.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "dtype-cast",
            "fields": {
                "from_dtype": "torch.float32",
                "to_dtype": "torch.float16",
                "downcast": True,
            },
        },
    ),
    (
        "[2026-03-07 15:30:12] Transformers version 5.0.0 is used for model type qwen3_5_moe. If you experience issues related to RoPE parameters, they may be due to incompatibilities between Transformers >=5.0.0 and some models. You can try downgrading to transformers==4.57.1 as a workaround.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "transformers-version-rope",
            "fields": {"version": "5.0.0", "model_type": "qwen3_5_moe"},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP0] Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0. This may lead to less accurate results!",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "fp8-kv-no-scales", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] FP4 (E2M1) KV Cache might lead to a accuracy drop!",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "fp4-kv-accuracy", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] --kv-cache-dtype falls back to 'auto' because this torch version does not support torch.float4_e2m1fn_x2",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "fp4-kv-fallback", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12] Detected nvfp4 checkpoint. Please note that the format is experimental and subject to change.",
        ("sglang", None),
        KnownMessage,
        {"code": "modelopt-experimental", "fields": {"format": "nvfp4"}},
    ),
    (
        "[2026-03-07 15:30:12] Detected ModelOpt FP8 checkpoint. The format is experimental and subject to change.",
        ("sglang", None),
        KnownMessage,
        {"code": "modelopt-experimental", "fields": {"format": "ModelOpt FP8"}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Acceleration for non-quantized schemes is not supported by Compressed Tensors. Falling back to UnquantizedLinearMethod",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "compressed-tensors-fallback", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Qwen3VLForConditionalGeneration has no SGLang implementation, falling back to Transformers implementation. Some features may not be supported and performance may not be optimal.",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "transformers-impl-fallback",
            "fields": {"architecture": "Qwen3VLForConditionalGeneration"},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP0] Found mtp.safetensors but it's not referenced in model.safetensors.index.json. This is a checkpoint packaging bug. Auto-adding it for loading. Please report this to the checkpoint provider.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "mtp-safetensors-unreferenced", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] DEPRECATED. Found kv_scale in the checkpoint. This format is deprecated in favor of separate k_scale and v_scale tensors and will be removed in a future release.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "kv-scale-deprecated", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Found kv_scale in the checkpoint (e.g. model.layers.0.self_attn.kv_scale), but not found the expected name in the model (e.g. model.layers.0.self_attn.attn.kv_scale). kv_scale is not loaded.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "kv-scale-not-loaded", "fields": {}},
    ),
    (
        "Detected SM100 and MXFP4 quantization format for GPT-OSS model, enabling FlashInfer MXFP4 MOE kernel.",
        None,
        KnownMessage,
        {"code": "gpt-oss-moe-kernel", "fields": {"kernel": "FlashInfer MXFP4", "sm": 100}},
    ),
    (
        "Detected SM120 and MXFP4 quantization format for GPT-OSS model, enabling triton_kernel MOE kernel.",
        None,
        KnownMessage,
        {"code": "gpt-oss-moe-kernel", "fields": {"kernel": "triton_kernel", "sm": 120}},
    ),
    (
        "Detected GPT-OSS model, enabling triton_kernels MOE kernel.",
        None,
        KnownMessage,
        {"code": "gpt-oss-moe-kernel", "fields": {"kernel": "triton_kernels"}},
    ),
    (
        "Detected GPT-OSS model on Blackwell with driver >= 595, using triton MOE kernel to avoid triton_kernels SIGSEGV.",
        None,
        KnownMessage,
        {"code": "gpt-oss-moe-kernel", "fields": {"kernel": "triton"}},
    ),
    (
        "[2025-04-13 14:53:43 TP0] Custom allreduce is disabled because this process group spans across nodes.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "custom-ar-multinode", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Custom allreduce is disabled due to an unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "custom-ar-world-size", "fields": {"world_size": 3, "supported": [2, 4, 6, 8]}},
    ),
    (
        "[2025-03-08 12:29:12 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "custom-ar-pcie", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "custom-ar-no-p2p", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Setup Custom allreduce failed with CUDA error: invalid argument. To silence this warning, specify --disable-custom-all-reduce explicitly.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "custom-ar-setup-failed", "fields": {"error": "CUDA error: invalid argument"}},
    ),
    (
        "Pipeline parallelism is incompatible with overlap schedule.",
        None,
        KnownMessage,
        {"code": "pp-no-overlap", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Detected the current machine has 2 numa nodes available, but tp_size is set to 1, so only 1 numa nodes are used.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "numa-nodes-unused", "fields": {"numa_nodes": 2, "tp_size": 1}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] TP size (4)is larger than numa node number (2), in this case the available memory amount of each rank cannot be determined in prior. Please set proper `--max-total-tokens` to avoid the out-of-memory error.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "numa-tp-larger", "fields": {"tp_size": 4, "numa_nodes": 2}},
    ),
    (
        "Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests.",
        None,
        KnownMessage,
        {
            "code": "max-running-reset",
            "fields": {"max_running_requests": 48, "reason": "speculative decoding"},
        },
    ),
    (
        "[2026-05-07 10:00:00] Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "max-running-reset",
            "fields": {"max_running_requests": 48, "reason": "speculative decoding"},
        },
    ),
    (
        "Spec v2 is enabled for eagle/eagle3 speculative decoding and overlap schedule is turned on.",
        None,
        KnownMessage,
        {"code": "spec-v2-enabled", "fields": {}},
    ),
    (
        "Overlap scheduler is disabled when spec v2 is off or using unsupported speculative algorithm. You can set env SGLANG_ENABLE_SPEC_V2=True to enable the experimental overlap scheduler. ",
        None,
        KnownMessage,
        {"code": "overlap-disabled-spec-v1", "fields": {}},
    ),
    (
        "[2026-06-26 10:00:00] Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative decoding.",
        ("sglang", None),
        KnownMessage,
        {"code": "spec-v2-non-overlap", "fields": {"algorithms": "eagle/eagle3/standalone"}},
    ),
    (
        "Mixed chunked prefill is disabled because of using eagle speculative decoding.",
        None,
        KnownMessage,
        {"code": "mixed-chunk-disabled-spec", "fields": {"reason": "eagle speculative decoding"}},
    ),
    (
        "[2026-10-30 10:00:00] Mixed chunked prefill is disabled: DFLASH speculative decoding does not support it.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "mixed-chunk-disabled-spec",
            "fields": {"reason": "DFLASH speculative decoding does not support it"},
        },
    ),
    (
        "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",
        None,
        KnownMessage,
        {"code": "spec-draft-tokens-adjusted", "fields": {}},
    ),
    (
        "DeepSeek MTP does not require setting speculative_draft_model_path.",
        None,
        KnownMessage,
        {"code": "mtp-draft-path-unneeded", "fields": {}},
    ),
    (
        "The overlap scheduler and mixed chunked prefill are disabled because of using ngram speculative decoding.",
        None,
        KnownMessage,
        {"code": "ngram-overlap-disabled", "fields": {}},
    ),
    (
        "[2026-10-30 10:00:00] The mixed chunked prefill are disabled because of using ngram speculative decoding.",
        ("sglang", None),
        KnownMessage,
        {"code": "ngram-overlap-disabled", "fields": {}},
    ),
    (
        "speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding. You can override this by explicitly setting --speculative-num-draft-tokens.",
        None,
        KnownMessage,
        {"code": "ngram-draft-tokens-default", "fields": {"num_draft_tokens": 12}},
    ),
    (
        "Disabling overlap schedule since mamba no_buffer is not compatible with overlap schedule, try to use --disable-radix-cache if overlap schedule is necessary",
        None,
        KnownMessage,
        {"code": "mamba-overlap-disabled", "fields": {}},
    ),
    (
        "Disabling Radix Cache for Qwen3NextForCausalLM as it is not yet supported.",
        None,
        KnownMessage,
        {
            "code": "radix-cache-disabled",
            "fields": {"reason": "for Qwen3NextForCausalLM as it is not yet supported"},
        },
    ),
    (
        "Disabling radix cache since trtllm_mha does not support page_size = 1, which is required by MambaRadixCache. Try to use --attention-backend triton if radix cache is necessary.",
        None,
        KnownMessage,
        {
            "code": "radix-cache-disabled",
            "fields": {
                "reason": "since trtllm_mha does not support page_size = 1, which is required by MambaRadixCache. Try to use --attention-backend triton if radix cache is necessary"
            },
        },
    ),
    (
        "DP attention is enabled. The chunked prefill size is adjusted to 4096 to avoid MoE kernel issues. ",
        None,
        KnownMessage,
        {"code": "dp-attention-chunked-prefill", "fields": {"chunked_prefill_size": 4096}},
    ),
    (
        "KV cache is forced as chunk cache for decode server",
        None,
        KnownMessage,
        {"code": "pd-decode-chunk-cache", "fields": {}},
    ),
    (
        "[2026-03-07 15:40:02] The input (140000 tokens) is longer than the model's context length (131072 tokens). Truncating the input.",
        ("sglang", None),
        KnownMessage,
        {"code": "input-truncated", "fields": {"input_tokens": 140000, "context_len": 131072}},
    ),
    (
        "[2026-03-07 15:40:02] Requested token count (1000 input + 131072 new) exceeds the model's context length (131072 tokens). Truncating max_new_tokens.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "max-new-tokens-truncated",
            "fields": {"input_tokens": 1000, "max_new_tokens": 131072, "context_len": 131072},
        },
    ),
    (
        "Cuda graph is disabled because of using torch native attention backend",
        None,
        KnownMessage,
        {"code": "cuda-graph-disabled", "fields": {"reason": "torch native attention backend"}},
    ),
    (
        "Cuda graph is disabled because of using torch Flex Attention backend",
        None,
        KnownMessage,
        {"code": "cuda-graph-disabled", "fields": {"reason": "torch Flex Attention backend"}},
    ),
    (
        "Cuda graph is disabled because deepep_mode=`normal`",
        None,
        KnownMessage,
        {"code": "cuda-graph-disabled", "fields": {"reason": "deepep_mode=`normal`"}},
    ),
    (
        "Cuda graph is disabled for prefill server when piecewise cuda graph is not enabled.",
        None,
        KnownMessage,
        {
            "code": "cuda-graph-disabled",
            "fields": {"reason": "prefill server when piecewise cuda graph is not enabled"},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP0] Disable piecewise CUDA graph because the model is not a language model",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "piecewise-cuda-graph-disabled",
            "fields": {"graph": "piecewise", "reason": "the model is not a language model"},
        },
    ),
    (
        "[2026-10-30 10:00:00 TP0] Disable prefill CUDA graph because some layers do not apply Standard GQA",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "piecewise-cuda-graph-disabled",
            "fields": {"graph": "prefill", "reason": "some layers do not apply Standard GQA"},
        },
    ),
    (
        "[2026-03-07 15:30:12 TP0] Disable piecewise CUDA graph due to existing compilation errors",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "piecewise-cuda-graph-disabled",
            "fields": {"graph": "piecewise", "reason": "existing compilation errors"},
        },
    ),
    (
        "FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",
        None,
        KnownMessage,
        {"code": "fa3-fp8-fallback", "fields": {}},
    ),
    (
        "FlashMLA only supports a page_size of 64, change page_size to 64.",
        None,
        KnownMessage,
        {"code": "page-size-override", "fields": {"backend": "FlashMLA", "page_size": 64}},
    ),
    (
        "TensorRT-LLM MLA only supports page_size of 32 or 64, changing page_size from 1 to 64.",
        None,
        KnownMessage,
        {
            "code": "page-size-override",
            "fields": {"backend": "TensorRT-LLM MLA", "page_size_from": 1, "page_size": 64},
        },
    ),
    (
        "FA4 backend only supports page size 128 for non-MLA model architectures, changing page_size from 1 to 128.",
        None,
        KnownMessage,
        {
            "code": "page-size-override",
            "fields": {"backend": "FA4 backend", "page_size_from": 1, "page_size": 128},
        },
    ),
    (
        "The current platform does not support Intel AMX, will fallback to torch_native backend.",
        None,
        KnownMessage,
        {"code": "attention-platform-fallback", "fields": {"backend": "torch_native"}},
    ),
    (
        "CPU device enabled, using torch native backend, low performance expected.",
        None,
        KnownMessage,
        {"code": "attention-platform-fallback", "fields": {"backend": "torch_native"}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Warning: Attention backend specified by --attention-backend or default backend might be overridden.The feature of hybrid attention backend is experimental and unstable. Please raise an issue if you encounter any problem.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "hybrid-attention-experimental", "fields": {}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Overriding draft attention backend to triton.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "draft-attention-override", "fields": {"backend": "triton"}},
    ),
    (
        "Attention backend not specified. Falling back to 'fa3' for deterministic inference. You can explicitly set --attention-backend to one of ['fa3', 'triton', 'flashinfer'].",
        None,
        KnownMessage,
        {
            "code": "deterministic-override",
            "fields": {"setting": "attention_backend", "value": "fa3"},
        },
    ),
    (
        "Sampling backend is set to pytorch for deterministic inference.",
        None,
        KnownMessage,
        {
            "code": "deterministic-override",
            "fields": {"setting": "sampling_backend", "value": "pytorch"},
        },
    ),
    (
        "NCCL_ALGO is set to 'allreduce:tree' and custom all reduce is disabled for deterministic inference when TP size > 1.",
        None,
        KnownMessage,
        {
            "code": "deterministic-override",
            "fields": {"setting": "nccl_algo", "value": "allreduce:tree"},
        },
    ),
    (
        "FlashInfer TRTLLM MoE is enabled. --disable-shared-experts-fusion is automatically set.",
        None,
        KnownMessage,
        {"code": "trtllm-moe-shared-fusion-off", "fields": {}},
    ),
    (
        "DeepEP MoE is enabled. The expert parallel size is adjusted to be the same as the tensor parallel size[8].",
        None,
        KnownMessage,
        {"code": "ep-size-adjusted", "fields": {"backend": "DeepEP", "ep_size": 8}},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Available memory 3.2GB is less than required memory 6.5GB for warmup, reducing max_m to 2048 to avoid out of memory",
        ("sglang", "TP0"),
        KnownMessage,
        {
            "code": "deepgemm-warmup-reduced",
            "fields": {"memory_budget_gb": 3.2, "required_memory_gb": 6.5, "max_m": 2048},
        },
    ),
    (
        "SGLANG_CUTLASS_MOE is deprecated, use --moe-runner-backend=cutlass and/or --speculative-moe-runner-backend=cutlass instead",
        None,
        KnownMessage,
        {"code": "cutlass-moe-env-deprecated", "fields": {}},
    ),
    (
        "mxfp8 quantization forces --moe-runner-backend=cutlass. Overriding 'auto'.",
        None,
        KnownMessage,
        {"code": "mxfp8-moe-backend-override", "fields": {"overridden": "auto"}},
    ),
    (
        "[2026-10-30 10:00:00] Forcing --deepep-mode low_latency: flashinfer_cutedsl FP4 MoE has no DeepEP normal-dispatch handler, so deepep auto mode would crash during prefill. low_latency covers both prefill and decode.",
        ("sglang", None),
        KnownMessage,
        {"code": "deepep-mode-forced", "fields": {}},
    ),
    (
        "[2026-10-30 10:00:00 TP0] --fp8-gemm-backend=deep_gemm cannot serve [128, 128] block FP8 weights on this setup; using Triton. DeepGEMM takes [32, 32] blocks on SM90, and on SM100 with UE8M0 scales.",
        ("sglang", "TP0"),
        KnownMessage,
        {"code": "fp8-gemm-deepgemm-fallback", "fields": {"block": [128, 128]}},
    ),
    (
        "[2026-03-07 15:31:41] Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please use '/model_info' instead.",
        ("sglang", None),
        KnownMessage,
        {
            "code": "endpoint-deprecated",
            "fields": {"endpoint": "/get_model_info", "replacement": "/model_info"},
        },
    ),
    (
        "The command line argument '--enable-dp-attention' is deprecated and will be removed in future versions.",
        None,
        KnownMessage,
        {"code": "cli-arg-deprecated", "fields": {"option": "--enable-dp-attention"}},
    ),
    (
        "The tool_call_parser 'qwen25' is deprecated. Please use 'qwen' instead.",
        None,
        KnownMessage,
        {
            "code": "tool-call-parser-deprecated",
            "fields": {"parser": "qwen25", "replacement": "qwen"},
        },
    ),
    (
        "Symmetric memory is enabled, setting symmetric memory prealloc size to 4GB as default.Use environment variable SGLANG_SYMM_MEM_PREALLOC_GB_SIZE to change the prealloc size.",
        None,
        KnownMessage,
        {"code": "symm-mem-prealloc", "fields": {"size_gb": 4.0}},
    ),
    (
        "WARNING: Could not determine CuDNN version for torch==2.9.1. Please ensure CuDNN >= 9.15 to avoid nn.Conv3d bugs.",
        None,
        KnownMessage,
        {"code": "cudnn-version-unknown", "fields": {"torch_version": "2.9.1"}},
    ),
    (
        "[2026-03-07 15:30:12] WARNING: Could not determine CuDNN version for torch==2.9.1. Please ensure CuDNN >= 9.15 to avoid nn.Conv3d bugs.",
        ("sglang", None),
        KnownMessage,
        {"code": "cudnn-version-unknown", "fields": {"torch_version": "2.9.1"}},
    ),
    (
        "--enable-lora is set to True because --lora-paths is provided.",
        None,
        KnownMessage,
        {"code": "lora-flag-adjusted", "fields": {"enable_lora": True}},
    ),
    (
        "--enable-lora is set to False, any provided lora_paths will be ignored.",
        None,
        KnownMessage,
        {"code": "lora-flag-adjusted", "fields": {"enable_lora": False}},
    ),
    (
        "[2026-03-07 15:30:12] Fail to set RLIMIT_NOFILE: current limit exceeds maximum limit",
        ("sglang", None),
        KnownMessage,
        {
            "code": "rlimit-failed",
            "fields": {"resource": "RLIMIT_NOFILE", "error": "current limit exceeds maximum limit"},
        },
    ),
    (
        "[2026-03-07 15:40:02] LONG GARBAGE COLLECTION DETECTED | Generation 2 | Duration: 1.2345s | # Objects: gen0=1, gen1=2, gen2=3 | This may cause latency jitter. Consider calling the freeze_gc API after sending a few warmup requests.",
        ("sglang", None),
        KnownMessage,
        {"code": "long-gc", "fields": {"generation": 2, "duration_s": 1.2345}},
    ),
    (
        "[2026-03-07 15:40:02] GC start: Time 1767000000.12 | Generation 2",
        ("sglang", None),
        KnownMessage,
        {"code": "gc-start", "fields": {"generation": 2}},
    ),
    (
        "[2026-03-07 15:40:02] GC end: Time 1767000000.34 | Generation 2 | Duration: 0.2200s | Collected: 10 | Uncollectable: 0 (LONG GC)",
        ("sglang", None),
        KnownMessage,
        {
            "code": "gc-end",
            "fields": {"generation": 2, "duration_s": 0.22, "collected": 10, "uncollectable": 0},
        },
    ),
    (
        "[2026-03-07 15:40:02] Enable GC Logger",
        ("sglang", None),
        KnownMessage,
        {"code": "gc-logger-enabled", "fields": {}},
    ),
    # ---- Python `warnings` output (W59, W60; §1.7); corpus dev-016 (cut message), dev-020
    (
        "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:71: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
        None,
        PythonWarning,
        {
            "path": "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py",
            "lineno": 71,
            "category": "UserWarning",
            "message": "'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
        },
    ),
    (
        "/data/wzy/sgl-sglang/python/sglang/bench_serving.py:13: FutureWarning: `sglang.bench_serving` is deprecated and will be removed in a future release; use `sglang.benchmark.serving` instead (e.g. `python -m sglang.benchmark.serving`).",
        None,
        PythonWarning,
        {
            "path": "/data/wzy/sgl-sglang/python/sglang/bench_serving.py",
            "lineno": 13,
            "category": "FutureWarning",
            "message": "`sglang.bench_serving` is deprecated and will be removed in a future release; use `sglang.benchmark.serving` instead (e.g. `python -m sglang.benchmark.serving`).",
        },
    ),
    (
        "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py:1290: UserWarning: KV cache pool leak detected!available_size=123, self.max_total_num_tokens=456",
        None,
        PythonWarning,
        {
            "path": "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py",
            "lineno": 1290,
            "category": "UserWarning",
            "message": "KV cache pool leak detected!available_size=123, self.max_total_num_tokens=456",
        },
    ),
    (
        "<frozen importlib._bootstrap>:241: DeprecationWarning: builtin type SwigPyPacked has no __module__ attribute",
        None,
        PythonWarning,
        {
            "path": "<frozen importlib._bootstrap>",
            "lineno": 241,
            "category": "DeprecationWarning",
            "message": "builtin type SwigPyPacked has no __module__ attribute",
        },
    ),
    (
        "/sgl-workspace/sglang/python/sglang/launch_server.py:54: UserWarning: ",
        None,
        PythonWarning,
        {
            "path": "/sgl-workspace/sglang/python/sglang/launch_server.py",
            "lineno": 54,
            "category": "UserWarning",
            "message": "",
        },
    ),
    # ---- JIT markers (reader-stripped flashinfer.jit logger lines; corpus dev-022, dev-023), DeepGEMM W53
    (
        "Loading JIT ops: cascade",
        None,
        JitCompile,
        {"library": "flashinfer", "stage": "begin", "name": "cascade"},
    ),
    (
        "Finished loading JIT ops: cascade",
        None,
        JitCompile,
        {"library": "flashinfer", "stage": "end", "name": "cascade"},
    ),
    (
        "[2026-03-07 15:30:12 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is recommended to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for pre-compilation to reduce the overhead if you have not run it before. For example: `python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code`",
        ("sglang", "TP0"),
        JitCompile,
        {"library": "deepgemm", "stage": "begin", "name": "pre-compile"},
    ),
]


@pytest.mark.parametrize(
    ("line", "envelope", "cls", "fields"), CASES, ids=[c[0][:60] for c in CASES]
)
def test_line(parser, line, envelope, cls, fields):
    env, got_cls, kw = parser.parse(line)
    assert got_cls is cls
    if envelope is None:
        assert env is None
    else:
        assert env is not None and (env.style, env.rank) == envelope
    if cls is KnownMessage:
        kw = dict(kw)
        text = kw.pop("text")
        assert line.endswith(text)
    assert kw == fields
    assert parser.parse_lalr(line) == parser.parse(line)


# Lines that must NOT be recognised (a wrong event is worse than an Unparsed line).
NEAR_MISSES = [
    "Note: something",  # not an exception class name
    "Example: sglang serve",
    "Warning: something",
    "Error: foo",
    "Possible solutions:",
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
    "Exception in ASGI application",  # no trailing colon: not a process header
    "Traceback",
    "Process finished with exit code 0",
    "Exit code: abc",
    "Rank 0 scheduler is alive.",
    "Killed by the user",
    "Loading JIT ops: ",
    "Watchdog timeout",
    "frame #x: nothing",
    "mamba_available_size=315, mamba_evi",
    # (torch's CUDA error hints are known notices now, continuation lines of the exception message:
    # tests/test_grammar_notices.py)
    "Assertion error in module",
    "Subprocess crashed",
    "[Rank 4]",
    "     ",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_unparsed(parser, line):
    env, cls, kw = parser.parse(line)
    assert cls is Unparsed
    assert parser.parse_lalr(line) == (env, cls, kw)


# Lines of other families that the wide failure terminals (TB_SOURCE, EXC_HEAD, …) must leave alone.
NOT_MINE = [
    ("    --speculative-num-steps 4 \\", "LaunchCommand"),  # pasted command continuation (dev-051)
    ("  --model-path nvidia/gemma-3-12b-it-NVFP4 \\", "LaunchCommand"),  # dev-016
    (
        "[2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.1474 -> 0.1845",
        "Retraction",
    ),
    ("[2026-03-07 15:31:40] INFO:     Started server process [1889]", "UvicornLifecycle"),
    ("  0%|          | 0/13 [00:00<?, ?it/s]", "ProgressBar"),
]


@pytest.mark.parametrize(("line", "kind"), NOT_MINE)
def test_other_families_keep_their_lines(parser, line, kind):
    _env, cls, _kw = parser.parse(line)
    assert cls.__name__ == kind
    assert parser.parse_lalr(line) == parser.parse(line)


def test_fast_path_equals_lalr_on_corpus(parser):
    """Every line of the corpus: the fast path and LALR agree (guards the failure terminals)."""
    files = sorted(CORPUS.glob("*.log"))
    assert files
    for path in files:
        for text in corpus_lines(path.name):
            assert parser.parse(text) == parser.parse_lalr(text), (path.name, text)


# Corpus lines and the failure event each must give (reader-stripped: Ray, docker, flashinfer.jit).
CORPUS_EVENTS = [
    ("dev-007.log", 1, ExceptionHeader),
    ("dev-008.log", 1, KnownMessage),
    ("dev-008.log", 3, TracebackFrame),
    ("dev-010.log", 1, ExceptionLine),
    ("dev-010.log", 3, ExceptionChain),
    ("dev-011.log", 14, ExceptionLine),
    ("dev-012.log", 1, TracebackFrame),
    ("dev-016.log", 1, ExceptionLine),
    ("dev-016.log", 10, PythonWarning),
    ("dev-018.log", 1, ExceptionHeader),
    ("dev-020.log", 2, PythonWarning),
    ("dev-022.log", 3, JitCompile),
    ("dev-022.log", 5, JitCompile),
    ("dev-023.log", 1, JitCompile),
    ("dev-023.log", 2, SglangWatchdog),
    ("dev-023.log", 3, BatchDump),
    ("dev-023.log", 4, KnownMessage),
    ("dev-023.log", 5, SigquitReceived),
    ("dev-025.log", 1, ExceptionHeader),
    ("dev-025.log", 4, ExceptionLine),
    ("dev-026.log", 10, KnownMessage),
    ("dev-028.log", 1, SigquitReceived),
    ("dev-029.log", 14, ExceptionLine),
    ("dev-034.log", 1, ProcessHeader),
    ("dev-034.log", 9, ExceptionLine),
    ("dev-036.log", 1, TracebackSource),
    ("dev-036.log", 4, ProcessHeader),
    ("dev-039.log", 1, CppStack),
    ("dev-039.log", 10, CppTerminate),
    ("dev-039.log", 11, CppTerminate),
    ("dev-040.log", 18, ExceptionLine),
    ("dev-041.log", 16, KnownMessage),
    ("dev-044.log", 1, KnownMessage),
    ("dev-044.log", 2, ExceptionLine),
    ("dev-045.log", 1, ExceptionHeader),
    ("dev-046.log", 1, ProcessHeader),
    ("dev-050.log", 7, ExceptionLine),
]


@pytest.mark.parametrize(("name", "line_no", "cls"), CORPUS_EVENTS)
def test_corpus_line(parser, name, line_no, cls):
    _env, got, _kw = parser.parse(corpus_lines(name)[line_no - 1])
    assert got is cls


def test_dev027_watchdog_fragments(parser):
    """Hard-wrapped watchdog line with markdown stars: the head gives rank/seq/op/numel_in (the cut
    `NumelOut=1` is not trusted), the tail gives the timeout (labels: nccl_timeout)."""
    lines = corpus_lines("dev-027.log")
    # The message part of line 1: the c10d envelope `[rank4]:[E304 …]` is sglang.lark's business.
    head = lines[0][lines[0].index("] [Rank") + 2 :]
    _env, cls, kw = parser.parse(head)
    assert cls is NcclWatchdogTimeout
    assert kw == {"nccl_rank": 4, "seq": 151721, "op": "_ALLGATHER_BASE", "numel_in": 8080}
    _env, cls, kw = parser.parse(lines[1])
    assert cls is KnownMessage and kw["code"] == "nccl-watchdog-tail"
    assert kw["fields"] == {"timeout_ms": 600000, "ran_ms": 600049}
    c10d = lines[2][lines[2].index("] [PG") + 2 :]
    _env, cls, kw = parser.parse(c10d)
    assert cls is C10dLog and kw["torch_rank"] == 4


def test_every_known_code_is_documented():
    """Codes are public identifiers: each known_message code of failures.lark is listed in the
    docstring of logparse/grammar/transform/failures.py."""
    import logparse.grammar.transform.failures as mod
    from logparse.grammar.resources import grammar_dir
    from logparse.grammar.transform.known import code_of

    grammar = (grammar_dir() / "failures.lark").read_text(encoding="utf-8")
    terminals = set(re.findall(r"\|?\s*([A-Z][A-Z0-9_]+)(?: TEXT\??)?\s+-> known_message", grammar))
    assert len(terminals) > 100
    doc = mod.__doc__ or ""
    missing = [code_of(t) for t in sorted(terminals) if code_of(t) not in doc]
    assert not missing
