"""Deliberate classes for lines the grammar has no rule for: what kind of text a pasted log holds
besides SGLang's records. Decided by structure (whose output a line is), never by one excerpt's
sentences; only lines that came back `Unparsed` get here, so common lines pay nothing.

Kinds (`Coverage.classified` counts them; the lines stay `Unparsed` for every other purpose, so
tracebacks and commands still assemble across them):
- `sglang-source`: a message SGLang's own source prints (`grammar/sourcemsgs.py`);
- `library-source`: a message of a library SGLang runs on, as that library's source prints it
  (torch, transformers, uvicorn, …: the other files of `grammars/source-messages/`), also after AITER's
  `[aiter] ` tag (its logger prints no level);
- `python-warning`: the location line Python's `warnings` module prints before a warning's
  source line (`/path/file.py:12: UserWarning: …`): its shape is the `warnings` format, whoever warns;
- `progress-bar`: a tqdm bar of any library (`desc: 42%|████ | 5/12 [00:01<00:02, 3.1it/s]`), with
  or without the bar and the rate part (a paste drops the bar's block characters);
- `test-runner`: pytest's and unittest's progress and summary lines (`tests/x.py::test_y PASSED
  [ 50%]`, `==== 2 failed, 1 passed in 3.2s ====`, `Ran 3 tests in 0.52s`, `FAILED (errors=1)`), and
  unittest's progress dots glued to the known line printed after them (`....Traceback (most recent call last):`);
- `config-dump`: one setting printed as `name: value` / `name=value` (a config printed field by
  field, `print(f"{x=}")`, `pip list` rows): a lowercase identifier, then a value; an environment
  variable a library reports (`get env NAME = value`); the middle of a `name=value, …` repr that a
  hard wrap cut; an environment report's line (check_env / collect_env: `PyTorch: 2.5.1+cu124`); a
  YAML manifest's camelCase keys and `kind: Pod` (a Kubernetes pod pasted with the log);
- `field-dump`: a record native code prints field by field, values aligned (a C struct such as
  DeepGEMM's TMA descriptor: `globalDim      (128,1,8,282843,1)`), torch inductor's `strides:` /
  `dtypes:` lines: names, then numbers (or dtype names) only;
- `shell-command`: a command echoed outside a launch (`VAR=x cmd --flag`, `$python ./t.py`, after a
  zsh theme's prompt `~/dir ❯ curl …`), the flags a hard wrap moved to a line of their own;
- `python-source`: a Python statement header quoted without its `File` line (`if self.x > 0:`), an
  assignment of the reporter's script (`llm = LLM(model="…")`, decided by Python's parser);
- `viewer-metadata`: an id a log viewer shortened to its ends (`2855e530…vdumckda`);
- `heading`: a short title a program prints alone before a block (`GPU Info:`);
- `pip`: pip's / uv's install output (`Collecting x`, `Requirement already satisfied: …`), `pip freeze`
  rows, collect_env's `[pip3] numpy==1.26.4`;
- `markdown`: the paste's markdown around the log (code fences, headings, rules, table rows, HTML
  `<details>` tags, an elision mark `...` the paster left, a bold label `**Model**: …`, a note typed as
  a C-style comment `// Prefill Node removed`);
- `shell-output`: output of commands pasted around a launch (`nvidia-smi` tables, `ls -l` rows,
  `env` dumps, bash's job lines `[1] 3188749`, py-spy dump's `Process …:` / `Thread … (idle): "…"`,
  `time`'s and `date`'s reports, `nvidia-smi topo -m`'s matrix and legend, docker compose's
  `sglang-1 exited with code 137`, a listing's header row `NAME   READY   STATUS   RESTARTS …`);
- `foreign-logger`: another logger's record (Python logging's default `LEVEL:name:message`,
  `[Gloo]` lines, torch c10d's `[PG 3 Rank 0] …` / `[c10d] …`, sglang-router's `[Router (Python)] …`;
  the common envelopes of other programs: `file.py:123 - msg`, `2025-… - name - LEVEL - msg`,
  `2025-… NAME LEVEL file.py:12 msg`, Ray's `2025-…\tINFO worker.py:12 -- msg`, a bare `2025-… INFO msg`,
  loguru's `2025-… | LEVEL | …`, `LEVEL [module] msg`, UCX's `[1784273406.68] [host:pid:0]
  file.c:452 UCX ERROR …`, an HTTP access line `127.0.0.1:39394 - "POST /v1/… HTTP/1.1" 200 OK`,
  TensorFlow's / XLA's `2025-… .123456: I tensorflow/….cc:12] msg`,
  a native backtrace frame `[bt] (1) lib.so(+0x5af51) [0x7f…]` / ` 3  /lib/libc.so.6(+0x1a07cd) [0x7f…]`,
  ms-swift's `[INFO:swift] …`, c10's `Warning: … (function name)`, urllib3's connection-pool lines,
  LMCache's `LMCache INFO: … (file.py:12:module)`,
  Ray's C++ `[2025-… ,712 I 16428 16428] core_worker.cc:145: …`,
  Ascend memfabric's `2025-… info 13949 [ADAPTER pytransfer.cpp:53] …`, torch's `[rank0]:` before glog's shape,
  NVSHMEM's `…/nvshmem/src/host/init/init.cu:992: non-zero status: 7 …` reports (DeepEP's transport),
  a Rust tracing record cut before its stamp `smg::routers::http::pd_router: …/pd_router.rs:172: …`,
  a compact-date logger `20250627-23:11:20.180 Generation Manager INFO: …`);
- `library-text`: fixed text a library or the runtime prints around an error (torch's CUDA-error
  advice lines, a CUDA device-side assertion, CPython's `Error in sys.excepthook:` /
  `Original exception was:` / `Exception ignored in: …`, multiprocessing's `Process Process-2:`,
  faulthandler's `Extension modules: … (total: N)`, Hydra's `Set the environment variable HYDRA_FULL_ERROR=1 …`,
  the body of Ray's ActorDiedError `The actor is dead because its worker process has died. …`, httpx's
  `Server error '503 Service Unavailable' for url '…'` / `For more information check: …` pair, a
  compiler driver's warning in a JIT build `clang++: warning: …`);
- `cut-line`: a line cut short where an excerpt ends or a hard wrap fell: the start of one of
  SGLang's messages (at least 12 characters of its literal head), of an envelope (`[2025-`, an
  envelope alone, vLLM's / torch's cut inside the file name, uvicorn's after the level; glog's,
  sglang-router's, loguru's, Rust tracing's, NCCL's, uvicorn's access line cut anywhere after a
  distinctive start; a date-time alone), of a progress bar before its percentage, of CPython's
  traceback texts, of a frame line (`…/x.py", line 7, in f`), a known message cut after its literal
  head (inside a value or a later piece, also after uvicorn's level column), or the cut *tail* of
  a known message (`parsing/fragments.py`: `vail mem=24.47 GB`);
- `data`: a printed mapping (`{'run_name': 'before', 'throughput': …}`, a JSON record, compact or
  pretty-printed JSON's brackets, the `}'` closing a JSON body quoted on a command line).
"""

