"""Traceback records assembled from line events (logparse/parsing/records.py).

Corpus files are read with the reader (it strips Ray / docker / logger wrappers and says which
stream wrote each line), every line is parsed with the strict grammar and fed in file order, the
way the driver does it.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from logparse.grammar.build import get_parser
from logparse.io.reader import ReadReport, read_lines
from logparse.model.events import Frame, Traceback
from logparse.parsing.records import MAX_CONTINUATION_LINES, TracebackAssembler, root_exception
from tests.conftest import CORPUS


def _ts(text: str | None) -> datetime | None:
    if not text:
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%H:%M:%S", "%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _feed(
    asm: TracebackAssembler, no: int, stream: str, text: str, wrapper_ts: datetime | None = None
) -> list:
    env, cls, kw = get_parser(strict=True).parse(text)
    if env is not None and env.style == "torch-rank":
        stream = f"rank:{env.rank[4:]}"  # the driver's stream for `[rankN]: ` lines
    rank = env.rank if env is not None else None
    ts = _ts(env.ts) if env is not None else None
    if wrapper_ts is not None and ts is None:
        ts = wrapper_ts  # what the driver does: fall back to the wrapper's timestamp
    enveloped = env is not None and env.style != "torch-rank"
    return asm.feed(no, stream, rank, ts, cls, kw, text, enveloped=enveloped)


def assemble_file(path: Path) -> tuple[list[Traceback], TracebackAssembler]:
    asm = TracebackAssembler(path.name)
    out: list = []
    for no, text, wrapper in read_lines(str(path), ReadReport(str(path))):
        stream = wrapper.stream if wrapper is not None else ""
        wrapper_ts = _ts(wrapper.ts) if wrapper is not None else None
        out += _feed(asm, no, stream, text, wrapper_ts)
    out += asm.finish()
    assert asm.pending() == 0
    return out, asm


def assemble(lines: list[str | tuple[str, str]]) -> tuple[list[Traceback], TracebackAssembler]:
    """Feed synthetic lines; an item is a text (bare stream) or (stream, text)."""
    asm = TracebackAssembler("test.log")
    out: list = []
    for no, item in enumerate(lines, 1):
        stream, text = item if isinstance(item, tuple) else ("", item)
        out += _feed(asm, no, stream, text)
    out += asm.finish()
    return out, asm


def corpus(name: str) -> list[Traceback]:
    return assemble_file(CORPUS / name)[0]


def funcs(tb: Traceback) -> list[str | None]:
    return [f.func for f in tb.frames]


# --------------------------------------------------------------------------- corpus tracebacks


def test_dev005_plain_traceback():
    (tb,) = corpus("dev-005.log")
    assert (tb.line, tb.end_line) == (2, 7)
    assert tb.exc_type == "ImportError"
    assert tb.message.endswith("common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate")
    assert tb.frames == (
        Frame(
            "/root/luoyuan.luo/workspace/SGLang/./sgl-kernel/tests/test_per_token_quant_fp8.py",
            6,
            "<module>",
        ),
        Frame("/opt/conda/lib/python3.10/site-packages/sgl_kernel/__init__.py", 13, "<module>"),
    )
    assert (tb.process, tb.rank, tb.cut, tb.headless, tb.chain) == (None, None, False, False, ())
    assert tb.source == "dev-005.log"


def test_dev007_unprefixed_scheduler_header_cut():
    (tb,) = corpus("dev-007.log")
    assert (tb.process, tb.rank, tb.cut, tb.headless) == ("Scheduler", None, True, False)
    assert tb.exc_type is None and tb.message == ""
    assert funcs(tb) == ["run_scheduler_process", "__init__", "__init__"]
    assert tb.frames[2].path == "sglang/python/sglang/srt/speculative/eagle_worker.py"
    assert (tb.line, tb.end_line) == (1, 9)


def test_dev008_cut_frame_keeps_path():
    (tb,) = corpus("dev-008.log")
    assert (tb.process, tb.rank, tb.cut) == ("Scheduler", "TP1", True)
    assert tb.frames == (Frame("/home/xiaoi/sglang/python/sglang/srt/managers/sche", None, None),)
    assert tb.ts == datetime(2025, 3, 10, 14, 17, 52)
    assert (tb.line, tb.end_line) == (2, 3)


def test_dev010_headless_chain_with_cut_second_exception():
    (tb,) = corpus("dev-010.log")
    assert tb.headless and tb.cut and tb.exc_type is None
    assert tb.chain == (
        (
            "tvm.error.InternalError",
            (
                "Error in function 'TllmGenFmhaRunner' at "
                "/workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:37: Unsupported architecture"
            ),
        ),
    )
    assert funcs(tb)[0] == "run_scheduler_process"
    assert funcs(tb)[-1] == "init_prefill_cuda_graph"
    assert len(tb.frames) == 7
    assert root_exception(tb)[0] == "tvm.error.InternalError"
    assert (tb.line, tb.end_line) == (1, 21)


def test_dev011_ray_remote_traceback_in_message():
    """Ray prints the remote traceback right after `RayTaskError(...)`: one record, the printed
    RayTaskError at the head of the chain, the remote frames appended (cut before its end)."""
    (tb,) = corpus("dev-011.log")
    assert tb.chain == (
        (
            "ray.exceptions.RayTaskError(OutOfMemoryError)",
            "ray::main_task() (pid=508648, ip=10.1.200.6)",
        ),
    )
    assert tb.cut and not tb.headless and tb.exc_type is None
    assert funcs(tb)[-2:] == ["main_task", "fit"]
    assert len(tb.frames) == 8
    assert root_exception(tb)[0] == "ray.exceptions.RayTaskError(OutOfMemoryError)"


def test_dev012_ray_prefixed_headless_cut():
    (tb,) = corpus("dev-012.log")
    assert tb.headless and tb.cut and tb.rank is None and tb.process is None
    assert funcs(tb) == ["run_scheduler_process", "decorate_context", "event_loop_overlap"]
    assert tb.frames[0].lineno == 3130
    assert (tb.line, tb.end_line) == (1, 7)


def test_dev015_eagle_worker_v2_frames():
    (tb,) = corpus("dev-015.log")
    assert (tb.process, tb.rank, tb.cut) == ("Scheduler", "TP4", True)
    assert funcs(tb) == [
        "run_scheduler_process",
        "decorate_context",
        "event_loop_overlap",
        "run_batch",
        "forward_batch_generation",
        "_draft_extend_for_decode",
    ]
    assert tb.frames[-1].path.endswith("speculative/eagle_worker_v2.py")


def test_dev016_exception_line_alone_and_warning_followups_ignored():
    (tb,) = corpus("dev-016.log")
    assert tb.exc_type == "KeyError"
    assert tb.message == "'language_model.model.layers.0.self_attn.qkv_proj.k_scale'"
    assert tb.headless and not tb.cut and tb.frames == ()
    assert (tb.line, tb.end_line) == (1, 1)


def test_dev018_docker_stream_rank_with_ep():
    (tb,) = corpus("dev-018.log")
    assert (tb.process, tb.rank, tb.cut) == ("Scheduler", "TP5 EP5", True)
    assert funcs(tb) == ["from_pretrained"]
    assert (tb.line, tb.end_line) == (1, 4)


def test_dev019_headless_after_command_line():
    (tb,) = corpus("dev-019.log")
    assert tb.exc_type == "RuntimeError"
    assert tb.message.startswith("Sizes of tensors must match except in dimension 1.")
    assert tb.headless and not tb.cut
    assert tb.frames == (
        Frame(
            "/homes/alexh/code/sglang_main/python/sglang/srt/models/llama_eagle3.py", 88, "forward"
        ),
    )
    assert (tb.line, tb.end_line) == (2, 5)


def test_dev025_warmup_error():
    (tb,) = corpus("dev-025.log")
    assert (tb.process, tb.exc_type, tb.cut, tb.headless) == (
        "warmup",
        "AssertionError",
        False,
        False,
    )
    assert tb.message.startswith("res=<Response [503]>, res.text='<!DOCTYPE html")
    assert funcs(tb) == ["_wait_and_warmup"]


def test_dev026_cut_scheduler_traceback_after_notices():
    (tb,) = corpus("dev-026.log")
    assert (tb.process, tb.rank, tb.cut, tb.line, tb.end_line) == ("Scheduler", "TP0", True, 11, 13)
    assert funcs(tb) == ["run_scheduler_process"]


def test_dev028_header_only():
    (tb,) = corpus("dev-028.log")
    assert (tb.process, tb.rank, tb.cut, tb.frames) == ("Scheduler", "TP3", True, ())


def test_dev029_multiline_message_continuation():
    tbs, asm = assemble_file(CORPUS / "dev-029.log")
    (tb,) = tbs
    assert tb.exc_type == "ValueError"
    first, second = tb.message.split("\n")
    assert first.startswith(
        "token_to_kv_pool_allocator memory leak detected! full_available_size=6016"
    )
    assert second == "mamba_available_size=315, mamba_evi"
    assert asm.claimed() == 1
    assert tb.headless and not tb.cut
    assert funcs(tb)[-1] == "raise_error_or_warn"
    assert len(tb.frames) == 6
    assert (tb.line, tb.end_line) == (1, 15)


def test_dev034_process_header():
    (tb,) = corpus("dev-034.log")
    assert (tb.process, tb.exc_type, tb.message) == (
        "Process-6",
        "OSError",
        "[Errno 12] Cannot allocate memory",
    )
    assert funcs(tb) == ["_bootstrap", "run", "run_scheduler_process"]
    assert not tb.cut and not tb.headless


def test_dev036_caret_then_exception_then_controller_single():
    first, second = corpus("dev-036.log")
    assert (first.line, first.end_line) == (1, 2)
    assert first.headless and first.exc_type == "RuntimeError" and first.frames == ()
    assert "no kernel image is available" in first.message
    assert (second.process, second.cut, second.line, second.end_line) == (
        "ControllerSingle",
        True,
        4,
        19,
    )
    assert funcs(second)[-1] == "forward_prefill_batch"
    assert len(second.frames) == 6


def test_dev040_capture_failed_exception():
    (tb,) = corpus("dev-040.log")
    assert tb.exc_type == "Exception"
    assert tb.message.startswith(
        "Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB."
    )
    assert funcs(tb)[-1] == "__init__" and tb.frames[-1].path.endswith("cuda_graph_runner.py")
    assert len(tb.frames) == 8 and not tb.headless and not tb.cut


def test_dev042_other_rank_failed():
    (tb,) = corpus("dev-042.log")
    assert (tb.process, tb.rank, tb.exc_type) == ("Scheduler", "TP1", "ValueError")
    assert tb.message == "TP rank 1 could finish the model loading, but there are other ranks th"
    assert funcs(tb)[-1] == "load_model" and len(tb.frames) == 7


def test_dev044_exception_line_after_device_assert():
    (tb,) = corpus("dev-044.log")
    assert (tb.exc_type, tb.headless, tb.frames, tb.line) == (
        "tvm.error.InternalError",
        True,
        (),
        2,
    )
    assert "CUDA_ERROR_LAUNCH_FAILED" in tb.message


def test_dev045_double_wrapped_ray_stream():
    (tb,) = corpus("dev-045.log")
    assert (tb.process, tb.rank, tb.cut) == ("Scheduler", "TP7", True)
    assert funcs(tb) == ["run_scheduler_process", "decorate_context"]
    assert tb.ts == datetime(2025, 12, 18, 8, 24, 1)


def test_dev046_controller_single_cut():
    (tb,) = corpus("dev-046.log")
    assert (tb.process, tb.cut, tb.headless) == ("ControllerSingle", True, False)
    assert funcs(tb)[-1] == "top_k_top_p_sampling_from_probs"
    assert len(tb.frames) == 8


def test_dev050_scheduler_died_during_init():
    (tb,) = corpus("dev-050.log")
    assert tb.exc_type == "RuntimeError"
    assert tb.message.startswith("Rank 0 scheduler died during initialization (exit code: -3).")
    assert funcs(tb) == ["_launch_subprocesses", "wait_for_ready", "_wait_for_scheduler_ready"]
    assert tb.headless


@pytest.mark.parametrize(
    "name",
    [
        "dev-001.log",
        "dev-013.log",
        "dev-020.log",
        "dev-022.log",
        "dev-023.log",
        "dev-027.log",
        "dev-031.log",
        "dev-039.log",
        "dev-041.log",
        "dev-051.log",
    ],
)
def test_no_traceback_where_there_is_none(name):
    """Warnings' follow-up lines, pasted commands, tqdm bars, C++ stacks: no Python traceback."""
    assert corpus(name) == []


