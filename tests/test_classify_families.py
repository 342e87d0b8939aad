"""Line families of real SGLang logs the corpus had not shown (parsing/classify.py), each from the
program or library that prints it: at least two real lines a family (the thread each comes from in a
comment; the threads are listed in fixtures/corpus/rule-sources.txt), and near misses of the same shape
that must stay unrecognized or keep their SGLang meaning."""

from __future__ import annotations

import pytest

from logparse.parsing.classify import classify


# LMCache's logger (`[%(asctime)s] LMCache %(levelname)s: %(message)s (%(filename)s:%(lineno)d:%(name)s)`):
# SGLang's envelope reader takes the bracketed date, so the message often arrives without it.
LMCACHE = [
    # LMCache/LMCache#2441 (SGLang with LMCache, its date stripped)
    "LMCache INFO: LMCache retrieve skipped: lookup=0, offset=0, no new tokens to retrieve "
    "(sglang_adapter.py:309:lmcache.integration.sglang.sglang_adapter)",
    "LMCache DEBUG: PinMonitor check: pinned_objects=0, timeout_objects=0, force_unpin_success=0 "
    "(pin_monitor.py:129:lmcache.v1.pin_monitor)",
    # LMCache/LMCache#2522 (vLLM's connector, the date kept)
    "[2026-02-01 23:01:55,853] LMCache WARNING: No LMCache configuration file is set. Trying to read "
    "configurations from the environment variables. (utils.py:55:lmcache.integration.vllm.utils)",
]
NOT_LMCACHE = [
    "LMCache INFO: stored 3 tokens",  # no `(file.py:N:module)` trailer: not the logger's shape
    "Using LMCache as the storage backend (lmc_radix_cache.py:12:x)",  # no `LMCache LEVEL:` head
]


@pytest.mark.parametrize("line", LMCACHE)
def test_lmcache_logger(line: str) -> None:
    assert classify(line) == "foreign-logger"


@pytest.mark.parametrize("line", NOT_LMCACHE)
def test_not_lmcache_logger(line: str) -> None:
    assert classify(line) is None

# Ray's C++ logger (raylet, core worker), `[%Y-%m-%d %H:%M:%S,%e %L %P %t] %s:%#: %v`.
RAY_CPP = [
    # ray-project/ray#18995
    "[2021-09-30 05:19:46,712 I 16428 16428] core_worker.cc:145: Constructing CoreWorkerProcess. pid: 16428",
    # verl-project/verl#472 (after Ray's `(WorkerDict pid=27497)` prefix, which the reader removes)
    "[2025-03-04 19:28:30,101 E 27110 27110] logging.cc:120: Stack trace:  [repeated 2x across cluster]",
    # hkust-nlp/simpleRL-reason#25
    "[2025-02-12 18:54:18,645 E 288692 294596] logging.cc:460:     @     0x7f84f4d47a55         16  std::terminate()",
]
NOT_RAY_CPP = [
    "[2025-03-04 19:28:30,014 E 27497 27497] Unhandled exception",  # no `file.cc:N:` after the envelope
    "[2025-03-04 19:28:30 TP0] logging.cc:12: x",  # SGLang's envelope has no level and pids
]


@pytest.mark.parametrize("line", RAY_CPP)
def test_ray_cpp_logger(line: str) -> None:
    assert classify(line) == "foreign-logger"


@pytest.mark.parametrize("line", NOT_RAY_CPP)
def test_not_ray_cpp_logger(line: str) -> None:
    assert classify(line) is None

# Ascend's memfabric transfer adapter (SGLang's PD disaggregation on NPU): a date, a lower-case level,
# the pid, `[MODULE file.cpp:N]`.
MEMFABRIC = [
    # sgl-project/sgl-kernel-npu#72 (one thread; two modules of the library)
    "2025-09-04 08:38:53.009710 info 13949 [ADAPTER pytransfer.cpp:53] Get rpcPort is 16342",
    "2025-09-04 08:38:53.16736 info 13949 [HyBM devmm_svm_gva.cpp:268] gva alloc heap. (size=0x40000",
]
NOT_MEMFABRIC = [
    "2025-09-04 08:38:53.009710 info 13949 Get rpcPort is 16342",  # no `[MODULE file.cpp:N]`
    "2025-09-04 08:38:53.009710 info 13949 [ADAPTER] Get rpcPort is 16342",  # no file and line
]