from __future__ import annotations

from logparse.grammar.sourcemsgs import (
    is_cut_source_message,
    is_library_message,
    is_source_message,
)
from logparse.model.lazyre import lazy_branches, lazy_compile
from logparse.parsing.fragments import is_cut_envelope, is_cut_late

__all__ = ["classify", "paste_kind"]

# Compiled on first use: most short logs have few unrecognised lines, and some none of a kind.
_PIP = lazy_branches(
    r"(?:Collecting|Downloading|Requirement already satisfied:|Installing collected packages:|Successfully "
    r"(?:installed|uninstalled|built)|Attempting uninstall:|Found existing installation:|Uninstalling|"
    r"Building wheels? for|Created wheel for|Stored in directory:|Using cached|Obtaining|Preparing metadata|"
    r"Getting requirements to build|Installing build dependencies|Looking in (?:indexes|links):|"
    r"Building editable for|Installing backend dependencies|(?:Resolved|Prepared|Installed|Uninstalled|Audited) "
    r"\d+ packages? in|ERROR: pip's dependency resolver|WARNING: Running pip as the 'root' user|"
    r"ERROR: (?:Could not find a version|No matching distribution)|DEPRECATION: )"
    # uv's changed-package lines: ` + torch==2.8.0` / ` - torch==2.7.1`
    r"|[ ]?[+-] [A-Za-z0-9_.-]+==\S+$"
    # torch's / vLLM's collect_env package list (`[pip3] numpy==1.26.4`, `[conda] torch 2.5.1 pypi_0 pypi`)
    r"|\[(?:pip3?|conda|uv)\] \S"
    # pip's network retry: `WARNING: Retrying (Retry(total=4, connect=None, …)) after connection broken by …`
    r"|WARNING: Retrying \(Retry\(total=\d+"
)
_MARKDOWN = lazy_branches(
    r"(?:`{3,}|~{3,})[\w+-]*\s*$"  # a code fence, with its language
    r"|#{1,6} \S"  # a heading
    r"|(?:-{3,}|\*{3,}|_{3,})\s*$"  # a horizontal rule
    r"|\|.*\|\s*$"  # a table row (also nvidia-smi's)
    r"|</?(?:details|summary|br|pre|code|p|b|i)\b[^>]*>"  # HTML a comment keeps
    r"|>\s*$"  # an empty quote line
    # a bold label the reporter typed before a value (`**SGLang Version**: latest (main branch)`): no program
    # prints markdown's `**` at a line's start
    r"|\*\*[^*\s][^*]*\*\*"
    # a note the reporter typed between pasted lines as a C-style comment (`// Prefill Node removed`):
    # no log writer starts a record with `// `
    r"|// \S"
    # an elision mark the paster left where lines were dropped: `...`, `……`, `... (repeats for ~10 minutes)`
    r"|(?:\.{3,}|…+)(?: *\([^()]*\))?\s*$"
)
_SHELL_OUTPUT = lazy_branches(
    r"\+[-=+]{10,}\+\s*$"  # nvidia-smi / tabulate borders
    r"|[-dlcbps][-rwxsStT]{9}[.+@]? +\d+ +\S+ +\S+ +\d"  # ls -l rows
    r"|total \d+\s*$"
    # `time`'s report (`real\t0m12.345s`, `user …`, `sys …`) and `date`'s (`Wed Dec  2 13:39:13 UTC 2026`)
    r"|(?:real|user|sys)\s+\d+m\d+(?:\.\d+)?s\s*$"
    r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} "
    r"\d{2}:\d{2}:\d{2}(?: [A-Z]{2,5})? \d{4}\s*$"
    # `nvidia-smi topo -m` (in SGLang's check_env): the matrix's header and rows, and its legend
    r"|\s*(?:GPU|NIC)\d+(?:\s+(?:GPU|NIC)\d+)+\s+CPU Affinity\b.*$"
    r"|(?:GPU|NIC)\d+(?:\s+(?:X|NV\d+|SYS|NODE|PHB|PXB|PIX))+(?:\s+(?:[\d,-]+|N/A))*\s*$"
    r"|\s*(?:X|SYS|NODE|PHB|PXB|PIX|NV#) += \S.*$"
    r"|NIC Legend:\s*$|\s*NIC\d+: \w+\s*$"
    # `rocm-smi --showtopo` (in SGLang's check_env on ROCm, `AMD Topology:`): the rows of its
    # weight / hops / link-type matrices, `GPU0   0   XGMI   XGMI`, `GPU1   52   0   52` (the
    # header row and `=== … ===` banners are known already); cells are numbers or link types only
    r"|GPU\d+(?:[ \t]+(?:\d+|XGMI|PCIE|N/A))+\s*$"
    # ninja's build steps (a JIT build of flashinfer / sgl-kernel / DeepGEMM): `[3/12] /usr/local/cuda/bin/nvcc …`
    r"|\[\d+/\d+\] (?:/\S+ |(?:c\+\+|g\+\+|gcc|clang(?:\+\+)?|nvcc|hipcc|ld|ar|Building|Linking|Compiling) )"
    # `tail`/`head` on several files: `==> sglang.log <==`; docker compose's `Attaching to sglang-1, router-1`
    r"|==> .+ <==\s*$|Attaching to [\w.-]+(?:, [\w.-]+)*\s*$"
    # docker compose's own report that a service's container ended (`sglang-1 exited with code 137`)
    r"|[A-Za-z0-9][\w.-]* exited with code -?\d+\s*$"
    # zsh's job report, as bash's above: `zsh: killed     python3 -m sglang.launch_server …`
    r"|zsh: (?:killed|terminated|suspended|done|exit \d+|segmentation fault|abort)\b +\S.*$"
    r"|[A-Z][A-Z0-9_]*=\S*\s*$"  # an `env` dump line
    # a listing command's header row (`kubectl get po -o wide`: `NAME   READY   STATUS   RESTARTS   AGE …`,
    # `docker ps`: `CONTAINER ID   IMAGE   COMMAND …`): upper-case column names only, four or more,
    # separated by runs of blanks as the columns are aligned (a message in capitals has single spaces)
    r"|[A-Z][A-Z_()%/-]*(?: [A-Z][A-Z_()%/-]*)?(?: {2,}[A-Z][A-Z_()%/-]*(?: [A-Z][A-Z_()%/-]*)?){3,}\s*$"
    # argparse's usage continuation line (its indentation lost in the paste): option groups only,
    # `[--load-format {auto,pt}] [--trust-remote-code] [--dtype DTYPE]`
    r"|\[-{1,2}\w[\w-]*(?: [^\[\]]*)?\](?: \[-{1,2}\w[\w-]*(?: [^\[\]]*)?\])+"
    # bash's job control: `[1] 3188749` when a command is sent to the background, `[1]+  Done  …`
    r"|\[\d+\][+-]? +(?:\d+|Done|Exit \d+|Killed|Terminated|Stopped|Running)\b.*$"
    # py-spy dump's frame headers: `Process 10366: sglang::scheduler`, `Python v3.12.3 (/usr/bin/python3.12)`,
    # `Thread 10366 (idle): "MainThread"`
    r"|Process \d+: \S.*$|Python v\d+\.\d+\.\d+ \(\S+\)\s*$|Thread (?:0x[0-9A-Fa-f]+|\d+) \((?:idle|active|gil)[^)]*\): \".*\"\s*$"
    # py-spy dump's frames, `function (file.py:line)` or a native one `wait4 (libc.so.6)`, indented by
    # py-spy or not (a paste that stripped the indentation): one call name, then its place in brackets
    r"|\s*[\w<>$.]+ \((?:[\w./<>-]+\.py:\d+|<[\w-]+>:\d+|[\w.+-]+\.so(?:\.\d+)*)\)\s*$"
)
_FOREIGN_LOGGER = lazy_branches(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"  # Python logging's BASIC_FORMAT
    r"|\[Gloo\] "
    # `[%(levelname)s:%(name)s] %(message)s` (ms-swift, modelscope): `[INFO:swift] Setting …`
    r"|\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.-]+\] "
    # torch's ProcessGroupNCCL / c10d messages (after their glog envelope, or alone):
    # `[PG 3 Rank 0] Heartbeat monitor timed out! …`, `[PG ID 2 PG GUID 3 Rank 1] …`, `[c10d] waitForInput: …`
    r"|\[PG (?:ID )?\d+(?: PG GUID \d+(?:\([\w]+\))?)? Rank \d+\] "
    r"|\[c10d\] "
    # torch's C++ log prefix with a path for the file, as the grammar's prefix does not take it
    # (`[W1203 10:00:00.123456 123 torch/csrc/distributed/c10d/socket.cpp:752] …`): info and
    # warnings only, so an error of this shape stays a gap that shows
    r"|(?:\[[Rr]ank\d+\]:)?\[[IW]\d{4} \d{2}:\d{2}:\d{2}\.\d+ \d+ [\w.-]+/[\w./-]+:\d+\] "
    # Weights & Biases' console lines (`wandb: Tracking run with wandb version 0.19.1`), DeepSpeed's
    # logger (`[2025-01-01 00:00:00,123] [INFO] [real_accelerator.py:222:get_accelerator] …`)
    r"|wandb: "
    r"|\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:,\d+)?\] \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[[\w.-]+:\d+:\w+\] "
    # CANN's log (Ascend): `[INFO] ASCENDCL(12345,python):2025-01-01-00:00:00.000.000 [acl.cpp:12]12345 …`;
    # informational levels only, so an `[ERROR] RUNTIME(…)` record stays a gap that shows
    r"|\[(?:INFO|WARNING|DEBUG|EVENT)\] [A-Z][A-Z_]*\(\d+,[\w.-]+\):\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d+\.\d+ \[[\w.-]+:\d+\]"
    # NCCL's banner without its envelope: `NCCL version 2.21.5+cuda12.4`
    r"|NCCL version \d+\.\d+\.\d+(?:\+cuda[\d.]+)?\s*$"
    # sglang-router's launchers: `[Router (Python)] 2025-… - INFO - … - launch_server.py:56`, `[Router (Rust)] …`
    r"|\[Router \((?:Python|Rust)\)\] "
    # glog (Mooncake, TensorRT-LLM, …; torch's own has `[…]` around it): `I1120 11:09:23.594488 203018 pybind_client.cpp:218] …`,
    # and torch's Python logging in the same shape, whose file is a path relative to the
    # install (`W0826 10:15:20.116000 768593 site-packages/torch/utils/cpp_extension.py:2425] …`);
    # glog ≥ 0.7 prints the year too (`I20250516 09:00:52.199445 45697 transfer_engine.cpp:44] …`)
    # torch's distributed logging puts the rank before that shape (`[rank0]:E0410 07:52:47.507000 255947
    # torch/_inductor/select_algorithm.py:2134] [18/3] No valid triton configs. …`)
    r'|(?:\[[Rr]ank\d+\]:)?"?[IWEF](?:\d{4})?\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [\w./-]+:\d+\] '
    # TensorFlow's / XLA's C++ log (JAX, TF imported by a dependency): `2023-10-31 10:09:34.713036: I
    # tensorflow/core/platform/cpu_feature_guard.cc:193] …`, `… W external/org_tensorflow/…/service.cc:168] …`
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+: [IWEF] [\w./-]+\.\w+:\d+\] "
    # `file.py:123 - msg` (a logger whose format is `%(filename)s:%(lineno)d - %(message)s`)
    r"|[\w.-]+\.py:\d+ - \S"
    # `2025-04-03 12:06:29,258 - __main__ - INFO - msg` (`%(asctime)s - %(name)s - %(levelname)s - …`)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)? - [\w.<>-]+ - (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) -(?: |$)"
    # `2025-12-10 05:50:30 NIXL INFO    _api.py:361 msg` (a named component, its level, the file)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)? [A-Za-z][\w-]* +(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +[\w.-]+\.\w+:\d+ "
    # Ray's logger (`%(asctime)s\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s`, any level: its
    # ` file.py:N -- ` is distinctive): `2023-11-01 09:30:02,719 INFO worker.py:1458 -- Connecting to …`
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)?[ \t]+(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)[ \t]+"
    r"[\w.-]+\.py:\d+ -- "
    # loguru's default: `2025-01-01 12:00:00.123 | ERROR    | module:function:12 - msg` (also a
    # sink named `stderr`: `… | ERROR | stderr | msg`)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)? \| (?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) +\|"
    # `INFO [sglang_router] msg`, `WARNING [vllm.config] msg`
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \[[\w.-]+\] \S"
    # LMCache's logger (`[%(asctime)s] LMCache %(levelname)s: %(message)s (%(filename)s:%(lineno)d:%(name)s)`,
    # an SGLang / vLLM KV-cache connector), its date stripped or not: the closing `(file.py:N:module)` is
    # distinctive, so any level: `LMCache INFO: Stored 35 out of total 35 tokens. … (cache_engine.py:577:lmcache.v1.cache_engine)`
    r"|(?:\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:,\d+)?\] )?LMCache (?:DEBUG|INFO|WARNING|ERROR|CRITICAL): .*"
    r"\([\w.-]+\.py:\d+:[\w.]+\)\s*$"
    # Ray's C++ logger (raylet, core worker; in an actor's lines after `(Actor pid=N)`): `[2021-09-30
    # 05:19:46,712 I 16428 16428] core_worker.cc:145: Constructing CoreWorkerProcess. pid: 16428`, any level
    r"|\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} [DIWEF] \d+ \d+\] [\w.-]+\.(?:cc|cpp|h):\d+: "
    # Ascend's memfabric / transfer adapter (PD disaggregation on NPU, `mf_adapter`): a date, a lower-case
    # level, the pid, `[MODULE file.cpp:N]`: `2025-09-04 08:38:53.009710 info 13949 [ADAPTER pytransfer.cpp:53] Get rpcPort is 16342`
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ (?:debug|info|warn|warning|error) \d+ \[[A-Za-z]+ [\w.-]+\.(?:cpp|cc|c|h):\d+\] "
    # NVSHMEM's error reports (DeepEP's transport under SGLang's EP MoE), each named by its source file
    # in NVSHMEM's tree: `/sgl-workspace/nvshmem/src/modules/transport/ibrc/ibrc.cpp:418: non-zero status: 110
    # ibv_modify_qp failed`, `[/nvshmem/src/host/coll/barrier/barrier.cpp:21] cuda failed with …`,
    # `…/ncclsocket_socket.cpp:socketProgress:59: socketProgress: Connection closed …`
    r"|\[?/\S*nvshmem[\w.-]*/src/\S+\.(?:cpp|cu|cuh|h):(?:\w+:)?\d+(?:\]|:) "
    # UCX: `[1784273406.684686] [host:994396:0]   ib_mlx5_dv.c:452  UCX  ERROR …`, and its
    # `[host:12796:1:13303] Caught signal 11 (…)`
    r"|\[\d{9,}\.\d+\] \[[\w.-]+:\d+:\d+\] +[\w.-]+\.\w+:\d+ +[A-Z]{2,} +[A-Z]+ "
    r"|\[[\w.-]+:\d+:\d+:\d+\] Caught signal \d+ \("
    # An HTTP access line without uvicorn's level: `127.0.0.1:39394 - "POST /v1/x HTTP/1.1" 200 OK`,
    # and the common log format `127.0.0.1 [28/May/2025:09:43:43 +0000] "GET /x HTTP/1.1" 200 262 …`
    r'|(?:\d{1,3}\.){3}\d{1,3}(?::\d+)? - "[A-Z]+ \S+ HTTP/[\d.]+" \d{3}\b'
    r'|(?:\d{1,3}\.){3}\d{1,3} (?:- - )?\[\d{2}/\w{3}/\d{4}:[\d:]+ [+-]\d{4}\] "[A-Z]+ \S+ HTTP/[\d.]+" \d{3} '
    # Native backtrace frames: dmlc/ps-lite's `[bt] (1) lib.so(+0x5af51) [0x7fbad65e0f51]` and
    # UCX's / glibc's ` 3  /usr/lib/libc.so.6(+0x1a07cd) [0x7fc0957437cd]` (the address ends it)
    # (the symbol in the brackets may be a call itself: `(ps::RDMAVan::PollEvents()+0x946)`)
    r"|(?:\[bt\] \(\d+\)|\d{1,3}) +\S+\.so[\w.-]*\((?:[^()]|\(\))*\) \[0x[0-9a-f]+\]\s*$"
    # Rust's backtrace after a panic (sglang-router): `  12: tokio::runtime::task::harness::poll`,
    # `             at /rustc/…/library/core/src/ops/function.rs:250:5`
    r"|\d{1,4}: (?:<[^>]+>|[\w.]+)(?:::[\w<>{}#]+)+(?:::h[0-9a-f]{16})?\s*$|at \S+\.rs:\d+:\d+\s*$"
    # abseil's failure-signal handler's frames after its `*** SIGSEGV received at …` line (JAX, XLA,
    # TensorFlow): `PC: @     0x7f4b3ffff640  (unknown)  (unknown)`, `    @     0x7f4b3ffff640  1008  (unknown)`
    r"|(?:PC: )?@ +0x[0-9a-f]{8,} +(?:\d+ +)?\S.*$"
    # c10's default warning handler (a TORCH_WARN without glog's envelope, or with it stripped):
    # `Warning: {message} (function {name})`
    r"|Warning: .* \(function [\w:<>~]+(?:\(\))?\)\s*$"
    # urllib3's connection-pool debug lines (requests' logging at DEBUG):
    # `Starting new HTTP connection (1): 172.16.37.200:3138`, `http://host:3138 "GET /x HTTP/1.1" 403 3582`
    r"|Starting new HTTPS? connection \(\d+\): \S+\s*$"
    r'|https?://\S+ "[A-Z]+ \S+ HTTP/[\d.]+" \d{3} (?:\d+|None)\s*$'
)
# `%(asctime)s %(levelname)s %(message)s` (supervisord, many scripts): a date-time, a level, text.
# Informational levels only, so another program's error of this bare shape stays a gap that shows;
# tried last, after the cut-line checks: a cut line of sglang-router's Rust tracing has this shape too.
_BARE_LEVEL_LOGGER = lazy_branches(
    r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)?[ \t]+(?:DEBUG|INFO|WARNING|WARN)[ \t]+\S"
    # Rust tracing's record whose stamp and level the paste cut off: the target's module path, then
    # the source file and line the format prints with it (sgl-model-gateway's
    # `smg::routers::http::pd_router: …/pd_router.rs:172: Failed to select PD pair …`)
    r"|[a-z_]\w*(?:::\w+)+: \S+\.rs:\d+: \S"
    # a logger whose stamp is a compact date, then its name and level (AReaL's `20250627-23:11:20.180
    # Generation Manager INFO: …`, under a Ray actor's prefix)
    r"|\d{8}-\d{2}:\d{2}:\d{2}(?:[.,]\d+)? [A-Za-z][\w .-]{0,40}? (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL): ")