def _labels() -> list[tuple[str, str]]:
    out = []
    for path in sorted(CORPUS.glob("*.labels.json")):
        facts = json.loads(path.read_text(encoding="utf-8")).get("facts", {})
        if "exception_type" in facts:
            out.append((path.name.replace(".labels.json", ".log"), facts["exception_type"]))
    return out


@pytest.mark.parametrize(("name", "expected"), _labels())
def test_root_exception_matches_corpus_labels(name, expected):
    """The labels' `exception_type` is the root exception of the first traceback that shows one.
    C++ exceptions (dev-039: `c10::DistBackendError`) come from CppTerminate, not from a Traceback."""
    tbs = corpus(name)
    if "::" in expected:
        assert tbs == []
        from logparse.model.events import CppTerminate

        lines = [t for _n, t, _w in read_lines(str(CORPUS / name), ReadReport(name))]
        kinds = [get_parser(strict=True).parse(t) for t in lines]
        assert any(cls is CppTerminate and kw.get("exc_type") == expected for _e, cls, kw in kinds)
        return
    roots = [root_exception(tb)[0] for tb in tbs if root_exception(tb)[0] is not None]
    assert roots and roots[0] == expected


def test_label_list_is_complete():
    names = {n for n, _ in _labels()}
    assert {
        "dev-005.log",
        "dev-010.log",
        "dev-011.log",
        "dev-016.log",
        "dev-019.log",
        "dev-025.log",
        "dev-029.log",
        "dev-034.log",
        "dev-036.log",
        "dev-039.log",
        "dev-040.log",
        "dev-042.log",
        "dev-044.log",
        "dev-050.log",
    } <= names


