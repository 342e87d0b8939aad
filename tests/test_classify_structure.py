"""Structural classes of unparsed lines (parsing/classify.py): each class takes the lines of its
shape, whoever printed them, and leaves its near misses (lines that look alike but are messages,
exceptions or prose) unclassified."""

from __future__ import annotations

import pytest

import logparse.parsing.classify as classify_module
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
    # native struct dumps: DeepGEMM's TMA descriptor, and any printf dump of numbers in a column
    ("format         9", "field-dump"),
    ("gmem_address   0xd86cd7000", "field-dump"),
    ("globalDim      (128,1,8,282843,1)", "field-dump"),
    ("l2Promotion    2", "field-dump"),
    ("TMA Desc Addr:   0xfffe8d7f6a80", "field-dump"),
    ("num_blocks  [4, 8, 16]", "field-dump"),
    ("Max Threads Per Block:   1024", "field-dump"),
    ("strides: [0, 1], [4096, 1], [1, 4096]", "field-dump"),
    ("dtypes: torch.bfloat16, torch.float8_e4m3fn", "field-dump"),
    # environment reports and a cut repr of settings
    ("get env HOSTNAME = hostname-npich.foreman.pxe", "config-dump"),
    ("get env ASCEND_RT_VISIBLE_DEVICES = 0,1,2,3", "config-dump"),
    ("_attention=False, enable_ep_moe=False, enable_torch_compile=False, torch_compile_max_bs=32)", "config-dump"),
    (", tokenizer_mode='auto', load_format='auto', trust_remote_code=True, dtype='auto', skip_tokeniz", "config-dump"),
    # other programs' envelopes and fixed lines
    ("[INFO:swift] Setting ROOT_IMAGE_DIR: None.", "foreign-logger"),
    ("[WARNING:modelscope] Using branch: master", "foreign-logger"),
    ("W0826 10:15:20.116000 768593 site-packages/torch/utils/cpp_extension.py:2425] TORCH_CUDA_ARCH_LIST is not set",
     "foreign-logger"),
    ("[bt] (2) /home/u/fserver_lib.cpython-312-x86_64-linux-gnu.so(ps::RDMAVan::PollEvents()+0x946) [0x7fbad664d926]",
     "foreign-logger"),
    ("Warning: WARNING: destroy_process_group() was not called before program exit (function operator())",
     "foreign-logger"),
    ("Warning: Cannot set number of intraop threads after parallel work has started (function set_num_threads)",
     "foreign-logger"),
    ("Starting new HTTP connection (1): 172.16.37.200:3138", "foreign-logger"),
    ("Starting new HTTPS connection (2): huggingface.co:443", "foreign-logger"),
    ('https://huggingface.co:443 "HEAD /Qwen/Qwen3-8B/resolve/main/config.json HTTP/1.1" 200 0', "foreign-logger"),
    ("Extension modules: numpy.core._multiarray_umath, numpy.linalg._umath_linalg, torch._C, ", "library-text"),
    ("sentencepiece._sentencepiece, regex._regex (total: 50)", "library-text"),
    # echoed commands, quoted source, viewer ids, elisions
    ("LLM_MODEL=openai/gpt-oss-20b TP=1 modal run src/app.py::main --task benchmark", "shell-command"),
    ("HF_HUB_OFFLINE=1 NCCL_DEBUG=INFO torchrun --nproc-per-node 2 train.py", "shell-command"),
    ("$python ./sgl-kernel/tests/test_per_token_quant_fp8.py", "shell-command"),
    ("$ bash scripts/run.sh", "shell-command"),
    ("if self.sampling_params.max_new_tokens > 0:", "python-source"),
    ("for req in self.running_batch.reqs:", "python-source"),
    ("def forward(self, input_ids: torch.Tensor) -> torch.Tensor:", "python-source"),
    ("2855e530…vdumckda", "viewer-metadata"),
    ("...", "markdown"),
    ("......", "markdown"),
    ("... (repeats for ~10 minutes)", "markdown"),
    # envelopes and fixed texts cut short
    ("I0820 0", "cut-line"),
    ("I0421 09:34:39.701891  4670 rd", "cut-line"),
    ("[Router (R", "cut-line"),
    ("2025-07-", "cut-line"),
    ("2026-03-18 05:25:02", "cut-line"),
    ("2024-03-03 15:15:25 | INF", "cut-line"),
    ("2025-10-07 23:32:33  INFO sglang_rou", "cut-line"),
    ("bm-220ab4v:183:183 [4] NCCL INF", "cut-line"),
    ('INFO:     172.21.0.7:59180 - "PO', "cut-line"),
    ("WARNING: Logging before InitGoogleLogging() is written to STD", "cut-line"),
    ("The above exception was the direct cause of th", "cut-line"),
    ("During handling of the above exc", "cut-line"),
    ('.../sglang/python/sglang/srt/speculative/eagle_info.py", line 781, in merge_batch', "cut-line"),
    ("[Rank7]:[T506 14:16:14.488415041 ProcessGroup", "cut-line"),
    (" 7  /usr/local/lib/python", "cut-line"),
    # a mapping left open by a raw newline in a value; section headers; titles before a block
    ("{'supported': False, 'help_output': 'Traceback (most recent call last):", "data"),
    ("[sglang]", "config-dump"),
    ("[tool.setuptools.packages.find]", "config-dump"),
    ("GPU Info:", "heading"),
    ("Sampling params:", "heading"),
    ("NVIDIA Topology:", "heading"),
    # environment reports: SGLang's check_env, torch's collect_env, and what they run
    ("Python: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0]", "config-dump"),
    ("CUDA available: True", "config-dump"),
    ("GPU 0,1,2,3,4,5,6,7: NVIDIA H100 80GB HBM3", "config-dump"),
    ("GPU 0,1 Compute Capability: 9.0", "config-dump"),
    ("CUDA_HOME: /usr/local/cuda", "config-dump"),
    ("NVCC: Cuda compilation tools, release 12.4, V12.4.131", "config-dump"),
    ("PyTorch: 2.5.1+cu124", "config-dump"),
    ("sglang: 0.4.1.post4", "config-dump"),
    ("decord: Module Not Found", "config-dump"),
    ("ulimit soft: 1048576", "config-dump"),
    ("OS: Ubuntu 22.04.4 LTS (x86_64)", "config-dump"),
    ("Is CUDA available: True", "config-dump"),
    ("cuDNN version: Could not collect", "config-dump"),
    ("[pip3] numpy==1.26.4", "pip"),
    ("[conda] torch                     2.5.1                    pypi_0    pypi", "pip"),
    ("torch==2.5.1", "pip"),
    ("sglang @ file:///sgl-workspace/sglang/python", "pip"),
    ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID", "shell-output"),
    # Ray's logger (tab after the time, ` file.py:N -- `): ray-project/ray#16979 and ray-project/ray#40850, verbatim
    ("2021-07-14 13:21:23,367\tINFO services.py:1274 -- View the Ray dashboard at http://127.0.0.1:8265",
     "foreign-logger"),
    ("2023-11-01 09:30:02,719 INFO worker.py:1458 -- Connecting to existing Ray cluster at address: 192.168.0.107:6379...",
     "foreign-logger"),
    # `%(asctime)s %(levelname)s %(message)s`: supervisord in JPCERTCC/LogonTracer#110, verbatim
    ("2021-04-13 12:14:29,855 INFO success: logontracer entered RUNNING state, process has stayed up for > than 1 "
     "seconds (startsecs)", "foreign-logger"),
    ("2021-04-13 12:14:31,453 INFO spawned: 'logontracer' with pid 1043", "foreign-logger"),
    # TensorFlow's / XLA's C++ log and TF's advice line: ray-project/ray#40758, tensorflow/tensorflow#56561,
    # jax-ml/jax#4754, google/deepvariant#631, verbatim
    ("2023-10-31 10:09:35.485444: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could "
     "not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such "
     "file or directory; LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64", "foreign-logger"),
    ("2022-06-24 10:17:54.733536: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary is "
     "optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in "
     "performance-critical operations:  AVX2 FMA", "foreign-logger"),
    ("2020-11-02 15:21:09.722910: I external/org_tensorflow/tensorflow/compiler/xla/service/service.cc:168] XLA "
     "service 0x5584db0a9600 initialized for platform Interpreter (this does not guarantee that XLA will be used). "
     "Devices:", "foreign-logger"),
    ("To enable them in other operations, rebuild TensorFlow with the appropriate compiler flags.", "library-text"),
    ("  To enable them in other operations, rebuild TensorFlow with the appropriate compiler flags.", "library-text"),
    # rocm-smi --showtopo's matrix rows: sgl-project/sglang#38849 (check_env's `AMD Topology:`, MI300X)
    # and ROCm/rocm_smi_lib#108 (weight and link-type matrices), verbatim
    ("GPU0   0            XGMI         XGMI         XGMI         XGMI         XGMI         XGMI         XGMI",
     "shell-output"),
    ("GPU0   0            52           52           52           ", "shell-output"),
    ("GPU1   PCIE         0            PCIE         PCIE         ", "shell-output"),
    ("GPU0\t X \tNV18\t0-95,192-287\t0\t\tN/A", "shell-output"),
    ("  NV#  = Connection traversing a bonded set of # NVLinks", "shell-output"),
    ("real\t0m12.345s", "shell-output"),
    ("Wed Dec  2 13:39:13 UTC 2026", "shell-output"),
    # JSON as curl prints it and as a paste pretty-prints it
    ('{"id":"cmpl-8a7b","object":"chat.completion","created":1735000000}', "data"),
    ('  "max_tokens": 128,', "data"),
    ('  "messages": [', "data"),
    ("},", "data"),
    # commands with a prompt or bare, the interpreter's input, Rust's panic advice
    ("root@node-1:/workspace# nvidia-smi", "shell-command"),
    ("(sglang) user@gpu-box:~/src$ python3 bench.py --num-prompts 10", "shell-command"),
    ('curl http://localhost:30000/v1/chat/completions -H "Content-Type: application/json"', "shell-command"),
    ("docker run --gpus all --shm-size 32g lmsysorg/sglang:latest", "shell-command"),
    (">>> import sglang as sgl", "python-source"),
    ("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", "library-text"),
    # abseil's signal handler frames, NCCL's banner, torch's C++ prefix with a path (info/warning)
    ("PC: @     0x7f4b3ffff640  (unknown)  (unknown)", "foreign-logger"),
    ("    @     0x7f4b3ffff640       1008  (unknown)", "foreign-logger"),
    ("NCCL version 2.21.5+cuda12.4", "foreign-logger"),
    ("[W1203 10:00:00.123456 123 torch/csrc/distributed/c10d/socket.cpp:752] [c10d] The client socket has failed",
     "foreign-logger"),
    # shell traces and job reports, multi-file tails, docker compose, pip's retries
    ("+ python3 -m sglang.launch_server --model-path x", "shell-command"),
    ("++ hostname", "shell-command"),
    ("zsh: killed     python3 -m sglang.launch_server", "shell-output"),
    ("==> sglang.log <==", "shell-output"),
    ("Attaching to sglang-1, router-1", "shell-output"),
    ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken",
     "pip"),
    # a known message cut after its head, alone or after uvicorn's level column
    ("INFO:     Uvicorn running on http://0.0.0.0:9254 (Press CTRL+C to qui", "cut-line"),
    ("Load weight end. type=LlamaForCausalLM, dtype=torch.bfl", "cut-line"),
    # RL trainers' and build tools' output around a server: wandb, DeepSpeed, verl's metrics, pprint'd
    # members, Rust backtraces, ninja's steps and nvcc's warnings in a JIT build
    ("wandb: Tracking run with wandb version 0.19.1", "foreign-logger"),
    ("[2025-01-01 00:00:00,123] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda",
     "foreign-logger"),
    ("step:1 - actor/entropy:0.52 - critic/score/mean:0.1 - timing_s/gen:12.5", "data"),
    ("  'model_path': '/models/x',", "data"),
    ("  12: tokio::runtime::task::harness::poll", "foreign-logger"),
    ("             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:665:5",
     "foreign-logger"),
    ("[3/12] /usr/local/cuda/bin/nvcc --generate-dependencies-with-compile -c x.cu -o x.o", "shell-output"),
    ("[1/2] c++ -MMD -MF x.o.d -c x.cpp", "shell-output"),
    ('/x/include/a.cuh(120): warning #177-D: variable "y" was declared but never referenced', "library-text"),
    ('Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"', "library-text"),
    ("[INFO] ASCENDCL(12345,python):2025-01-01-00:00:00.000.000 [acl.cpp:12]12345 aclInit start", "foreign-logger"),
    ("Task exception was never retrieved", "library-text"),
    ("future: <Task finished name='Task-3' coro=<TokenizerManager.handle_loop() done> exception=RuntimeError('x')>",
     "library-text"),
    ("Testing model: THUDM/glm-4-9b-chat", "config-dump"),
    ("Throughput: 12577.550785919339 tokens/s", "config-dump"),
    ("Output token throughput: 481.95 tok/s", "config-dump"),
    ("ray::SGLangEngine.init()", "library-text"),
    ("ray::RolloutWorker.generate() (pid=1234, ip=10.0.0.1, actor_id=abc, repr=<x>)", "library-text"),
    # the cut tail of a known template (SGLang's `… avail mem={} GB`, transformers' RoPE warning)
    ("vail mem=24.47 GB", "cut-line"),
    ("ormers==4.57.1 as a workaround.", "cut-line"),
]