# A printed mapping or list of mappings (a benchmark's result dict, a JSON record): data, not a message.
# Also its first line when a string value held a newline and printed it raw (`{'supported': False,
# 'help_output': 'Traceback (most recent call last):`): two keys at least, the mapping left open.
_DATA = lazy_compile(r"""(?:\{['"][^'"]+['"]: .*\}|\[\{['"][^'"]+['"]: .*\}\])\s*$"""
                     r"""|\{(['"])[^'"]+\1: [^,{}]+, (['"])[^'"]+\2: \S"""
                     # pretty-printed JSON's brackets alone on their lines
                     r"""|[\[\]{}],?\s*$|\},\s*\{\s*$"""
                     # the close of a JSON body quoted on a command line (`curl … -d '{` … `}'`)
                     r"""|[\]}]+'\s*$"""
                     # a trainer's metrics record (verl: `step:1 - actor/entropy:0.52 - critic/score/mean:0.1`)
                     r"""|[\w/@.-]+:-?[\d.]+(?:e[+-]?\d+)?(?: - [\w/@.()-]+:(?:-?[\d.]+(?:e[+-]?\d+)?|nan|inf)){2,}\s*$""")
# Compact JSON (a curl response, a JSON log record) and a JSON / pprint member one a line (`"max_tokens":
# 128,`, `'model_path': '/m',`). Taken only without an error word (`_ERROR_WORDS`): an error response
# stays a gap to see.
_JSON = lazy_compile(
    r"""\[?\{"[^"]+":.*[}\]]\s*$"""
    r"""|(?:"[^"]+"|'[^']+'): (?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d[\d.eE+-]*|true|false|null|True|False|None"""
    r"""|[\[{]|\[\]|\{\})\s*,?\s*$"""
)
# Fixed text torch prints after a CUDA error (formats §1.7), when it is not part of a record.
_LIBRARY_TEXT = lazy_branches(
    r"CUDA kernel errors might be asynchronously reported at some other API call"
    # TensorFlow's advice after its CPU-feature line (both wordings)
    r"|To enable (?:them|the following instructions: .*,) in other operations, rebuild TensorFlow with the "
    r"appropriate compiler flags\.\s*$"
    r"|For debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    r"|Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions"
    # A CUDA device-side assertion, as the device runtime prints it (often split over two lines):
    # `/pytorch/aten/src/ATen/native/cuda/X.cu:112: kernel: block: [0,0,0], thread: [0,0,0] Assertion `…` failed.`
    r"|\S+\.cuh?:\d+: \S.*:(?: block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion .* failed\.)?\s*$"
    r"|block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion .* failed\.\s*$"
    # CPython's own fixed output around an error: a broken excepthook, multiprocessing's header for
    # a child's traceback (`Process Process-2:`, often after a `^C`), unraisable exceptions.
    r"|Error in sys\.excepthook:\s*$|Original exception was:\s*$"
    r"|(?:\^C)?Process [A-Za-z][\w-]*-\d+(?::\d+)*:\s*$"
    r"|Exception ignored in: \S"
    # Ray's header of a task's error, before the exception it re-raises: `ray::SGLangEngine.init()`,
    # `ray::RolloutWorker.generate() (pid=1234, ip=10.0.0.1, actor_id=…, repr=<…>)`
    r"|ray::[\w.]+\(\)(?: \(pid=\d+[^)]*\)?.*)?\s*$"
    # Hydra's advice under an error of the app it launched (verl, a trainer that runs SGLang as its rollout)
    r"|Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace\.\s*$"
    # the body of Ray's ActorDiedError (its C++ core writes it, so no Python source has it): `The actor is
    # dead because its worker process has died. Worker exit type: SYSTEM_ERROR …`, `The actor never ran - …`
    r"|The actor is dead because its (?:worker process|owner) has died\. "
    r"|The actor never ran - it was cancelled before it started running\.\s*$"
    # asyncio's report of a task's exception nobody awaited (the traceback follows): `Task exception
    # was never retrieved`, `future: <Task finished name='Task-3' coro=<…> exception=RuntimeError(…)>`
    r"|Task exception was never retrieved\s*$|future: <Task (?:finished|pending|cancelled) "
    # nvcc's warnings in a JIT build and its closing remark: `x.cuh(120): warning #177-D: variable "y"
    # was declared but never referenced`, `Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"`
    r"|\S+\(\d+\): warning #\d+-D: \S"
    r'|Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"\s*$'
    # a compiler driver's own warning in a JIT build (AITER's, DeepGEMM's, flashinfer's kernels):
    # `clang++: warning: argument unused during compilation: '-c' [-Wunused-command-line-argument]`;
    # warnings and notes only, so a compiler's error stays a gap that shows
    r"|(?:clang\+\+|clang|g\+\+|gcc|c\+\+|hipcc|nvcc|amdclang\+\+|ld(?:\.lld)?): (?:warning|note): \S"
    # httpx's `raise_for_status()` message, two lines (a client of the server, a trainer's rollout
    # loop, prints it): `Server error '503 Service Unavailable' for url 'http://…/generate'`, then
    # `For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/503`
    r"|(?:[\w.]+: )?(?:Informational response|Redirect response|Client error|Server error|Invalid status code) "
    r"'\d{3} [^']*' for url '[^']*'"
    r"|For more information check: https://developer\.mozilla\.org/en-US/docs/Web/HTTP/Status/\d{3}\b"
    # Rust's panic handler's advice after a panic's first line (sglang-router is Rust)
    r"|note: run with `RUST_BACKTRACE=(?:1|full)` environment variable to display a backtrace\s*$"
    # faulthandler's list after a fatal error's traceback (CPython ≥ 3.11): `Extension modules:
    # numpy.core._multiarray_umath, …, regex._regex (total: 50)`, and the rest of that comma list
    # where a paste hard-wrapped it (module names only, closed by the count)
    r"|Extension modules: \S"
    r"|(?=[A-Za-z_][\w.]*, )(?=[^(]*\w\.\w)(?:[A-Za-z_][\w.]*, )+[A-Za-z_][\w.]* \(total: \d+\)\s*$"
)