# --------------------------------------------------------------------------- streams and interleaving


def test_ray_streams_interleaved_line_by_line(tmp_path):
    """Two ranks' tracebacks, interleaved line by line under Ray prefixes, stay apart."""
    log = tmp_path / "ray.log"
    a = "(SchedulerActor pid=111, ip=10.0.0.1) "
    b = "(SchedulerActor pid=222, ip=10.0.0.2) "
    log.write_text(
        "\n".join(
            [
                a
                + "[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):",
                b
                + "[2026-03-07 15:30:19 TP1] Scheduler hit an exception: Traceback (most recent call last):",
                a + '  File "/sgl/scheduler.py", line 10, in run_scheduler_process',
                b + '  File "/sgl/scheduler.py", line 20, in event_loop_normal',
                a + "    scheduler = Scheduler(",
                b + "    self.run_batch()",
                a + '  File "/sgl/model_runner.py", line 30, in load_model',
                b + "RuntimeError: CUDA error: an illegal memory access was encountered",
                a + "    raise ValueError(",
                b + "",
                a + "ValueError: bad weights",
                a + "",
                "[2026-03-07 15:30:20] Received sigquit from a child process. It usually means the child failed.",
            ]
        )
        + "\n"
    )
    tbs, asm = assemble_file(log)
    assert len(tbs) == 2
    by_rank = {tb.rank: tb for tb in tbs}
    tp0, tp1 = by_rank["TP0"], by_rank["TP1"]
    assert (tp0.exc_type, tp0.message) == ("ValueError", "bad weights")
    assert funcs(tp0) == ["run_scheduler_process", "load_model"]
    assert (tp0.line, tp0.end_line) == (1, 11)
    assert tp1.exc_type == "RuntimeError" and funcs(tp1) == ["event_loop_normal"]
    assert (tp1.line, tp1.end_line) == (2, 8)
    assert asm.claimed() == 0