@pytest.mark.parametrize("line", MEMFABRIC)
def test_memfabric_logger(line: str) -> None:
    assert classify(line) == "foreign-logger"


@pytest.mark.parametrize("line", NOT_MEMFABRIC)
def test_not_memfabric_logger(line: str) -> None:
    assert classify(line) is None

# torch's Python logging in glog's shape, with the rank its distributed logging puts first.
TORCH_RANK = [
    # pytorch/pytorch#150980 (sglang.launch_server --enable-torch-compile)
    "[rank0]:E0410 07:52:47.507000 255947 torch/_inductor/select_algorithm.py:2134] [18/3] No valid triton "
    "configs. OutOfResources: out of resource: shared memory, Required: 110592, Hardware limit: 101376.",
    # sgl-project/sglang#2040 (the record as it starts after the autotune summary glued before it)
    "[rank2]:W1115 11:42:22.079000 139954085840704 torch/_inductor/select_algorithm.py:1469] [16/384] out of "
    "resource: shared memory, Required: 122880, Hardware limit: 101376.",
]
NOT_TORCH_RANK = [
    "[rank0]: RuntimeError: NCCL error",  # torch's rank prefix before an exception line: no glog shape
    "[rank0]:E0410 torch/_inductor/select_algorithm.py:2134] x",  # no time and pid
]


@pytest.mark.parametrize("line", TORCH_RANK)
def test_torch_rank_glog(line: str) -> None:
    assert classify(line) == "foreign-logger"


@pytest.mark.parametrize("line", NOT_TORCH_RANK)
def test_not_torch_rank_glog(line: str) -> None:
    assert classify(line) is None

# Hydra's advice under the error of an app it launched (verl runs SGLang as its rollout engine).
HYDRA = [
    "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",  # verl-project/verl#472
    "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace. ",  # verl-project/verl#4921
]
NOT_HYDRA = [
    "Set the environment variable CUDA_LAUNCH_BLOCKING=1 for a complete stack trace.",  # not Hydra's text
    "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace and retry",  # goes on
]


@pytest.mark.parametrize("line", HYDRA)
def test_hydra_advice(line: str) -> None:
    assert classify(line) == "library-text"


@pytest.mark.parametrize("line", NOT_HYDRA)
def test_not_hydra_advice(line: str) -> None:
    assert classify(line) is None

# The body of Ray's ActorDiedError, written by its C++ core (under `ray.exceptions.ActorDiedError: …`).
RAY_ACTOR_DIED = [
    # verl-project/verl#472 (Ray 2.4x wording)
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
    "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes.",
    "The actor never ran - it was cancelled before it started running.",
    # verl-project/verl#4921 (newer wording of the causes)
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
    "Worker unexpectedly exits with a connection error code 2. End of file. Some common causes include: (1) the "
    "process was killed by the OOM killer due to high memory usage",
]
NOT_RAY_ACTOR_DIED = [
    "The actor is dead",  # a fragment of prose, not the message
    "The actor never ran",
]


@pytest.mark.parametrize("line", RAY_ACTOR_DIED)
def test_ray_actor_died_body(line: str) -> None:
    assert classify(line) == "library-text"


@pytest.mark.parametrize("line", NOT_RAY_ACTOR_DIED)
def test_not_ray_actor_died_body(line: str) -> None:
    assert classify(line) is None

# A bold label the reporter typed in the issue around the log (markdown).
BOLD_LABEL = [
    # sgl-project/sglang#15674 (one thread; the environment block)
    "**SGLang Version**: latest (main branch)",
    "**Transfer Backend**: Mooncake",
]
NOT_BOLD_LABEL = [
    "**kwargs) -> None:",  # Python's keyword unpacking at a wrapped line's start
    "** On entry to DGEMM parameter number 8 had an illegal value",  # BLAS's error report
]


@pytest.mark.parametrize("line", BOLD_LABEL)
def test_bold_label(line: str) -> None:
    assert classify(line) == "markdown"


@pytest.mark.parametrize("line", NOT_BOLD_LABEL)
def test_not_bold_label(line: str) -> None:
    assert classify(line) is None