# Python's `warnings.formatwarning`: `{filename}:{lineno}: {category}: {message}`. The category is a
# class name ending in Warning (UserWarning, FutureWarning, torch's …Warning); a path before it.
_PYTHON_WARNING = lazy_compile(r"(?:(?:[A-Za-z]:)?[\w./\\~-]+\.py|<[\w. ]+>):\d+: [A-Z]\w*Warning: \S")
# tqdm's bar: `{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate}]`.
# The percentage, then (the bar, which a paste may drop), then `n/total` or the `[elapsed<…` part;
# a bar cut short after its percentage and bar keeps the `%|`.
_PROGRESS_BAR = lazy_compile(
    r"(?:.*?:)?\s*\d{1,3}%(?:\|[^|]*\|?)?\s*(?:\d+(?:\.\d+)?[kMG]?/\d+(?:\.\d+)?[kMG]?"
    r"(?: \[[\d:?]+<[\d:?]*(?:,[^\]]*)?\]?)?\s*$|\[[\d:?]+<)"
    r"|(?:.*?:)?\s*\d{1,3}%\|[^|]*$"
)
# pytest: `tests/test_x.py::test_y PASSED [ 50%]`, `PASSED tests/…::test_y`, its `==== … ====` rules
# (`==== 2 failed, 1 passed in 3.21s ====`, `==== FAILURES ====`, `____ test_y ____`), `collected 3
# items`; unittest: `Ran 3 tests in 0.521s`, `OK`, `FAILED (failures=1, errors=2)`, `test_y
# (module.Class.test_y) ... ok`.
_TEST_RUNNER = lazy_compile(
    r"[\w./-]+\.py::\S+(?: (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*)?\s*$"
    r"|(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) [\w./-]+\.py::\S"
    r"|={5,} .* ={5,}\s*$|_{5,} .* _{5,}\s*$"
    r"|collected \d+ items?\b"
    r"|Ran \d+ tests? in \d+(?:\.\d+)?s\s*$"
    r"|(?:OK|FAILED)(?: \((?:(?:failures|errors|skipped|expected failures|unexpected successes)=\d+(?:, )?)+\))?\s*$"
    r"|\w+ \([\w.]+\)(?: \.\.\. (?:ok|FAIL|ERROR|skipped.*))\s*$"
)
# One setting printed as `name: value` or `name = value` / `name=value`: a lowercase identifier
# (dotted, a call's `()` for `print(f"{x.size()=}")`), then a value. An exception line has a
# class name (`ValueError: …`) and a message has words before any colon, so neither is this. The
# value must not be empty and not the start of a sentence's clause (`note: see above` is text, but
# as words after a lowercase name cannot be told from a value, only identifier-like names count:
# `model_path: /x`, `quant_config: AWQConfig(…)`, `self.tree_cache.evictable_size()=0`).
# `pip list` rows (`sgl-kernel      0.1.7`) are the same data in columns.
_CONFIG_DUMP = lazy_compile(
    r"(?:[a-z][a-z0-9]*_[a-z0-9_]*|[a-z][a-z0-9_]*(?:\.[A-Za-z_]\w*)+(?:\(\))?|[a-z][a-z0-9_]*\(\))"
    r"(?::(?: \S.*)?| ?= ?(?!=)\S.*)$"
    r"|[a-z][a-z0-9]*=(?!=)\S.*$"  # `command=python3 -m …`: a plain name with `=` right after it
    # one environment variable as a library prints it when it reads it (Ascend's
    # `get env HOSTNAME = host-1`): the variable's name is upper case, a value follows
    r"|get env [A-Z_][A-Z0-9_]* = \S.*$"
    # a section header alone (an INI / TOML section, a tag a script prints before a block):
    # `[sglang]`, `[_compile_deep_gemm_one_type_all]`
    r"|\[[A-Za-z_][\w.-]*\]\s*$"
    # the middle of a dataclass's / namespace's repr a hard wrap cut (`server_args=ServerArgs(…)`
    # over several lines: `_attention=False, enable_ep_moe=False, …`, `, tokenizer_mode='auto', …`):
    # only `name=value` pairs, at least three, the first and last possibly cut
    r"|(?:, )?\w*(?:=[^,\s]*)?(?:, [a-z_][a-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\{[^}]*\}|[^,\s]*)){3,}"
    r"(?:, [a-z_]*|, [a-z_][a-z0-9_]*=\S*|\))?\s*$"
    r"|[A-Za-z0-9][\w.-]* {4,}\d+(?:\.[\w+]+)+\s*$"
)
# A YAML manifest's keys (a Kubernetes pod / deployment pasted around the launch): a camelCase key
# (`apiVersion: v1`, `imagePullPolicy: Always`, `volumeMounts:`), and the manifest's `kind: Pod`.
# Guarded: a runtime's error enum has the same shape (`hipErrorNoBinaryForGpu: Unable to find code object …`).
_YAML_KEY = lazy_compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+:(?: \S.*)?$|kind: [A-Z][A-Za-z]+\s*$")
# An environment report, one `Key: value` a line (SGLang's check_env, torch's / vLLM's collect_env,
# lscpu): a key of one to six words, then a value of a report's kinds only: a version, perhaps after
# a name and before details (`2.5.1+cu124`, `Ubuntu 22.04.4 LTS (x86_64)`, `3.10.12 (main, …) [GCC
# 11.4.0]`), a truth value or a not-available marker, an absolute path, a Hub model id, a measured
# rate (`Throughput: 12577.55 tokens/s`); and the GPU listing (`GPU
# 0,1: NVIDIA H100 80GB HBM3`). Guarded: no error word anywhere (`RuntimeError: CUDA 12.4 …`).
_ENV_REPORT = lazy_compile(
    r"(?:[A-Za-z][\w+()/-]*(?: [\w+()/,-]+){0,5}: +"
    r"(?:(?:[A-Z][\w-]* ){0,3}v?\d+(?:\.\d+)+[\w.+~-]*(?: .*)?"
    r"|(?:True|False|Yes|No|N/A|None|Not Available|Could not collect|Module Not Found)"
    r"|/[\w./+-]*"
    # a model as the Hub names it (`Testing model: THUDM/glm-4-9b-chat`)
    r"|[\w.-]+/[\w.-]+"
    # a measured rate, as a benchmark script prints its result (`Throughput: 12577.55 tokens/s`)
    r"|-?\d+(?:\.\d+)? +(?:tokens?|toks?|req|requests?|samples?|seqs?|it|[KMG]i?B)/s)"
    r"|GPU [\d,]+: \S.*"
    # check_env's keys whose value is free text or a count
    r"|(?:ulimit soft|Hypervisor vendor|NVCC|HIPCC|(?:CUDA|ROCM) Driver Versions?): \S.*)\s*$"
)
# `pip freeze` rows (`torch==2.5.1`, `sgl-kernel @ file:///…`): tried late, as any line's first word
# would be scanned for it.
_PIP_FREEZE = lazy_compile(r"[A-Za-z0-9][\w.-]*(?:\[[\w,]+\])?(?:==[\w.+!-]+| @ \S+)\s*$")
# A record printed field by field by native code with its values aligned in a column: a C/C++
# struct dump (DeepGEMM's / CUTLASS's TMA descriptor on a failed `cuTensorMapEncode…`: `format         9`,
# `gmem_address   0xd86cd7000`, `globalDim      (128,1,8,282843,1)`, `TMA Desc Addr:   0xfffe8d7f6a80`;
# any `printf("%-14s %d\n", …)` dump). A field name, then only numbers: one number, a hex address,
# or a tuple/list of numbers; a name followed by words (prose, a message) is not this, and nor is
# a number after an error word (`error 700`, `exit 1`: a status, not a field).
_NUM = r"(?:-?\d+(?:\.\d+)?|0x[0-9A-Fa-f]+)"
_NUMS = rf"(?:{_NUM}|[(\[] *{_NUM}(?: *, *{_NUM})* *,? *[)\]])"
_FIELD_DUMP = lazy_compile(
    rf"(?!(?:error|errno|err|code|exit|status|signal|fail\w*|abort\w*|retry|rc)\b)"
    rf"[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)* +{_NUMS}\s*$"
    # a label of words and a colon, the value aligned after it (two spaces or more)
    rf"|[A-Z][A-Za-z0-9]*(?: [A-Za-z0-9]+){{0,3}}: {{2,}}{_NUMS}\s*$"
    # torch inductor's autotune header (select_algorithm: `strides: [0, 1], [4096, 1], [1, 4096]`,
    # `dtypes: torch.bfloat16, torch.float32`): a name, then a list of numeric lists or of dotted names
    r"|[a-z]+: (?:\[[-\d, ]*\](?:, \[[-\d, ]*\])*|[a-z_]+\.\w+(?:, [a-z_]+\.\w+)*)\s*$"
)
# A title a program prints alone before a block (`print("GPU Info:")`, check_env's `NVIDIA Topology:`,
# nvidia-smi's `Legend:`): one to four words and an ASCII colon; guarded: no error word (`Scheduler hit
# an exception:` heads a failure). A title a person typed in the report around the log (`Before this
# PR：`, with an input method's full-width colon) is prose and stays a gap. Tried after the message
# indices and the runtime's fixed texts (`Process SpawnProcess-1:`).
_HEADING = lazy_compile(r"[A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,3}:\s*$")
# A command as a shell prompt echoes it or a README shows it, outside a launch (the grammar knows
# SGLang's own commands): environment assignments before the command (`LLM_MODEL=x TP=1 modal run
# app.py::main --task benchmark`), or a prompt's `$` with or without its space (`$python ./t.py`).
# A command word, then at least one argument that is a flag, a path or a script: prose after a `$`
# or after `NAME=1` has none.
# Also a program run by its relative path with flags (`./transfer_engine_bench --mode=target --device_name=mlx5_0`).
# Also one environment assignment of a command the paste broke over lines with `\` (`NCCL_IB_HCA=mlx5_0,mlx5_1 \`,
# `CUDA_VISIBLE_DEVICES=7 \`), or set from a command's output (`IB_NODE_IP=`hostname -i``, `X=$(nproc)`).
# Also bash's `set -x` trace lines, a prompt with its user and host (`root@node-1:/workspace# nvidia-smi`, `(venv) u@h:~$ ls`), and
# the programs a report runs around a server (curl, docker, pip, git, torchrun, …) typed bare.
_SHELL_COMMAND = lazy_compile(
    r"(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^#$\s]*[#$] \S.*$"
    r"|(?:export )?[A-Z_][A-Z0-9_]*=(?:\"[^\"]*\"|'[^']*'|[^\s\"'`$]*)(?: +\\)\s*$"
    r"|(?:export )?[A-Z_][A-Z0-9_]*=(?:`[^`]+`|\$\([^()]+\))(?: +\\)?\s*$"
    # a zsh theme's prompt before a typed command (pure / starship: `~/sglang-dlc ❯ kubectl get po`)
    r"|(?:~|/)[^\s❯]* ❯ \S.*$"
    # the rest of a command a hard wrap broke (no `\\`): three or more flags, nothing but arguments
    r"|(?:\S+ +)?--[a-z][\w-]*(?:=\S+)?(?: +--[a-z][\w-]*(?:[= ][^\s-]\S*)?){2,}\s*$"
    r"|\.\.?/[\w.-]+(?:/[\w.-]+)*(?=.*? -{1,2}[A-Za-z])(?: +\S+)+\s*$"
    # bash's trace of each command it runs (`set -x`): `+ python3 -m sglang.launch_server …`, `++ hostname`
    r"|\++ [A-Za-z_./$][\w./$=-]*(?: \S.*)?$"
    r"|(?:(?:[A-Z_][A-Z0-9_]*=\S* +)+|\$ ?|(?=(?:curl|wget|docker|podman|kubectl|helm|pip3?|uv|git|torchrun|"
    r"srun|sbatch|mpirun|deepspeed|accelerate|huggingface-cli|hf|modal|nsys|ncu|sudo) ))[a-z][\w.-]*"
    r"(?=.*? (?:-{1,2}[A-Za-z]|\S*/|\S+\.(?:py|sh)\b))(?: +\S+)+\s*$"
)
# A Python source line quoted without its `File "…", line N` line (a paste kept only the line that
# raised, above the exception): a compound statement's header ending in `:` whose head is code (an
# attribute, a call, a subscript or a comparison: `if self.sampling_params.max_new_tokens > 0:`),
# or a function's `def name(…):`. Prose ending in a colon has words, not code, after its `if`.
_PYTHON_SOURCE = lazy_compile(
    r"(?:(?:el)?if|while|for|with|async (?:for|with)|except) "
    r"(?=[^:]*(?:\w\.[A-Za-z_]|\w\(|\w\[| [<>]=? | [!=]= ))[^#]*:\s*$"
    r"|(?:async )?def [A-Za-z_]\w*\(.*\)(?: -> [^:]+)?:\s*$"
    # the interactive interpreter's input: `>>> import sglang`
    r"|>>> \S.*$"
)
# A Python assignment quoted from the reporter's script (`llm = LLM(model="…", tp_size=8)`, `prompts =
# ["Hello"]`): a name, ` = `, then a call, a list, a dict or a tuple. The shape only selects the
# candidates; Python's own parser decides (`_python_assignment`), so prose with an `=` is never one.
_ASSIGNMENT_HEAD = lazy_compile(r"[A-Za-z_][\w.]*(?:\[[^\]]*\])? = (?:[A-Za-z_][\w.]*\(|[\[{(])")