def test_torch_rank_streams_interleaved():
    lines = [
        "[rank0]: Traceback (most recent call last):",
        "[rank1]: Traceback (most recent call last):",
        '[rank0]:   File "/sgl/a.py", line 1, in f',
        '[rank1]:   File "/sgl/b.py", line 2, in g',
        "[rank1]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error",
        "[rank0]: RuntimeError: boom",
    ]
    tbs, _ = assemble(lines)
    assert {(tb.rank, tb.exc_type, funcs(tb)[0]) for tb in tbs} == {
        ("rank0", "RuntimeError", "f"),
        ("rank1", "torch.distributed.DistBackendError", "g"),
    }


def test_prefixed_lines_of_other_ranks_do_not_close_the_bare_stream_record():
    lines = [
        "[2026-03-07 15:30:19 TP1] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/scheduler.py", line 10, in run_scheduler_process',
        "[2026-03-07 15:30:19 TP3] Load weight begin. avail mem=78.31 GB",
        "    scheduler = Scheduler(",
        "[2026-03-07 15:30:19 TP2] Some other process says something",
        '  File "/sgl/model_runner.py", line 30, in load_model',
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "[2026-03-07 15:30:20] Received sigquit from a child process. It usually means the child failed.",
        "Killed",
    ]
    (tb,), asm = assemble(lines)
    assert tb.rank == "TP1" and tb.exc_type == "RuntimeError"
    assert funcs(tb) == ["run_scheduler_process", "load_model"]
    assert (tb.line, tb.end_line) == (1, 7)
    assert asm.claimed() == 0