# unittest's progress dots with the next output glued to them (a CI log of SGLang's tests).
TEST_DOTS = [
    # sgl-project/sglang#32270 (one thread: the nixl unit tests' CI run)
    "...........Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater "
    "mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' (10 minutes) to relax "
    "the timeout condition. ",
    ".Traceback (most recent call last):",
]
NOT_TEST_DOTS = [
    "...and then the server hung",  # an elision before prose
    ".Zorblax frobnicated the wibble",  # the dots' rest is no known line
]


@pytest.mark.parametrize("line", TEST_DOTS)
def test_unittest_dots(line: str) -> None:
    assert classify(line) == "test-runner"


@pytest.mark.parametrize("line", NOT_TEST_DOTS)
def test_not_unittest_dots(line: str) -> None:
    assert classify(line) is None

# A Kubernetes manifest pasted with the log (its camelCase keys, its `kind:`).
YAML_KEYS = [
    # sgl-project/sglang#9226 (one thread: the pod the reporter submitted)
    "apiVersion: v1",
    "kind: Pod",
    "    volumeMounts:",
]
NOT_YAML_KEYS = [
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",  # ROCm's error: a gap to see
    "cudaErrorIllegalAddress: an illegal memory access was encountered",
    "kind: of slow",  # prose
]


@pytest.mark.parametrize("line", YAML_KEYS)
def test_yaml_manifest_keys(line: str) -> None:
    assert classify(line) == "config-dump"


@pytest.mark.parametrize("line", NOT_YAML_KEYS)
def test_not_yaml_manifest_keys(line: str) -> None:
    assert classify(line) is None

# The close of a JSON body quoted on a curl command line (`-d '{` … `}'`).
CURL_BODY_CLOSE = [
    "}'",  # kvcache-ai/Mooncake#872
    "  }'",  # sgl-project/sglang#9308
]
NOT_CURL_BODY_CLOSE = [
    "foo}'",  # text before the brace
    "}' is not valid JSON",  # goes on
]


@pytest.mark.parametrize("line", CURL_BODY_CLOSE)
def test_curl_body_close(line: str) -> None:
    assert classify(line) == "data"


@pytest.mark.parametrize("line", NOT_CURL_BODY_CLOSE)
def test_not_curl_body_close(line: str) -> None:
    assert classify(line) is None

# NVSHMEM's error reports (DeepEP's transport, under SGLang's DeepEP MoE), named by their file in NVSHMEM's tree.
NVSHMEM = [
    # deepseek-ai/DeepEP#289 (lmsysorg/sglang:deepep image)
    "/sgl-workspace/nvshmem/src/modules/transport/ibrc/ibrc.cpp:418: non-zero status: 110 ibv_modify_qp failed",
    # deepseek-ai/DeepEP#157
    "/nvshmem/src/host/mem/mem_heap.cpp:1590: non-zero status: 7 allocate_physical_memory_to_heap failed",
    "[/nvshmem/src/host/coll/barrier/barrier.cpp:21] cuda failed with an illegal memory access was encountered",
    # deepseek-ai/DeepEP#38 (a source build: `nvshmem_src`)
    "/home/test/nvshmem_src/src/modules/bootstrap/uid/ncclSocket/ncclsocket_socket.cpp:socketProgress:59: "
    "socketProgress: Connection closed by remote peer h100-216<56124>",
]
NOT_NVSHMEM = [
    # DeepEP's own C++ assertion names no NVSHMEM file: a failure to see
    "/sgl-workspace/DeepEP/csrc/deep_ep.cpp:230 'invalid argument'",
    "/usr/src/app/src/host/init/init.cu:992: non-zero status: 7 building transport map failed",  # not NVSHMEM's tree
]


@pytest.mark.parametrize("line", NVSHMEM)
def test_nvshmem_report(line: str) -> None:
    assert classify(line) == "foreign-logger"


@pytest.mark.parametrize("line", NOT_NVSHMEM)
def test_not_nvshmem_report(line: str) -> None:
    assert classify(line) is None

# One environment assignment of a command broken over lines with `\\`, or set from a command's output.
ENV_CONTINUATION = [
    # sgl-project/sglang#7888
    "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \\",
    'LD_LIBRARY_PATH="${NVSHMEM_DIR}/lib:/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH" \\',
    "NVSHMEM_DEBUG=INFO \\",
    # sgl-project/sglang#9308
    "IB_NODE_IP=`hostname -i`",
]
NOT_ENV_CONTINUATION = [
    "NCCL_IB_HCA=mlx5_0 is not a valid device \\",  # words after the value
    "RuntimeError=`oops`x",  # not a whole assignment
]