def _python_assignment(body: str) -> bool:
    if not _ASSIGNMENT_HEAD.match(body):
        return False
    import ast  # only for candidate lines: most logs never import it

    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign):
        return False
    return isinstance(tree.body[0].value, (ast.Call, ast.List, ast.Dict, ast.Tuple, ast.Set, ast.ListComp,
                                           ast.DictComp, ast.Subscript))


# An identifier a viewer or a console export shortened to its two ends (`2855e530…vdumckda`: a
# job, run or line id), alone on its line: the metadata a web log viewer prints around each line.
_ELIDED_ID = lazy_compile(r"(?=[0-9a-f]*\d)[0-9a-f]{6,}(?:…|\.\.\.)[0-9A-Za-z]{4,}\s*$")
# Fixed text other programs print that no envelope marks: glog before its initialisation. A cut
# head of it (at least MIN_CUT_HEAD characters) is a cut line.
_FOREIGN_TEXTS = ("WARNING: Logging before InitGoogleLogging() is written to STDERR",)
MIN_CUT_HEAD = 12


_FOREIGN_TEXT_HEADS = frozenset(fixed[:MIN_CUT_HEAD] for fixed in _FOREIGN_TEXTS)


def _foreign_text(body: str) -> str | None:
    if body[:MIN_CUT_HEAD] not in _FOREIGN_TEXT_HEADS:  # (one set lookup for most lines)
        return None
    for fixed in _FOREIGN_TEXTS:
        if body == fixed:
            return "foreign-logger"
        if len(body) >= MIN_CUT_HEAD and fixed.startswith(body):
            return "cut-line"
    return None


