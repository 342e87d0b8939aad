"""Facts in the corpus vocabulary (shared/corpus/README.md, "Facts vocabulary"): what the log states
about failures, start-up, serving, distributed set-up and benchmarks — only the keys it states."""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from logparse.model.events import (
    BatchDump,
    BenchOneBatchResult,
    BenchServingResult,
    C10dLog,
    CaptureEnd,
    CppTerminate,
    Event,
    ExceptionHeader,
    ExitCode,
    GraphKind,
    JitCompile,
    KnownMessage,
    KvCacheAllocated,
    NcclLog,
    NcclVersion,
    NcclWatchdogTimeout,
    ProfiledTokensExceeded,
    Retraction,
    SchedulerLimits,
    SglangWatchdog,
    Traceback,
    WeightLoadEnd,
)
from logparse.model.codes import KnownCode
from logparse.model.numbers import present, to_int
from logparse.parsing import colstats
from logparse.parsing.linetexts import lines_in_order
from logparse.parsing.records import root_exception
from logparse.run.oom import oom_numbers
from logparse.run.ranks import is_sglang_rank
from logparse.run.serving import _max, _mean, _num

if TYPE_CHECKING:
    from logparse.parsing.pipeline import ParsedLog


class FactsView:
    """The `facts` of one parsed log (a mixin of `Views`; needs its configuration and readiness)."""

    log: ParsedLog
    if TYPE_CHECKING:  # provided by `Views` (its configuration mixin and the run model)

        @property
        def ranks(self) -> list[str]: ...
        @property
        def tp_size(self) -> int | None: ...
        @property
        def dp_size(self) -> int | None: ...
        @property
        def ready(self) -> bool | None: ...
        @property
        def tracebacks(self) -> list[Traceback]: ...
        @property
        def cuda_graph_max_bs(self) -> int | None: ...

    def facts(self) -> dict[str, Any]:
        """Facts in the corpus vocabulary, only those the log states."""
        out: dict[str, Any] = {}
        log = self.log
        if self.ranks:
            out["ranks"] = self.ranks
        if self.tp_size is not None:
            out["tp_size"] = self.tp_size
        if self.dp_size is not None:
            out["dp_size"] = self.dp_size
        self._failure_facts(out)
        if self.ready is not None:
            out["ready"] = self.ready
        self._startup_facts(out)
        if (sm := self.gpu_sm) is not None:
            out["gpu_sm"] = sm
        self._serving_facts(out)
        self._distributed_facts(out)
        benches = log.of(BenchServingResult)
        if benches:
            out["bench"] = benches[0].fields if len(benches) == 1 else benches[-1].fields
            if len(benches) > 1:
                out["bench_runs"] = [b.fields for b in benches]
        one = log.of(BenchOneBatchResult)
        if one:
            # bench_one_batch runs a warmup pass first; the measured run is the benchmark one.
            measured = [b for b in one if b.fields.get("phase") == "benchmark"] or one
            out["bench_one_batch"] = measured[-1].fields
        self._script_bench_facts(out)
        return out

    def _script_bench_facts(self, out: dict[str, Any]) -> None:
        """send_one's result (`acc_length=`/`speed=` lines or its table) and the result lines of the
        MT-bench / few-shot evaluation scripts (`bench_runs`: one entry per run, in file order)."""
        known = [e for e in self.log.of(KnownMessage) if e.code in _SCRIPT_BENCH_CODES]
        sends: list[dict[str, Any]] = []
        runs: list[dict[str, Any]] = []
        for e in known:
            fields = {k: v for k, v in e.fields.items() if v is not None}
            if e.code == KnownCode.SEND_ONE_ROW:
                sends.append(fields)
            elif e.code in (KnownCode.SEND_ONE_ACC_LENGTH, KnownCode.SEND_ONE_SPEED):
                # `acc_length=` then `speed=`: one result; a repeated key starts the next one.
                if not sends or sends[-1].get("_lines") != "kv" or any(k in sends[-1] for k in fields):
                    sends.append({"_lines": "kv"})
                sends[-1].update(fields)
            elif e.code == KnownCode.MTBENCH_RESULT:
                runs.append(fields)
            else:
                # The evaluation scripts print Accuracy, Invalid, Latency, Output throughput in turn;
                # a repeated key starts the next run.
                if not runs or runs[-1].get("_script") != "eval" or any(k in runs[-1] for k in fields):
                    runs.append({"_script": "eval"})
                runs[-1].update(fields)
        sends = [{k: v for k, v in d.items() if k != "_lines"} for d in sends]
        runs = [{k: v for k, v in d.items() if k != "_script"} for d in runs]
        if sends:
            out["send_one"] = sends[0] if len(sends) == 1 else sends
        if runs:
            # bench_serving runs (several result blocks) come first when a log has both.
            out["bench_runs"] = out.get("bench_runs", []) + runs

    def _by_rank_or_list(self, events: list[Any], attr: str) -> dict[str, Any] | list[Any] | None:
        values = [(e.rank, getattr(e, attr)) for e in events if getattr(e, attr) is not None]
        if not values:
            return None
        if all(r for r, _ in values):
            out: dict[str, Any] = {}
            for r, v in values:
                out.setdefault(r, v)
            return out
        return [v for _, v in values]

    def _startup_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        ends = log.of(CaptureEnd)
        target = [e for e in ends if e.graph_kind in (GraphKind.TARGET, GraphKind.VERIFY)]
        draft = [e for e in ends if e.graph_kind == GraphKind.DRAFT]
        if (v := self._by_rank_or_list(target, "elapsed_s")) is not None:
            out["cuda_graph_capture_s"] = v
        if (v := self._by_rank_or_list(draft, "elapsed_s")) is not None:
            out["draft_cuda_graph_capture_s"] = v
        if (bs := self.cuda_graph_max_bs) is not None:
            out["cuda_graph_max_bs"] = bs
        limits = log.of(SchedulerLimits)
        kv = log.of(KvCacheAllocated)
        if limits and limits[0].max_total_num_tokens is not None:
            out["kv_cache_tokens"] = limits[0].max_total_num_tokens
        elif kv and kv[0].tokens is not None:
            out["kv_cache_tokens"] = kv[0].tokens
        if limits:
            if limits[0].max_running_requests is not None:
                out["max_running_requests"] = limits[0].max_running_requests
            if limits[0].context_len is not None:
                out["context_len"] = limits[0].context_len
        prof = log.of(ProfiledTokensExceeded)
        if prof:
            out["profiled_max_total_tokens"] = prof[0].profiled
        wl = log.of(WeightLoadEnd)
        if (v := self._by_rank_or_list(wl, "mem_usage_gb")) is not None:
            out["weight_mem_usage_gb"] = v
        if (v := self._by_rank_or_list(wl, "avail_mem_gb")) is not None:
            out["avail_mem_after_weights_gb"] = v
        jit = self.jit_compile_s
        if jit is not None:
            out["jit_compile_s"] = jit

    @cached_property
    def jit_compile_s(self) -> float | None:
        begins: dict[tuple[str, str], Any] = {}
        longest: float | None = None
        for e in self.log.of(JitCompile):
            key = (e.library, e.name)
            if e.stage == "begin":
                begins[key] = e
            elif key in begins and e.ts is not None and begins[key].ts is not None:
                gap = (e.ts - begins.pop(key).ts).total_seconds()
                longest = gap if longest is None else max(longest, gap)
        return round(longest, 2) if longest is not None else None

    def _serving_facts(self, out: dict[str, Any]) -> None:
        d, p = self.log.decode, self.log.prefill
        if len(d):
            out["decode_lines"] = len(d)
        if len(p):
            out["prefill_lines"] = len(p)
        if len(d):
            if (v := _mean(d.column("accept_len"))) is not None:
                out["accept_len_mean"] = v
            if (v := _mean(d.column("accept_rate"))) is not None:
                out["accept_rate_mean"] = v
            if (v := _max(d.column("gen_throughput"))) is not None:
                out["gen_throughput_max"] = _num(v)
            out["cuda_graph_false_lines"] = colstats.count_equal(d.column("cuda_graph"), 0.0)
        both = [c for c in (d, p) if len(c)]
        for key, col in (("token_usage_max", "token_usage"), ("queue_req_max", "queue"), ("running_req_max", "running")):
            v = _max([m for c in both if (m := _max(c.column(col))) is not None])
            if v is not None:
                out[key] = _num(v)
        mamba = _max([m for c in both if (m := _max(c.column("mamba_usage"))) is not None])
        if mamba is not None:
            out["mamba_usage_max"] = _num(mamba)
        retractions = self.log.of(Retraction)
        if retractions:
            out["retractions"] = len(retractions)

    def _distributed_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        versions = [e.version for e in log.of(NcclVersion)] + [e.version for e in log.of(NcclLog) if e.version]
        if versions:
            out["nccl_version"] = versions[0]
        nranks = [e.nranks for e in log.of(NcclLog) if e.nranks]
        if nranks:
            out["nccl_nranks"] = max(nranks)
        wd = self.nccl_watchdog_timeouts
        if wd:
            w = wd[0]
            nt = {"op": w.op, "timeout_ms": w.timeout_ms, "seq": w.seq, "rank": w.nccl_rank}
            out["nccl_timeout"] = {k: v for k, v in nt.items() if v is not None}
        else:
            for t in log.of(CppTerminate):
                # A watchdog abort names the rank whose collective timed out, unless it carries a
                # CUDA error instead (a kernel fault killed the watchdog; nothing timed out).
                m = re.search(r"\bRank (\d+)\]", t.what)
                if m and _cuda_error(t.what) is None:
                    out["nccl_timeout"] = present(rank=to_int(m.group(1)))
                    break
            else:
                # torch ≥ 2.2 names the timed-out work in its own line: `[PG ID 2 PG GUID 3 Rank 16]
                # Timeout at NCCL work: 9301, …` (catalog nccl-work-timeout), also without the WorkNCCL line.
                work = self._nccl_work_timeout()
                if work:
                    out["nccl_timeout"] = work
        sw = log.of(SglangWatchdog)
        if sw and sw[0].timeout_s is not None:
            out["watchdog_timeout_s"] = _num(sw[0].timeout_s)
        bd = [e.batch_size for e in log.of(BatchDump) if e.batch_size is not None]
        if bd:
            out["watchdog_batch_size"] = bd[0]

    def _nccl_work_timeout(self) -> dict[str, Any] | None:
        from logparse.grammar.messages import catalog

        spec = catalog().specs.get("nccl-work-timeout")
        if spec is None:
            return None
        for e in self.log.of(C10dLog):
            fields = spec.match(e.text) if "NCCL work" in e.text else None
            if fields and fields.get("seq") is not None:
                m = re.search(r"\bRank (\d+)\]", e.text)
                rank = to_int(m.group(1)) if m else e.torch_rank
                return present(seq=fields["seq"], rank=rank)
        return None

    @cached_property
    def nccl_watchdog_timeouts(self) -> list[NcclWatchdogTimeout]:
        """The torch NCCL watchdog lines, with the tail of a hard-wrapped line (the next line,
        `…Timeout(ms)=600000) ran for … milliseconds`) merged back into its head."""
        from dataclasses import replace

        tails = {e.line: e for e in self.log.of(KnownMessage) if e.code == "nccl-watchdog-tail"}
        out = []
        texts = self.log.texts
        for w in self.log.of(NcclWatchdogTimeout):
            # The next line, or the one after a blank line (a double-spaced paste; blank lines
            # are not kept in `texts`).
            tail = tails.get(w.line + 1) or (tails.get(w.line + 2) if w.line + 1 not in texts else None)
            if tail is not None and w.timeout_ms is None:
                w = replace(w, end_line=tail.line, timeout_ms=tail.fields.get("timeout_ms"),
                            ran_ms=tail.fields.get("ran_ms"))
            out.append(w)
        return out

    @cached_property
    def gpu_sm(self) -> int | None:
        """The GPU's compute capability as major*10+minor (90, 121), the first time the log states
        it (catalog gpu-own-sm: sgl-kernel's loader report, check_env, torch's capability checks).
        A requirement ('below sm80', 'requires SM100') or a kernel variant's directory is not the
        GPU's, and sgl-kernel's `None` (no GPU visible) states nothing."""
        from logparse.grammar.messages import catalog

        spec = catalog().specs.get("gpu-own-sm")
        if spec is None:
            return None
        texts = self.log.texts
        for _n, line in lines_in_order(texts):
            if "apabilit" not in line:  # every wording's literal; most lines are rejected here
                continue
            fields = spec.match(line)
            if not fields:
                continue
            if fields.get("sm") is not None:
                return int(fields["sm"])
            if fields.get("major") is not None and fields.get("minor") is not None:
                return int(fields["major"]) * 10 + int(fields["minor"])
        return None

    # ------------------------------------------------------------------ failure facts

    @cached_property
    def first_error(self) -> Event | None:
        """The first error-shaped event of the log (traceback, exception header, watchdog, …)."""
        errors = [e for e in self.log.events if isinstance(e, (Traceback, ExceptionHeader, SglangWatchdog,
                                                                 NcclWatchdogTimeout, CppTerminate))]
        return errors[0] if errors else None

    def _failure_facts(self, out: dict[str, Any]) -> None:
        log = self.log
        errors = [e for e in log.events if isinstance(e, (Traceback, ExceptionHeader, SglangWatchdog,
                                                            NcclWatchdogTimeout, CppTerminate, BatchDump))]
        ranked = [e for e in errors if e.rank and is_sglang_rank(e)]
        if ranked:
            out["first_error_rank"] = ranked[0].rank
        tbs = self.tracebacks
        exc_type = None
        messages: list[str] = []
        for tb in tbs:
            etype, _msg = root_exception(tb)
            if etype and exc_type is None:
                exc_type = etype
            messages.append(tb.message)
            messages.extend(m for _, m in tb.chain)
        if exc_type is None:
            for t in log.of(CppTerminate):
                if t.exc_type:
                    exc_type = t.exc_type
                    break
        if exc_type:
            out["exception_type"] = exc_type
        text = "\n".join(messages)
        for e in log.of(ExitCode):
            out["exit_code"] = e.code
            break
        else:
            m = re.search(r"exit code:? (-?\d+)", text)
            if m:
                out.update(present(exit_code=to_int(m.group(1))))
            elif (code := self._container_exit_code()) is not None:
                out["exit_code"] = code
        m = re.search(r"\[Errno (\d+)\]", text)
        if m:
            out.update(present(errno=to_int(m.group(1))))
        m = re.search(r"res=<Response \[(\d{3})\]>", text)
        if m:
            out.update(present(warmup_http_status=to_int(m.group(1))))
        oom = _oom_fields(text)
        if oom:
            out["oom"] = oom
        cuda = _cuda_error(text) or self._cuda_error_in_lines()
        if cuda:
            out["cuda_error"] = cuda
        m = re.search(r"block_n = (\d+)", text)
        if m:
            out.update(present(quant_block=to_int(m.group(1))))


    def _container_exit_code(self) -> int | None:
        """The exit code docker compose reports for the first container that ended (catalog
        container-exited: `sglang-1 exited with code 1`, printed by compose, not the container)."""
        from logparse.grammar.messages import catalog

        spec = catalog().specs.get("container-exited")
        if spec is None:
            return None
        texts = self.log.texts
        for _n, line in lines_in_order(texts):
            if "exited with code" not in line:  # the literal: most lines are rejected here
                continue
            fields = spec.match(line)
            if fields and fields.get("exit_code") is not None:
                return int(fields["exit_code"])
        return None

    def _cuda_error_in_lines(self) -> str | None:
        """A CUDA error printed outside a traceback: a C++ `what():`, a c10d line, a kernel library's
        own report (`Failed: Cuda error …`, flashinfer's `CUDA Error: …`), in file order."""
        for t in self.log.of(CppTerminate):
            if (v := _cuda_error(t.what)) is not None:
                return v
        texts = self.log.texts
        for _n, line in lines_in_order(texts):
            if ("uda" in line or "CUDA" in line) and (v := _cuda_error(line)) is not None:
                return v
        return None