@pytest.mark.parametrize("line", ENV_CONTINUATION)
def test_env_assignment_line(line: str) -> None:
    assert classify(line) == "shell-command"


@pytest.mark.parametrize("line", NOT_ENV_CONTINUATION)
def test_not_env_assignment_line(line: str) -> None:
    assert classify(line) is None

# A program run by its relative path with flags (a transfer-engine bench run beside the servers).
RELPATH_COMMAND = [
    # kvcache-ai/Mooncake#166 (one thread: Mooncake's transfer_engine_bench, target and initiator)
    "./transfer_engine_bench --mode=target --metadata_server=http://127.0.0.1:8080/metadata "
    "--local_server_name=127.0.0.1:12345 --device_name=mlx5_0",
    "./transfer_engine_bench --metadata_server=http://127.0.0.1:8080/metadata --segment_id=127.0.0.1:12345 "
    "--local_server_name=127.0.0.1:12346 --batch_size 1 --block_size=1048576 --device_name=mlx5_0",
]
NOT_RELPATH_COMMAND = [
    "./transfer_engine_bench: error while loading shared libraries: libetcd-cpp-api.so",  # the loader's error
    "./configure",  # no argument
]


@pytest.mark.parametrize("line", RELPATH_COMMAND)
def test_relative_path_command(line: str) -> None:
    assert classify(line) == "shell-command"


@pytest.mark.parametrize("line", NOT_RELPATH_COMMAND)
def test_not_relative_path_command(line: str) -> None:
    assert classify(line) is None


# AITER (SGLang's ROCm kernels): its messages (grammars/source-messages/aiter.txt), after its `[aiter] ` tag
# (its logger prints `[aiter] %(message)s`, no level) or after another logger's envelope.
AITER = [
    # ROCm/aiter#416
    "[aiter] start build [module_aiter_enum] under /home/user/aiter/myenv/aiter/aiter/jit/build/module_aiter_enum",
    "Successfully preprocessed all matching files.",
    # lumi-ai-factory/laifs-container-recipes#8 (vLLM on ROCm: the tagged line and its copy through the root logger)
    "[aiter] finish build [module_fmha_v3_varlen_fwd], cost 46.5s",
    "finish build [module_fmha_v3_varlen_fwd], cost 46.5s",
    # ROCm/aiter#1367
    "[aiter] import [module_rmsnorm] under /mnt/models/aiter/module_rmsnorm.so",
]
NOT_AITER = [
    "[aiter] failed build jit [module_aiter_enum]↓↓↓↓↓↓↓↓↓↓",  # a failed JIT build: a gap to see
    "[aiter] zorblax quux frobnicated the wibble",  # the tag before no message of AITER's
    "[vllm] import [x] under y",  # another tag
]


@pytest.mark.parametrize("line", AITER)
def test_aiter_message(line: str) -> None:
    assert classify(line) == "library-source"


@pytest.mark.parametrize("line", NOT_AITER)
def test_not_aiter_message(line: str) -> None:
    assert classify(line) is None


# A compiler driver's own warning in a JIT kernel build (warnings and notes only).
COMPILER_WARNING = [
    # ROCm/aiter#416 (one thread: AITER's JIT build of module_aiter_enum, the same warning per source file)
    "clang++: warning: argument unused during compilation: '-c' [-Wunused-command-line-argument]",
    "clang++: warning: argument unused during compilation: '-c' [-Wunused-command-line-argument] ",
]
NOT_COMPILER_WARNING = [
    "clang++: error: no such file or directory: 'x.cpp'",  # the compiler's error: a gap to see
    "clang++ warning is harmless here",  # prose about it
]


@pytest.mark.parametrize("line", COMPILER_WARNING)
def test_compiler_driver_warning(line: str) -> None:
    assert classify(line) == "library-text"


@pytest.mark.parametrize("line", NOT_COMPILER_WARNING)
def test_not_compiler_driver_warning(line: str) -> None:
    assert classify(line) is None