# A word that names a failure: a line of a guarded shape (below) that holds one is left a gap (a
# JSON error response, `RuntimeError: CUDA 12.4 …` in a report's shape, `Scheduler hit an exception:`).
# Looked for only once a guarded shape matched (substring tests of the lowered line: faster than a
# case-insensitive alternation), so other lines pay nothing for it.
_ERROR_WORDS = ("error", "exception", "traceback", "warning", "fail", "fatal", "abort", "crash", "killed", "timeout")


def _names_failure(body: str) -> bool:
    low = body.lower()
    return any(word in low for word in _ERROR_WORDS)


# Shapes tried after the message indices (a known message wins over a look-alike shape), in order:
# (pattern, kind, guarded by _names_failure).
_LATE_SHAPES = ((_DATA, "data", False), (_JSON, "data", True), (_CONFIG_DUMP, "config-dump", False),
                (_ENV_REPORT, "config-dump", True), (_YAML_KEY, "config-dump", True),
                (_PIP_FREEZE, "pip", False), (_FIELD_DUMP, "field-dump", False),
                (_SHELL_COMMAND, "shell-command", False), (_PYTHON_SOURCE, "python-source", False),
                (_ELIDED_ID, "viewer-metadata", False), (_HEADING, "heading", True))


def paste_kind(text: str) -> str | None:
    """The kind of a line that is the paste's own structure — markdown, a command or Python statement
    quoted as typed, a heading — by those shapes alone (`parsing/quoting.py`: cheaper than `classify`,
    which first looks the line up in the message indices)."""
    body = text.strip()
    if _MARKDOWN.match(body):
        return "markdown"
    for pattern, kind, guarded in ((_SHELL_COMMAND, "shell-command", False), (_PYTHON_SOURCE, "python-source", False),
                                   (_HEADING, "heading", True)):
        if pattern.match(body) and not (guarded and _names_failure(body)):
            return kind
    return None