def test_prefixed_exception_line_is_a_record_of_its_own():
    lines = [
        "Traceback (most recent call last):",
        '  File "/sgl/a.py", line 1, in f',
        "[2026-03-07 15:30:19 TP3] KeyError: 'model.layers.0.k_scale'",
        "    f()",
        "ValueError: boom",
    ]
    tbs, _ = assemble(lines)
    tbs.sort(key=lambda tb: tb.line)  # the one-line record completes first
    assert [(tb.line, tb.rank, tb.exc_type, tb.headless) for tb in tbs] == [
        (1, None, "ValueError", False),
        (3, "TP3", "KeyError", True),
    ]


def test_old_prefixed_traceback_start_gives_the_rank():
    """0.3.3–0.3.6: the traceback text is the logged message: `[ts TP0] Traceback …`."""
    lines = [
        "[2024-10-08 10:00:00 TP0] Traceback (most recent call last):",
        '  File "/sgl/tp_worker.py", line 5, in exposed_step',
        "AssertionError",
        "",
    ]
    (tb,), _ = assemble(lines)
    assert (tb.rank, tb.exc_type, tb.message, tb.ts) == (
        "TP0",
        "AssertionError",
        "",
        datetime(2024, 10, 8, 10, 0, 0),
    )


# --------------------------------------------------------------------------- chains and messages


CHAINED = [
    "Traceback (most recent call last):",
    '  File "/x/config.py", line 3, in load',
    "    return json.loads(s)",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
    "Traceback (most recent call last):",
    '  File "/x/main.py", line 9, in main',
    "    load()",
    '  File "/x/config.py", line 5, in load',
    '    raise ValueError("bad config") from e',
    "ValueError: bad config",
]


def test_chained_traceback():
    (tb,), _ = assemble(CHAINED)
    assert (tb.exc_type, tb.message, tb.cut, tb.headless) == (
        "ValueError",
        "bad config",
        False,
        False,
    )
    assert tb.chain == (
        ("json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"),
    )
    assert funcs(tb) == ["load", "main", "load"]
    assert root_exception(tb) == (
        "json.decoder.JSONDecodeError",
        "Expecting value: line 1 column 1 (char 0)",
    )
    assert (tb.line, tb.end_line) == (1, 13)


def test_chain_of_three_during_handling():
    lines = [
        "Traceback (most recent call last):",
        '  File "/a.py", line 1, in a',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/b.py", line 2, in b',
        "TypeError: y",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/c.py", line 3, in c',
        "RuntimeError: z",
        "",
        "[2026-03-07 15:30:20] next record",
    ]
    (tb,), _ = assemble(lines)
    assert tb.chain == (("KeyError", "'x'"), ("TypeError", "y"))
    assert (tb.exc_type, tb.message) == ("RuntimeError", "z")
    assert root_exception(tb) == ("KeyError", "'x'")
    assert tb.end_line == 15


def test_new_traceback_after_exception_line_completes_the_previous():
    lines = [
        "Traceback (most recent call last):",
        '  File "/a.py", line 1, in a',
        "KeyError: 'x'",
        "Traceback (most recent call last):",
        '  File "/b.py", line 2, in b',
    ]
    first, second = assemble(lines)[0]
    assert (first.exc_type, first.end_line, first.cut) == ("KeyError", 3, False)
    assert (second.line, second.cut, funcs(second)) == (4, True, ["b"])