# Session 11's families, from the dev cases' remaining unrecognized lines (each thread is that case's
# source; fixtures/corpus/dev/<case>.source.json).
SESSION_11 = [
    # a zsh theme's prompt before a typed command: sgl-project/sglang#8557 (dev/q-015)
    ("~/sglang-dlc ❯ curl http://127.0.0.1:30000/list_workers | jq .", "shell-command"),
    ("~/sglang-dlc ❯ kubectl get po -n sglang -o wide", "shell-command"),
    # a listing's header row: dev/q-015 (kubectl -o wide); llm-d/llm-d-benchmark#843 (`oc get pods`,
    # `oc get hpa`); opendatahub-io/kserve#687 (`k get pods`)
    ("NAME                             READY   STATUS    RESTARTS   AGE     IP                NODE"
     "                                            NOMINATED NODE   READINESS", "shell-output"),
    ("NAME                                                              READY   STATUS      RESTARTS   AGE",
     "shell-output"),
    ("NAME                              REFERENCE                                      TARGETS     MINPODS   "
     "MAXPODS   REPLICAS   AGE", "shell-output"),
    # the reporter's Python script: sgl-project/sglang#1127 (dev/p-028), decided by Python's parser
    ('llm = LLM(model="meta-llama/Meta-Llama-3.1-405B-Instruct-FP8", tensor_parallel_size=8)', "python-source"),
    ('prompts = ["Hello, my name is"]', "python-source"),
    ("res = llm.generate(prompts)", "python-source"),
    # a note typed as a C-style comment between pasted lines: sgl-project/sglang#22835 (dev/q-020)
    ("// Prefill Node removed", "markdown"),
    ("// Error ", "markdown"),
    # Rust tracing's record cut before its stamp and level: the same thread (its next line keeps them:
    # `2026-04-14 09:54:30  INFO smg::service_discovery: …/service_discovery.rs:555: Removing pod: …`)
    ("smg::routers::http::pd_router: /sgl-workspace/sglang/sgl-model-gateway/src/routers/http/pd_router.rs:172: "
     "Failed to select PD pair error=Policy consistent_hashing failed to select a prefill worker", "foreign-logger"),
    # the flags a hard wrap moved to a line of their own: sgl-project/sglang-jax#204 (dev/k-020)
    (".6B --trust-remote-code --random-seed=3 --skip-server-warmup --device=cuda --mem-fraction-static=0.5 "
     "--max-prefill-tokens=4096 --xla-backend=cuda", "shell-command"),
    # httpx's raise_for_status() pair in a trainer's rollout loop: THUDM/slime#683 (dev/q-003), #1148 (dev/q-017)
    ("Error: Server error '503 Service Unavailable' for url 'http://10.78.210.151:4674/generate'", "library-text"),
    ("For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503, retrying... "
     "(attempt 60/60, url=http://10.78.210.151:4674/generate, response=No available workers (all circuits open "
     "or unhealthy))", "library-text"),
    ("For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503, retrying... "
     "(attempt 33/60, url=http://10.146.225.228:3776/generate, response=No available workers (all circuits open "
     "or unhealth", "library-text"),
    # a compact-date logger under a Ray actor's prefix: areal-project/AReaL#140 (dev/q-013)
    ("20250627-23:11:20.180 Generation Manager INFO: 0 requests are interrupted during updating weights for "
     "server 16: http://10.48.2.224:36021", "foreign-logger"),
    ("20250627-23:11:20.243 Generation Manager INFO: 8 requests are interrupted during updating weights for "
     "server 17: http://10.48.2.224:38369", "foreign-logger"),
]
NOT_SESSION_11 = [
    "NCCL WARN NET/IB : Got async event : port error",  # capitals with single spaces: a message
    "CUDA OUT OF MEMORY",
    "the flags --tp 8 and --dp 2 conflict with --enable-dp-attention",  # prose naming flags
    "x = (this is prose",  # not Python
    "result = failed (see above)",
    "value = [1, 2",  # a cut list: no statement
    "a::b: hello",  # a path-like word without the `.rs:N:` location
    "Server error while loading the model",  # not httpx's `'NNN Reason' for url` shape
    "~ ❯",  # a prompt with nothing typed
]


@pytest.mark.parametrize(("line", "kind"), SESSION_11)
def test_session_11_families(line: str, kind: str) -> None:
    assert classify(line) == kind


@pytest.mark.parametrize("line", NOT_SESSION_11)
def test_not_session_11_families(line: str) -> None:
    assert classify(line) is None