# Lines of a similar look that are messages, exceptions or prose: no class takes them.
NEAR_MISSES = [
    # a number after an error word is a status, not a field (DeepGEMM's own message: a template)
    "Error: Failed to initialize the TMA descriptor 801",
    # a call in prose or a message naming a file, not one frame alone on its line
    "Loaded weights (model.py:12) in 3.1 s",
    "wait (see below)",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "ValueError: max_model_len=4096 is larger than the model's context length",
    "AssertionError: x=3",
    "note: see above for the error",
    "the answer: 42",
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

# Near misses of the later classes (field dumps, echoed commands, quoted source, cut envelopes and
# tails): none of these is any known kind.
UNCLASSIFIED = [
    # a number after an error word is a status, not a field; words after a field name are prose
    "error 700",
    "exit 1",
    "step 5 of 10",
    "dim mismatch: 4 vs 5",
    "TMA Desc Addr: see above",
    "strides: unknown",
    # prose after `$` or an assignment, prose ending in a colon
    "$ is the prompt here",
    "DEBUG=1 means verbose output",
    "if the server fails, try this:",
    "with the following error:",
    "see the error below for more details:",
    # an ellipsis in prose, not an id; a list of names that is no module list
    "loading...done",
    "a, b, c (total: 3)",
    "... and then it crashed",
    # an error line of an envelope's shape is not the envelope cut
    "I0820",
    "2025 was the year",
    "INFO: server started",
    "Starting new HTTP connection (1): host:1 failed because of a timeout",
    "RuntimeError: x (function foo)",
    "ValueError: a=1, b=2, c=3, d=4",
    "the values a=1, b=2, c=3 are wrong",
    # a title naming a failure is the failure's header, not a heading; a scrap of a mapping
    "Scheduler hit an exception:",
    "Before this PR：",  # a person's title in the report (test_paste_shapes keeps it a gap)
    "Fatal error:",
    "Watchdog timeout:",
    "{'a': 1, 'b",
    "[sglang] server crashed",
    # a report's shape carrying an error, a value that is prose, a command word in prose
    "RuntimeError: CUDA 12.4 is not supported",
    "sglang: 0.4.1 crashes on start",
    "Status: the server is down",
    '"error": "CUDA out of memory"',
    '{"object":"error","message":"The model does not exist."}',
    "see --help for details",
    "curl failed with an error",
    "thread 'main' panicked at src/main.rs:10:5:",
    # the crash line itself and a torch C++ error stay visible; prose that starts like a trace or a frame
    "*** SIGSEGV received at time=1735000000 on cpu 12 ***",
    "[E1203 10:00:00.123456 123 torch/csrc/distributed/c10d/socket.cpp:752] [c10d] connect failed",
    "+ 1 for this fix",
    "Throughput: dropped by half",
    "Note: see sgl-project/sglang for details",
    "ray::init failed",
    "[ERROR] RUNTIME(12345,python):2025-01-01-00:00:00.000.000 [engine.cc:1234]12345 fault kernel_name=xx",
    "[1/2] is the first step",
    "1: this is step one",
    "at the end of the day",
    "step:1 - all good",
    "'error': 'bad'",
    "INFO:     something else entirely new",
    "@ 0x10 is the address",
    # a message's own tail at a word boundary is not a cut inside a word
    "avail mem=7.84 GB",
    "Traceback",
    # the bare date-time-level shape takes informational levels only: an error of it stays visible
    "2021-04-13 12:14:30,450 ERROR exited: worker (exit status 2; not expected)",
    # a GPU named before words is a message, not a matrix row
    "GPU0 0 is busy",
]


@pytest.fixture
def structure_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole-line template matches off: they run before the structural classes, and the template
    files are rebuilt from releases (a line that a new release's source prints, such as DeepGEMM's
    TMA dump, becomes `library-source` there). These tests are about the shapes, whatever the
    template files hold; cut-tail matches of templates stay on."""
    monkeypatch.setattr(classify_module, "is_source_message", lambda body: False)
    monkeypatch.setattr(classify_module, "is_library_message", lambda body: False)


@pytest.mark.parametrize(("line", "kind"), CLASSIFIED)
def test_structural_class(line: str, kind: str, structure_only: None) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_is_not_classified_by_structure(line: str) -> None:
    # A near miss may still be a known message of some program's source, but never one of the
    # structural kinds.
    assert classify(line) not in {"python-warning", "progress-bar", "test-runner", "foreign-logger", "config-dump",
                                  "shell-output", "library-text", "field-dump", "shell-command", "python-source",
                                  "viewer-metadata", "heading"}


@pytest.mark.parametrize("line", UNCLASSIFIED)
def test_near_miss_is_not_classified(line: str, structure_only: None) -> None:
    assert classify(line) is None


# Lines that a rebuilt template file made known messages, ahead of their shapes (so a template
# rebuild that loses them shows here, not as a silent fall-back to the shape).
@pytest.mark.parametrize(("line", "kind"), [
    ("gmem_address   0xd86cd7000", "library-source"),  # DeepGEMM's TMA descriptor dump (deep_gemm.txt)
    ("Error: Failed to initialize the TMA descriptor 801", "library-source"),
    ("Testing model: THUDM/glm-4-9b-chat", "sglang-source"),  # sglang's test utilities (--tests)
])
def test_known_by_template(line: str, kind: str) -> None:
    assert classify(line) == kind