# Every shape of a CUDA runtime error's text, each capturing the error string as printed:
# - torch: `RuntimeError: CUDA error: an illegal memory access was encountered` (also
#   `torch.AcceleratorError: CUDA error: …`, a c10d `what():  … exception: CUDA error: …`), with
#   newer releases' ` (… at file:line)` / ` at file:line` tail cut off;
# - old custom all-reduce (0.1.x, vLLM's CUDACHECK): `Failed: Cuda error /…/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'`;
# - flashinfer / sgl-kernel: `CUDA Error: an illegal memory access was encountered (CUDA Error: 700…) (/…:line)`;
# - the driver API's symbolic name: `… 719 (CUDA_ERROR_LAUNCH_FAILED)`.
_CUDA_ERROR = re.compile(
    r"\bCuda error \S+:\d+ '(?P<quoted>[^']+)'"
    r"|\bCUDA [Ee]rror: (?P<message>[^\n(]+?)(?: \(CUDA [Ee]rror: [^\n]*)?(?: at [^\s:]+:\d+)?(?: \(.*)?\s*$"
    r"|\b(?P<name>CUDA_ERROR_[A-Z_]+)\b",
    re.MULTILINE,
)


def _cuda_error(text: str) -> str | None:
    """The CUDA error a failure text states, as printed (see _CUDA_ERROR), or None."""
    if "uda" not in text and "CUDA" not in text:
        return None
    m = _CUDA_ERROR.search(text)
    if m is None:
        return None
    value = m.group("quoted") or m.group("message") or m.group("name")
    return value.strip().rstrip(".") if value else None


_SCRIPT_BENCH_CODES = frozenset({
    KnownCode.SEND_ONE_ACC_LENGTH, KnownCode.SEND_ONE_SPEED, KnownCode.SEND_ONE_ROW,
    KnownCode.MTBENCH_RESULT, KnownCode.EVAL_ACCURACY, KnownCode.EVAL_INVALID,
    KnownCode.EVAL_LATENCY, KnownCode.EVAL_OUTPUT_THROUGHPUT,
})


def _oom_fields(text: str) -> dict[str, Any]:
    """The numbers of a CUDA OOM in the failure text; run/oom.py owns them (catalog cuda-oom-numbers)."""
    if "out of memory" not in text.lower():
        return {}
    return oom_numbers(text)