def test_capture_failed_message_continues_until_blank_line():
    """formats §5.3: `Exception: Capture cuda graph failed: {e}\\nPossible solutions:\\n1. …`."""
    lines = [
        "[2026-03-07 15:30:19 TP0] Scheduler hit an exception: Traceback (most recent call last):",
        '  File "/sgl/cuda_graph_runner.py", line 269, in __init__',
        "    raise Exception(",
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB.",
        "Possible solutions:",
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
        "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        "3. disable torch compile by not using --enable-torch-compile",
        "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)",
        "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ",
        "",
        "[2026-03-07 15:30:19] Received sigquit from a child process. It usually means the child failed.",
        "Killed",
    ]
    (tb,), asm = assemble(lines)
    parts = tb.message.split("\n")
    assert parts[0] == "Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert parts[1] == "Possible solutions:"
    assert parts[-1].startswith("Open an issue on GitHub")
    assert len(parts) == 7
    assert asm.claimed() == 6
    assert (tb.line, tb.end_line, tb.rank) == (1, 10, "TP0")


def test_continuation_stops_at_a_prefixed_line():
    lines = [
        "Traceback (most recent call last):",
        "ValueError: first line",
        "second line",
        "[2026-03-07 15:30:19 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0",
        "not part of the message",
    ]
    (tb,), asm = assemble(lines)
    assert tb.message == "first line\nsecond line"
    assert asm.claimed() == 1


def test_prefill_oom_continuation_includes_known_try_allocate_line():
    lines = [
        "Traceback (most recent call last):",
        '  File "/sgl/schedule_batch.py", line 100, in alloc_token_slots',
        "RuntimeError: Prefill out of memory. Try to lower your batch size.",
        "Try to allocate 8192 tokens.",
        "Available tokens: 0",
        "",
    ]
    (tb,), asm = assemble(lines)
    assert tb.message.split("\n") == [
        "Prefill out of memory. Try to lower your batch size.",
        "Try to allocate 8192 tokens.",
        "Available tokens: 0",
    ]
    assert asm.claimed() == 1  # only the Unparsed line counts


def test_continuation_is_capped():
    lines = ["Traceback (most recent call last):", "ValueError: x"]
    lines += [f"continuation {i}" for i in range(MAX_CONTINUATION_LINES + 10)]
    (tb,), asm = assemble(lines)
    assert len(tb.message.split("\n")) == MAX_CONTINUATION_LINES + 1
    assert asm.claimed() == MAX_CONTINUATION_LINES


# --------------------------------------------------------------------------- tentative and odd records


def test_indented_lines_alone_are_not_a_traceback():
    lines = [
        "/usr/local/lib/python3.12/dist-packages/sglang/launch_server.py:71: UserWarning: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
        "  Example: sglang serve --model-path <model> [options]",
        "  warnings.warn(",
        "    some indented text",
        "    more indented text",
        "[2026-03-07 15:30:19] Load weight begin. avail mem=78.31 GB",
        "    trailing indented text",
    ]
    tbs, asm = assemble(lines)
    assert tbs == [] and asm.pending() == 0


def test_warning_followup_then_exception_does_not_start_at_the_warning():
    lines = [
        "/x/a.py:1: UserWarning: careful",
        "  warnings.warn(",
        "KeyError: 'x'",
    ]
    (tb,), _ = assemble(lines)
    assert (tb.line, tb.end_line, tb.exc_type) == (3, 3, "KeyError")


def test_chain_marker_first_opens_a_headless_record():
    lines = [
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/a.py", line 1, in a',
        "RuntimeError: z",
    ]
    (tb,), _ = assemble(lines)
    assert (tb.headless, tb.chain, tb.exc_type, tb.line) == (True, (), "RuntimeError", 1)


def test_frame_after_blank_after_exception_is_a_new_headless_record():
    lines = [
        "ValueError: a",
        "",
        '  File "/b.py", line 2, in b',
        "TypeError: b",
    ]
    first, second = assemble(lines)[0]
    assert (first.exc_type, first.frames) == ("ValueError", ())
    assert (second.exc_type, second.headless, funcs(second)) == ("TypeError", True, ["b"])


