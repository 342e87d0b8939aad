"""Python faulthandler dumps (`Fatal Python error: …` + `Current thread 0x… (most recent call first):`
+ `File "…", line N in func` frames, most recent call first): a native crash inside the NCCL binding
is an NCCL error; a dump that names no process and no place is no scheduler crash."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

REPO = Path(__file__).resolve().parents[1]
PYNCCL = "/usr/lib/python3.11/site-packages/sglang/srt/distributed/device_communicators"

# fixtures/rules/nccl-error/bad-4.log (dev case g-035): a segfault in ncclCommInitRank on a vGPU.
_NCCL_INIT_DUMP = f"""Fatal Python error: Segmentation fault

Current thread 0x00007f4858f86740 (most recent call first):
  File "{PYNCCL}/pynccl_wrapper.py", line 351 in ncclCommInitRank
  File "{PYNCCL}/pynccl.py", line 108 in __init__
  File "/usr/lib/python3.11/site-packages/sglang/srt/distributed/parallel_state.py", line 233 in __init__
  File "/usr/lib/python3.11/site-packages/sglang/srt/model_executor/model_runner.py", line 253 in init_torch_distributed
"""


def _run(tmp_path: Path, text: str) -> tuple[set[str], str | None]:
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    a = analyze(str(p))
    assert not a.rule_errors, a.rule_errors
    root = a.root_cause
    return a.fired(), (root.name if root is not None else None)


def test_segfault_in_nccl_comm_init_is_nccl_error(tmp_path: Path) -> None:
    fired, root = _run(tmp_path, _NCCL_INIT_DUMP)
    assert root == "nccl-error"
    assert "scheduler-crash" not in fired


def test_the_real_dump_with_another_threads_tail_before_it(tmp_path: Path) -> None:
    # The dev case starts with the last two frames of another thread's listing (header cut off).
    fired, root = _run(tmp_path, (REPO / "fixtures/rules/nccl-error/bad-4.log").read_text(encoding="utf-8"))
    assert root == "nccl-error"
    assert "scheduler-crash" not in fired


def test_near_miss_dump_innermost_outside_the_binding(tmp_path: Path) -> None:
    # Innermost frame is pynccl.py's own Python, not an NCCL call: a native crash, not NCCL's.
    text = _NCCL_INIT_DUMP.replace(f'  File "{PYNCCL}/pynccl_wrapper.py", line 351 in ncclCommInitRank\n', "")
    fired, _ = _run(tmp_path, text)
    assert "nccl-error" not in fired


def test_near_miss_python_traceback_through_the_binding_is_not_a_native_crash(tmp_path: Path) -> None:
    # Outermost-first Python traceback, cut: the binding frame is innermost (last), no dump.
    text = ("Traceback (most recent call last):\n"
            f'  File "{PYNCCL}/pynccl.py", line 108, in __init__\n'
            f'  File "{PYNCCL}/pynccl_wrapper.py", line 351, in ncclCommInitRank\n')
    fired, _ = _run(tmp_path, text)
    assert "nccl-error" not in fired


def test_dump_header_cut_before_any_frame_names_nothing(tmp_path: Path) -> None:
    text = ("Fatal Python error: Segmentation fault\n\n"
            "Current thread 0x0000763bcdcde1c0 (most recent call first):\n"
            '  File "/home/ub\n')
    fired, root = _run(tmp_path, text)
    assert root is None and "scheduler-crash" not in fired


def test_near_miss_cut_import_traceback_ending_in_module_is_still_a_crash(tmp_path: Path) -> None:
    # A headless Python traceback whose innermost frame is an imported module's `<module>`: outermost
    # first as always (the module has a file path), so it is not a thread dump's tail.
    text = ('  File "<frozen importlib._bootstrap>", line 241, in _call_with_frames_removed\n'
            '  File "/usr/lib/python3.11/site-packages/sglang/srt/layers/quantization/fp8.py", line 12, in <module>\n'
            "    from sgl_kernel import fp8_scaled_mm\n")
    fired, _ = _run(tmp_path, text)
    assert "scheduler-crash" in fired


def test_double_spaced_dump_stays_one_thread_listing(tmp_path: Path) -> None:
    # A double-spaced paste: a blank after every line, three where the dump had one.
    text = (REPO / "fixtures/rules/nccl-error/bad-4.log").read_text(encoding="utf-8")
    spaced = "".join(line + "\n\n" for line in text.splitlines())
    fired, root = _run(tmp_path, spaced)
    assert root == "nccl-error"
    assert "scheduler-crash" not in fired