def classify(text: str) -> str | None:
    """The kind of a line the grammar did not parse (its message, envelope removed), or None."""
    body = text.strip()
    if not body:
        return None
    if _PIP.match(body):
        return "pip"
    if _MARKDOWN.match(body):
        return "markdown"
    if _SHELL_OUTPUT.match(body):
        return "shell-output"
    if _FOREIGN_LOGGER.match(body):
        return "foreign-logger"
    if _LIBRARY_TEXT.match(body):
        return "library-text"
    foreign = _foreign_text(body)
    if foreign is not None:
        return foreign
    if _PYTHON_WARNING.match(body):
        return "python-warning"
    if "%" in body and _PROGRESS_BAR.fullmatch(body):  # (every bar form has its percentage)
        return "progress-bar"
    if _TEST_RUNNER.match(body):
        return "test-runner"
    if is_source_message(body):
        return "sglang-source"
    if is_library_message(body):
        return "library-source"
    # AITER (SGLang's ROCm kernels) logs as `[aiter] %(message)s`, the level not printed: its own message after
    # the tag (`[aiter] import [module_aiter_enum] under /sgl-workspace/aiter/aiter/jit/module_aiter_enum.so`)
    if body.startswith("[aiter] ") and is_library_message(body[8:].lstrip()):
        return "library-source"
    if is_cut_envelope(body) or is_cut_source_message(body):
        return "cut-line"
    for pattern, kind, guarded in _LATE_SHAPES:
        if pattern.match(body) and not (guarded and _names_failure(body)):
            return kind
    if _python_assignment(body):
        return "python-source"
    if is_cut_late(body):
        return "cut-line"
    if _BARE_LEVEL_LOGGER.match(body):
        return "foreign-logger"
    if body[0] == "." and _test_dots(body):
        return "test-runner"
    return None


# unittest's progress: a dot per passed test, no newline, so the next output is glued to the dots
# (`...........Some requests fail to receive KV Cache transfer done signal …`, `.Traceback (most
# recent call last):`). Taken only when what follows the dots is itself a known line.
_TEST_DOTS = lazy_compile(r"\.+(?=[A-Z\[])")


def _test_dots(body: str) -> bool:
    dots = _TEST_DOTS.match(body)
    if dots is None:
        return False
    rest = body[dots.end():]
    return rest.startswith("Traceback (most recent call last):") or classify(rest) is not None
