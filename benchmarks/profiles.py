"""Generator profiles: line mixes that stress different paths of a log reader.

    python -m benchmarks.generate OUT --lines N --profile P

Every profile is deterministic (one `random.Random(seed)`, a fixed start date) and writes real
SGLang 0.5.10 line shapes (``shared/sglang-log-formats.md``). All but `corpus` are the default
log (`benchmarks.generate.Generator`) with its knobs turned or its hooks filled:

| profile | what dominates |
|---|---|
| default | the original benchmark log (stats 69 %, access 30 %, a traceback every ~50k lines) |
| serving-heavy | busier serving: Prefill/Decode stats and access lines (~99.9 %), rare chatter |
| startup-heavy | TP64 launches with a long `server_args=` dump, each serving a little and shutting down (a parameter sweep): about half the lines are per-rank start-up lines |
| failure-heavy | thousands of scheduler tracebacks, several ranks at once, interleaved with each other and with stats lines; `[rankN]:`-prefixed tracebacks; Python/SGLang warnings; NCCL WARN and c10d watchdog lines |
| wrapper-prefixed | the default log with a wrapper prefix on every line: docker-compose, `kubectl --timestamps` and Ray actor prefixes, switching every 20,000 lines (three deployments' captures concatenated) |
| long-running | weeks of log time (about 3.6 days per 100k lines) at a low request rate with `--log-requests` Receive/Finish lines and client aborts: one distinct request id per ~7 lines |
| unrecognized | ~80 % of the lines are foreign: other apps' Python logging, JSON logs, nginx and klog lines, shell output, prose |
| corpus | the real shared corpus files (``/work/shared/corpus/*.log``, else ``fixtures/corpus/shared-dev``) concatenated and repeated to N lines |
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from benchmarks.generate import MAIN_PID, PKG, SITE, START, TS, Generator, Log, server_args_repr

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    ranks: int  # default tensor-parallel size
    write: Callable[[TextIO, int, int, int], int]  # (fh, lines, seed, ranks) -> lines written


def _run(cls: type[Generator]) -> Callable[[TextIO, int, int, int], int]:
    def write(fh: TextIO, lines: int, seed: int, ranks: int) -> int:
        return cls(lines, seed, ranks).run(fh)
    return write


# -- serving-heavy ---------------------------------------------------------------------------

class ServingHeavy(Generator):
    """More traffic, faster probes, almost no noise: the stats and access paths only."""

    rate_scale = 1.6
    health_every = 5.0
    chatter_p = 0.002
    tb_every = 400_000
    tb_jitter = 40_000


# -- startup-heavy ---------------------------------------------------------------------------

class StartupHeavy(Generator):
    """A sweep: launch TP64, serve ~2,500 lines, shut down, relaunch with the next setting."""

    serve_lines = 2500

    def server_args_text(self) -> str:
        text = server_args_repr(self.ranks, self.rng.randrange(1 << 30))
        # the long form users paste: every captured bs listed, an override dict and LoRA paths
        bs = [1, 2, 4, 8, 12, 16, 24, *range(32, 513, 8)]
        text = text.replace("cuda_graph_bs=[1, 2, 4, 8, 12, 16, 24, 32]", f"cuda_graph_bs={bs!r}")
        override = {"rope_scaling": {"type": "yarn", "factor": 4.0,
                                     "original_max_position_embeddings": 32768},
                    "max_position_embeddings": 131072,
                    "architectures": ["Qwen3MoeForCausalLM"]}
        text = text.replace("json_model_override_args='{}'",
                            f"json_model_override_args={str(override)!r}")
        loras = [f"adapter{i}=/models/lora/qwen3-235b-task{i:02d}" for i in range(16)]
        return text.replace("lora_paths=None", f"lora_paths={loras!r}")

    def run(self, fh: TextIO) -> int:
        self.log = log = self.make_log(fh)
        goal = self.target
        while log.n < goal:
            self.preamble()
            self.startup()
            tail = 46 + self.ranks - 1  # exact length of finish()
            self.target = log.n + self.serve_lines + tail
            stats = self.serving()
            self.finish(stats)
            log.flush()
            self.t0 = self.t + 40 + self.rng.random() * 80  # next launch of the sweep
        self.target = goal
        return log.n


# -- failure-heavy ---------------------------------------------------------------------------

_WARNINGS_SGLANG = [
    ("Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. "
     "To silence this warning, specify disable_custom_all_reduce=True explicitly."),
    ("The input (270112 tokens) is longer than the model's context length (262144 tokens). "
     "Truncating the input."),
    ("Requested token count (250001 input + 16384 new) exceeds the model's context length "
     "(262144 tokens). Truncating max_new_tokens."),
    "max_total_tokens=800000 is larger than the profiled value 731264. Use the profiled value instead.",
]
_WARNINGS_PY = [
    ((f"{SITE}/torch/cuda/memory.py:491: FutureWarning: torch.cuda.reset_max_memory_allocated now "
      "calls torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats."),
     "  warnings.warn("),
    ((f"{SITE}/transformers/generation/configuration_utils.py:818: UserWarning: `do_sample` is "
      "set to `False`. However, `temperature` is set to `0.7` -- this flag is only used in "
      "sample-based generation modes."), "  warnings.warn("),
    ((f"{SITE}/torch/distributed/distributed_c10d.py:4631: UserWarning: No device id is provided "
      "via `init_process_group` or `barrier `. Using the current device set by the user. "),
     "  warnings.warn(  # warn only once"),
]
_NCCL_WARN = [
    "NET/Socket : peer 10.0.1.16<47281> message truncated : receiving 1048576 bytes instead of 65536",
    "Call to ibv_reg_mr failed with error Cannot allocate memory",
    "transport/net_socket.cc:541 -> 2",
    "misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer",
]
_OPTYPES = ["ALLREDUCE", "_ALLGATHER_BASE", "BROADCAST", "_REDUCE_SCATTER_BASE", "COALESCED"]


class FailureHeavy(Generator):
    """A flaky cluster: bursts of crashing ranks, warnings and NCCL complaints between stats."""

    tb_every = 10**12  # the default's lone traceback is replaced by the bursts below
    tb_jitter = 1
    burst_p = 1 / 250  # per scheduler iteration
    warn_p = 0.03
    nccl_p = 0.02

    def __init__(self, lines: int, seed: int, ranks: int) -> None:
        super().__init__(lines, seed, ranks)
        self.pending: list[deque[str]] = []

    def rank_traceback(self, t: float, r: int) -> list[str]:
        """An uncaught traceback of a torch.distributed process: every line `[rankN]: `."""
        body = [
            "Traceback (most recent call last):",
            f'  File "{PKG}/managers/scheduler.py", line 3183, in run_scheduler_process',
            "    scheduler.event_loop_normal()",
            f'  File "{SITE}/torch/distributed/distributed_c10d.py", line 2806, in all_reduce',
            "    work = group.allreduce([tensor], opts)",
            "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/"
             "c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for "
             "details), NCCL version 2.27.5"),
            ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
             "or device error. "),
            "Last error:",
            "socketProgress: Connection closed by remote peer node2<41022>",
        ]
        return [f"[rank{r}]: {x}" for x in body]

    def watchdog(self, t: float, r: int) -> str:
        seq = self.rng.randrange(1000, 90000)
        ran = 600000 + self.rng.randrange(100)
        return (f"[rank{r}]:[E{TS.c10d(t, self.rng)} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog "
                f"caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
                f"OpType={self.rng.choice(_OPTYPES)}, NumelIn={self.rng.randrange(1, 1 << 28)}, "
                f"NumelOut={self.rng.randrange(1, 1 << 28)}, Timeout(ms)=600000) ran for {ran} "
                "milliseconds before timing out.")

    def extra(self, t: float, out: list[str]) -> None:
        rng = self.rng
        u = rng.random()
        if u < self.burst_p and len(self.pending) < 6:
            # one to four ranks fail together; their records interleave line by line
            for _ in range(1 + int(rng.random() * 4)):
                r = rng.randrange(self.ranks)
                k = rng.random()
                if k < 0.6:
                    lines = self.traceback(t)
                elif k < 0.85:
                    lines = self.rank_traceback(t, r)
                else:
                    lines = [self.watchdog(t, r), self.c10d_warn(
                        t, r, 1826, f'[PG ID 0 PG GUID 0 Rank {r}] Failed to check the "should '
                        'dump" flag on TCPStore, (maybe TCPStore server has shut down too early), '
                        "with error: Connection reset by peer")]
                self.pending.append(deque(lines))
        elif u < self.burst_p + self.warn_p:
            k = rng.randrange(3)
            if k == 0:
                w = _WARNINGS_PY[rng.randrange(len(_WARNINGS_PY))]
                out.extend(w)
            elif k == 1:
                msg = _WARNINGS_SGLANG[rng.randrange(len(_WARNINGS_SGLANG))]
                r = rng.randrange(self.ranks) if msg.startswith("Custom") else None
                out.append(self.P(t, r, msg))
            else:
                r = rng.randrange(self.ranks)
                out.append(self.c10d_warn(
                    t, r, 4715, f"[PG ID 0 PG GUID 0 Rank {r}]  using GPU {r} as device used by "
                    "this process is currently unknown. This can potentially cause a hang if this "
                    "rank to GPU mapping is incorrect."))
        elif u < self.burst_p + self.warn_p + self.nccl_p:
            r = rng.randrange(self.ranks)
            pid = 534 + 17 * r
            level = "WARN" if rng.random() < 0.6 else "INFO"
            text = (_NCCL_WARN[rng.randrange(len(_NCCL_WARN))] if level == "WARN"
                    else f"Channel {rng.randrange(32):02d}/0 : {r}[{r}] -> {(r + 1) % self.ranks}"
                         f"[{(r + 1) % self.ranks}] via P2P/CUMEM")
            out.append(f"node1:{pid}:{pid + 1240 + rng.randrange(40)} [{r}] NCCL {level} {text}")
        if self.pending:
            for q in self.pending:
                for _ in range(1 + int(rng.random() * 3)):
                    out.append(q.popleft())
                    if not q:
                        break
            self.pending = [q for q in self.pending if q]

    def finish(self, s: dict) -> None:
        out = self.log.buf  # type: ignore[union-attr]
        for q in self.pending:
            out.extend(q)
        self.pending = []
        super().finish(s)


# -- wrapper-prefixed ------------------------------------------------------------------------

WRAP_BLOCK = 20_000


def _wrapper(block: list[str], start: int) -> list[str]:
    """Prefix every line as docker-compose, `kubectl logs --timestamps` or Ray would."""
    out: list[str] = []
    ts = "2026-04-14T09:12:03"
    ns = 0
    for i, line in enumerate(block, start):
        kind = (i // WRAP_BLOCK) % 3
        if line[:3] == "[20" and line[20:21] in ("]", " ", "."):
            ts = line[1:11] + "T" + line[12:20]
        if kind == 0:
            out.append(f"sglang-1  | {line}")
        elif kind == 1:
            ns = (ns + 7919) % 1_000_000_000  # kubelet's receive time: same second, later ns
            out.append(f"{ts}.{ns:09d}Z {line}")
        else:
            j = line.find(" TP", 20, 40) if line[:1] == "[" else -1
            if j > 0:
                r = int(line[j + 3:line.index("]", j)].split()[0])
                out.append(f"(SchedulerActor pid={534 + 17 * r}, ip=10.0.1.15) {line}")
            else:
                out.append(f"(ServerActor pid={MAIN_PID}, ip=10.0.1.15) {line}")
    return out


class WrapperPrefixed(Generator):
    def make_log(self, fh: TextIO) -> Log:
        return Log(fh, wrap=_wrapper)


# -- long-running ----------------------------------------------------------------------------

class LongRunning(Generator):
    """A quiet service left running for weeks with `--log-requests`: every request id logged."""

    rate_scale = 0.05
    out_mu = 4.5  # short answers (median ~90 tokens): many requests per stats line
    health_every = 30.0
    metrics_every = 60.0

    def __init__(self, lines: int, seed: int, ranks: int) -> None:
        super().__init__(lines, seed, ranks)
        self.prompt: dict[str, tuple[int, int, float]] = {}

    def on_admit(self, t: float, req: list) -> str:
        if req[5] is None:  # a retracted request re-admitted: its id was logged already
            return ""
        rng = self.rng
        rid = f"{rng.getrandbits(128):032x}"
        self.prompt[rid] = (req[0], req[1], t)
        self.log.buf.append(self.P(  # type: ignore[union-attr]
            t, None,
            f"Receive: obj=GenerateReqInput(rid='{rid}', text=None, input_ids=None, "
            f"sampling_params={{'temperature': 0.7, 'top_p': 0.8, 'max_new_tokens': "
            f"{rng.choice((256, 512, 1024, 2048))}}}, return_logprob=False, stream=True, "
            f"log_metrics=True, lora_path=None, custom_logit_processor=None)"))
        return rid

    def on_finish(self, t: float, rid: str) -> None:
        rng = self.rng
        prompt, cached, t_in = self.prompt.pop(rid, (0, 0, t))
        out = self.log.buf  # type: ignore[union-attr]
        if rng.random() < 0.01:
            out.append(self.P(t, None, "[http_server] Error: Request is disconnected from the "
                                       f"client side (type 1). Abort request obj.rid='{rid}'"))
            return
        out.append(self.P(
            t, None,
            f"Finish: obj=GenerateReqInput(rid='{rid}'), out={{'meta_info': {{'id': '{rid}', "
            f"'finish_reason': {{'type': 'stop', 'matched': 151645}}, 'prompt_tokens': {prompt}, "
            f"'completion_tokens': {int(rng.lognormvariate(5.2, 0.9)) + 1}, "
            f"'cached_tokens': {cached}, 'e2e_latency': {max(t - t_in, 0.01):.3f}}}}}"))


# -- mostly unrecognised text ----------------------------------------------------------------

_PROSE = [
    "NOTE: this node was drained for maintenance at 02:00; requests were routed to node2.",
    "Operator: restarted the exporter after the config change, see ticket OPS-4411.",
    "The quick fix is to lower --mem-fraction-static; the proper fix is a bigger KV pool.",
    "Memory usage looks stable over the last hour, nothing to do here.",
    "    at the end of the day the queue drained and the latency went back to normal",
    "",
    "-- end of shift summary --",
]
_APPS = ["ingest.worker", "billing.sync", "auth.session", "router.health", "cache.warmup"]


class Unrecognized(Generator):
    """A shared log file where SGLang is the minority: ~8 foreign lines per scheduler step."""

    chatter_p = 0.05

    def extra(self, t: float, out: list[str]) -> None:
        rng = self.rng
        g = time.gmtime(START + int(t))
        hms = f"{g.tm_hour:02d}:{g.tm_min:02d}:{g.tm_sec:02d}"
        day = f"{g.tm_year}-{g.tm_mon:02d}-{g.tm_mday:02d}"
        for _ in range(5 + int(rng.random() * 8)):
            k = rng.randrange(7)
            if k == 0:
                out.append(f"{day} {hms},{rng.randrange(1000):03d} - INFO - "
                           f"{_APPS[rng.randrange(5)]}: processed batch {rng.randrange(10**6)} in "
                           f"{rng.random():.3f}s")
            elif k == 1:
                out.append(f'{{"level":"info","ts":"{day}T{hms}Z","msg":"scrape ok",'
                           f'"target":"gpu-exporter","duration_ms":{rng.randrange(4, 40)}}}')
            elif k == 2:
                out.append(f"10.0.{rng.randrange(8)}.{rng.randrange(250)} - - [{g.tm_mday:02d}/"
                           f"{time.strftime('%b', g)}/{g.tm_year}:{hms} +0000] \"POST "
                           f"/v1/chat/completions HTTP/1.1\" 200 {rng.randrange(200, 9000)} \"-\" "
                           "\"python-requests/2.32.3\"")
            elif k == 3:
                out.append(f"I{g.tm_mon:02d}{g.tm_mday:02d} {hms}.{rng.randrange(10**6):06d}       "
                           f"1 controller.go:{rng.randrange(80, 400)}] Reconciling deployment "
                           f"default/sglang-{rng.randrange(4)}")
            elif k == 4:
                out.append(f"Requirement already satisfied: {rng.choice(['numpy', 'requests', 'tqdm'])} "
                           f"in {SITE} (from sglang==0.5.10)")
            else:
                out.append(_PROSE[rng.randrange(len(_PROSE))])


# -- corpus ----------------------------------------------------------------------------------

def corpus_files() -> list[Path]:
    """The real corpus logs: the shared corpus when present, else the checked-in copy."""
    shared = Path(os.environ.get("LOGDIAG_SHARED", "/work/shared")) / "corpus"
    files = sorted(shared.glob("*.log"))
    if not files:
        files = sorted((REPO / "fixtures" / "corpus" / "shared-dev").glob("*.log"))
    return files


def write_corpus(fh: TextIO, lines: int, seed: int, ranks: int) -> int:
    """The corpus files in name order (each ending in a newline), repeated; exactly `lines` lines
    (the last repetition is cut at a line boundary). `seed` and `ranks` do not apply."""
    chunks: list[bytes] = []
    for f in corpus_files():
        data = f.read_bytes()
        if data and not data.endswith(b"\n"):
            data += b"\n"
        chunks.append(data)
    blob = b"".join(chunks)
    per = blob.count(b"\n")
    if per == 0:
        raise SystemExit("corpus profile: no corpus files found")
    fh.flush()
    raw = fh.buffer  # bytes as they are in the corpus (some lines are not valid UTF-8)
    n = 0
    while n + per <= lines:
        raw.write(blob)
        n += per
    if n < lines:
        cut = 0
        for _ in range(lines - n):
            cut = blob.index(b"\n", cut) + 1
        raw.write(blob[:cut])
        n = lines
    return n


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("default", "the original benchmark log", 8, _run(Generator)),
    Profile("serving-heavy", "stats + access lines", 8, _run(ServingHeavy)),
    Profile("startup-heavy", "TP64 relaunches, long server_args", 64, _run(StartupHeavy)),
    Profile("failure-heavy", "interleaved tracebacks, warnings, NCCL", 8, _run(FailureHeavy)),
    Profile("wrapper-prefixed", "docker-compose / k8s / Ray prefixes", 8, _run(WrapperPrefixed)),
    Profile("long-running", "weeks, one request id per ~7 lines", 8, _run(LongRunning)),
    Profile("unrecognized", "~80 % foreign lines", 8, _run(Unrecognized)),
    Profile("corpus", "the shared corpus, repeated", 8, write_corpus),
)}