def test_faulthandler_dump():
    lines = [
        "Fatal Python error: Segmentation fault",
        "",
        "Thread 0x00007f3a2bfff640 (most recent call first):",
        '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
        '  File "/usr/lib/python3.10/threading.py", line 607 in wait',
        "",
        "Current thread 0x00007f3a2cfff640 (most recent call first):",
        '  File "/sgl/scheduler.py", line 1105 in event_loop_normal',
        "",
        "Extension modules: numpy.core._multiarray_umath (total: 1)",
        "Segmentation fault (core dumped)",
    ]
    tbs, _ = assemble(lines)
    assert [(tb.process, tb.cut, tb.exc_type, funcs(tb), tb.line) for tb in tbs] == [
        ("faulthandler", False, None, ["wait", "wait"], 3),
        ("faulthandler", False, None, ["event_loop_normal"], 7),
    ]


def test_faulthandler_frames_are_outermost_first_like_a_traceback():
    """faulthandler prints the crashing frame first; the Traceback keeps Python's order (outermost
    first), so its last frame is where the thread was when the signal arrived."""
    lines = [
        "Fatal Python error: Segmentation fault",
        "",
        "Current thread 0x00007f4858f86740 (most recent call first):",
        '  File "/sgl/srt/distributed/device_communicators/pynccl_wrapper.py", line 351 in ncclCommInitRank',
        '  File "/sgl/srt/distributed/device_communicators/pynccl.py", line 108 in __init__',
        '  File "/sgl/srt/model_executor/model_runner.py", line 253 in init_torch_distributed',
    ]
    (tb,), _ = assemble(lines)
    assert funcs(tb) == ["init_torch_distributed", "__init__", "ncclCommInitRank"]
    # A Python traceback keeps the order it was printed in.
    (py,), _ = assemble(["Traceback (most recent call last):", '  File "/a.py", line 1, in outer',
                         '  File "/b.py", line 2, in inner', "ValueError: x"])
    assert funcs(py) == ["outer", "inner"]


def test_record_completes_as_soon_as_known():
    """feed() returns a traceback when the next line of its stream proves it complete."""
    asm = TracebackAssembler("x.log")
    assert _feed(asm, 1, "", "Traceback (most recent call last):") == []
    assert _feed(asm, 2, "", "ValueError: x") == []
    assert _feed(asm, 3, "", "") == []
    assert _feed(asm, 4, "other", "Killed") == []  # another stream: no effect
    (tb,) = _feed(asm, 5, "", "Killed")
    assert (tb.exc_type, tb.end_line) == ("ValueError", 2)
    assert asm.pending() == 0 and asm.finish() == []


def test_open_records_are_bounded_by_streams():
    asm = TracebackAssembler("x.log")
    for i in range(1000):
        _feed(asm, 3 * i + 1, "", "Traceback (most recent call last):")
        _feed(asm, 3 * i + 2, "", '  File "/a.py", line 1, in a')
        _feed(asm, 3 * i + 3, "", "ValueError: x")
        assert asm.pending() == 1
    assert len(asm.finish()) == 1


def test_enveloped_is_inferred_from_ts_and_rank_when_not_given():
    """Without `enveloped`, a line with a timestamp or an SGLang rank is taken as enveloped; a
    `[rankN]: ` torch prefix is not."""
    from logparse.model.events import ExceptionLine, TracebackFrame, TracebackStart

    asm = TracebackAssembler("x.log")
    ts = datetime(2026, 3, 7, 15, 30, 19)
    asm.feed(
        1,
        "rank:0",
        "rank0",
        None,
        TracebackStart,
        {},
        "[rank0]: Traceback (most recent call last):",
    )
    asm.feed(
        2, "rank:0", "rank0", None, TracebackFrame, {"path": "/a.py", "lineno": 1, "func": "f"}, ""
    )
    (single,) = asm.feed(
        3, "", "TP3", ts, ExceptionLine, {"exc_type": "KeyError", "message": "'k'"}, ""
    )
    assert (single.rank, single.exc_type, single.headless) == ("TP3", "KeyError", True)
    asm.feed(
        4, "rank:0", "rank0", None, ExceptionLine, {"exc_type": "RuntimeError", "message": "x"}, ""
    )
    (tb,) = asm.finish()
    assert (tb.rank, tb.exc_type, len(tb.frames)) == ("rank0", "RuntimeError", 1)
