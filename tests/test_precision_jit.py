"""Precision of jit-compile-stall: an unfinished JIT compile is a stall only when the log shows
time passing after it (a long gap, a watchdog), not when the excerpt simply stops during the
compile's own progress or moves on at once."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import analyze_text

_PRECOMPILE = (
    "[2025-06-05 08:20:08 DP0 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time "
    "(typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is recommended to run "
    "`sglang.compile_deep_gemm` with same args as `sglang.launch_server` for pre-compilation to reduce the "
    "overhead if you have not run it before. For example: `python3 -m sglang.compile_deep_gemm --model-path "
    "deepseek-ai/DeepSeek-V3 --tp 8 --trust-remote-code`\n"
    "[2025-06-05 08:20:08 DP0 TP0] Try DeepGEMM JIT Compiling for <gemm_fp8_fp8_bf16_nt> N=12288, K=1536, "
    "num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have run "
    "`python3 -m sglang.compile_deep_gemm`. \n"
)
_FLASHINFER = "2025-03-03 18:46:45,{ms:03d} - INFO - flashinfer.jit: Loading JIT ops: batch_decode_with_kv_cache_head_dim_256\n"


def _jit(tmp_path: Path, text: str) -> bool:
    return "jit-compile-stall" in analyze_text(tmp_path, text).fired()


def test_a_precompile_cut_after_its_own_bar_is_no_stall(tmp_path: Path) -> None:
    bars = "100%|██████████████████████████████| 33/33 [00:00<00:00, 3853.51it/s]\n"
    assert not _jit(tmp_path, _PRECOMPILE + bars)


def test_a_precompile_followed_only_by_unread_text_is_no_stall(tmp_path: Path) -> None:
    assert not _jit(tmp_path, _PRECOMPILE + "[2025-06-05 08:20:08 DP0 TP0] [_compile_deep_gemm_one_type_all]\n")


def test_the_same_op_loaded_by_several_ranks_at_once_is_no_stall(tmp_path: Path) -> None:
    text = "".join(_FLASHINFER.format(ms=ms) for ms in (39, 58, 61, 69)) + "2025-03-03 18:46:45,075 - INFO - flashin"
    assert not _jit(tmp_path, text)


def test_a_precompile_followed_by_a_long_silence_is_still_a_stall(tmp_path: Path) -> None:
    later = "[2025-06-05 08:24:48 DP0 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=10.21 GB\n"
    assert _jit(tmp_path, _PRECOMPILE + later)


def test_an_unfinished_op_load_then_a_watchdog_is_still_a_stall(tmp_path: Path) -> None:
    text = (_FLASHINFER.format(ms=39) + "[2025-03-03 18:51:45 TP0] Watchdog timeout (self.watchdog_timeout=300)\n")
    assert _jit(tmp_path, text)


def test_a_precompile_cut_after_a_batch_ran_is_still_a_stall(tmp_path: Path) -> None:
    # Once a batch ran, the compile is on the request path: the cut log shows a request waiting on it.
    prefill = ("[2025-06-05 08:20:07 DP0 TP0] Prefill batch, #new-seq: 1, #new-token: 6, #cached-token: 0, "
               "token usage: 0.00, #running-req: 0, #queue-req: 0, \n")
    assert _jit(tmp_path, prefill + _PRECOMPILE)
