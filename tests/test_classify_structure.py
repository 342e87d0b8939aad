"""Structural classes of unparsed lines (parsing/classify.py): each class takes the lines of its
shape, whoever printed them, and leaves its near misses (lines that look alike but are messages,
exceptions or prose) unclassified."""

from __future__ import annotations

import pytest

from logparse.parsing.classify import classify

# (line, kind): shapes seen in the shared and dev corpora, and the same shape from other programs.
CLASSIFIED = [
    # Python's warnings format, any category, any file
    ("/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:61: FutureWarning: The pynvml package is deprecated.",
     "python-warning"),
    ("<frozen importlib._bootstrap>:241: DeprecationWarning: builtin type SwigPyPacked has no __module__ attribute",
     "python-warning"),
    ("C:\\work\\x.py:3: UserWarning: something", "python-warning"),
    # tqdm bars with and without the bar characters, the rate, or cut after the bar
    ("Loading safetensors checkpoint shards: 100% 4/4 [00:03<00:00,  1.10it/s]", "progress-bar"),
    ("Capturing batches (bs=1 avail_mem=2.10 GB): 100%|██████████| 35/35 [00:05<00:00,  6.21it/s]", "progress-bar"),
    ("[AutoTuner]: Tuning trtllm_batch_decode_mla:   0%|          ", "progress-bar"),
    ("Fetching 5 files: 100%|██████████| 5/5 [00:00<00:00, 12.3it/s]", "progress-bar"),
    ("model.safetensors:  42%|████▏     | 2.10G/5.00G [00:10<00:14, 205MB/s]", "progress-bar"),
    ("  7%|▋         | 7/100 [00:01<00:15,", "progress-bar"),
    ("100%|██████████| 3/3", "progress-bar"),
    # test runners
    ("test/srt/test_eagle.py::TestEagle::test_gsm8k PASSED                [ 50%]", "test-runner"),
    ("FAILED test/srt/test_eagle.py::TestEagle::test_gsm8k - AssertionError: 0.1 < 0.5", "test-runner"),
    ("=========================== short test summary info ============================", "test-runner"),
    ("========== 1 failed, 3 passed, 2 warnings in 312.41s (0:05:12) ==========", "test-runner"),
    ("collected 4 items", "test-runner"),
    ("Ran 3 tests in 152.322s", "test-runner"),
    ("FAILED (failures=1, errors=2)", "test-runner"),
    ("test_mmlu (__main__.TestEvalAccuracyLarge.test_mmlu) ... ok", "test-runner"),
    # other loggers' envelopes
    ("sglang_rollout.py:402 - Finish rollout: ['x'], label: 30, reward: 0.05", "foreign-logger"),
    ("2025-04-03 12:06:29,258 - __main__ - INFO - Starting benchmark", "foreign-logger"),
    ("2025-04-03 12:06:29,258 - __main__ - INFO -", "foreign-logger"),
    ("2025-12-10 05:50:30 NIXL INFO    _api.py:361 Backend UCX was instantiated", "foreign-logger"),
    ("INFO [sglang_router.launch_router] Starting router on 0.0.0.0:30000", "foreign-logger"),
    ("2025-03-01 10:12:44.512 | INFO     | __main__:main:42 - Loaded 3 prompts", "foreign-logger"),
    ("2025-03-01 10:12:44 | ERROR | stderr |", "foreign-logger"),
    ("[1784273406.684686] [iv-host:994396:0]      ib_mlx5_dv.c:452  UCX  ERROR   mlx5dv_devx_obj_create(CQ) failed",
     "foreign-logger"),
    ("[ubuntu-GPU-L40S-4802111:12796:1:13303] Caught signal 11 (Segmentation fault: invalid permissions)",
     "foreign-logger"),
    ('127.0.0.1:39394 - "POST /v1/chat/completions HTTP/1.1" 200 OK', "foreign-logger"),
    ('127.0.0.1 [28/May/2025:09:43:43 +0000] "GET /route?engine_rank=0 HTTP/1.1" 200 262 "-" "python-requests/2.32.3"',
     "foreign-logger"),
    ("[bt] (1) /home/u/StepMesh/fserver_lib.cpython-312-x86_64-linux-gnu.so(+0x5af51) [0x7fbad65e0f51]", "foreign-logger"),
    (" 3  /usr/lib/x86_64-linux-gnu/libc.so.6(+0x1a07cd) [0x7fc0957437cd]", "foreign-logger"),
    ("WARNING: Logging before InitGoogleLogging() is written to STDERR", "foreign-logger"),
    # settings printed one per line, `pip list` rows
    ("quant_config: AWQConfig(weight_bits=4, group_size=128, zero_point=True)", "config-dump"),
    ("self.tree_cache.evictable_size()=0", "config-dump"),
    ("mamba_available_size=315, mamba_evictable_size=0", "config-dump"),
    ("command=python3 -m sglang.launch_server --model-path meta-llama/Llama-3.2-1B-Instruct --port 8000", "config-dump"),
    ("sgl-kernel                        0.1.7", "config-dump"),
    ("max_model_len: 32768", "config-dump"),
    # fixed runtime text and tool output
    ("/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel:", "library-text"),
    ("block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.",
     "library-text"),
    (("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [5,0,0], thread: [64,0,0] Assertion "
     "`-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed."), "library-text"),
    ("Error in sys.excepthook:", "library-text"),
    ("Original exception was:", "library-text"),
    ("^CProcess Process-2:", "library-text"),
    ("Process SpawnProcess-1:", "library-text"),
    ("[1] 3188749", "shell-output"),
    ("[1]+  Killed                  python3 -m sglang.launch_server --model-path x", "shell-output"),
    ("Process 10366: sglang::data_parallel_controller", "shell-output"),
    ("Python v3.12.3 (/usr/bin/python3.12)", "shell-output"),
    ('Thread 13170 (idle): "Thread-1 (_watchdog_thread)"', "shell-output"),
    # py-spy's frames, as it indents them and as a paste that stripped indentation leaves them
    ("    poll (multiprocessing/popen_fork.py:27)", "shell-output"),
    ("run_data_parallel_controller_process (data_parallel_controller.py:614)", "shell-output"),
    ("wait4 (libc.so.6)", "shell-output"),
    ("<module> (<string>:1)", "shell-output"),
]

# Lines of a similar look that are messages, exceptions or prose: no class takes them.
NEAR_MISSES = [
    # a call in prose or a message naming a file, not one frame alone on its line
    "Loaded weights (model.py:12) in 3.1 s",
    "wait (see below)",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "ValueError: max_model_len=4096 is larger than the model's context length",
    "AssertionError: x=3",
    "note: see above for the error",
    "the answer: 42",
    "Before this PR：",
    "We are 50% done with the migration",
    "Throughput dropped 50% after the upgrade",
    "error: something broke",
    "Loaded 3 files in 2.1s",
    "see scheduler.py:402 for details",
    "2025-04-03 12:06:29 the server restarted",
    "2025-04-03 12:06:29 | the table column",
    "Memory: 12 GB",
    "Model path is /models/llama",
    "tests passed on my machine",
    "OK so the server did not start",
    "sglang 0.5.2",
    "The warning says: deprecated",
    "torch/cuda/__init__.py is where it fails",
    "FAILED to launch the server",
    "ormers==4.57.1 as a workaround.",  # a cut line, not `name=value`
    "Process finished with exit code 1",
    "Thread 3 crashed while loading",
    "see kernel.cu:12 for the failing line",
]


@pytest.mark.parametrize(("line", "kind"), CLASSIFIED)
def test_structural_class(line: str, kind: str) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_not_classified_by_structure(line: str) -> None:
    # A near miss may still be a known message of some program's source, but never one of the
    # structural kinds.
    assert classify(line) not in {"python-warning", "progress-bar", "test-runner", "foreign-logger", "config-dump",
                                  "shell-output", "library-text"}
