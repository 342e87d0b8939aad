"""Deliberate classes for lines the grammar has no rule for: what kind of text a pasted log holds
besides SGLang's records. Decided by structure (whose output a line is), never by one excerpt's
sentences; only lines that came back `Unparsed` get here, so common lines pay nothing.

Kinds (`Coverage.classified` counts them; the lines stay `Unparsed` for every other purpose, so
tracebacks and commands still assemble across them):
- `sglang-source`: a message SGLang's own source prints (`grammar/sourcemsgs.py`);
- `library-source`: a message of a library SGLang runs on, as that library's source prints it
  (torch, transformers, uvicorn, …: the other files of `grammars/source-messages/`);
- `python-warning`: the location line Python's `warnings` module prints before a warning's
  source line (`/path/file.py:12: UserWarning: …`): its shape is the `warnings` format, whoever warns;
- `progress-bar`: a tqdm bar of any library (`desc: 42%|████ | 5/12 [00:01<00:02, 3.1it/s]`), with
  or without the bar and the rate part (a paste drops the bar's block characters);
- `test-runner`: pytest's and unittest's progress and summary lines (`tests/x.py::test_y PASSED
  [ 50%]`, `==== 2 failed, 1 passed in 3.2s ====`, `Ran 3 tests in 0.52s`, `FAILED (errors=1)`);
- `config-dump`: one setting printed as `name: value` / `name=value` (a config printed field by
  field, `print(f"{x=}")`, `pip list` rows): a lowercase identifier, then a value;
- `pip`: pip's / uv's install output (`Collecting x`, `Requirement already satisfied: …`);
- `markdown`: the paste's markdown around the log (code fences, headings, rules, table rows, HTML
  `<details>` tags);
- `shell-output`: output of commands pasted around a launch (`nvidia-smi` tables, `ls -l` rows,
  `env` dumps, bash's job lines `[1] 3188749`, py-spy dump's `Process …:` / `Thread … (idle): "…"`);
- `foreign-logger`: another logger's record (Python logging's default `LEVEL:name:message`,
  `[Gloo]` lines, torch c10d's `[PG 3 Rank 0] …` / `[c10d] …`, sglang-router's `[Router (Python)] …`;
  the common envelopes of other programs: `file.py:123 - msg`, `2025-… - name - LEVEL - msg`,
  `2025-… NAME LEVEL file.py:12 msg`, loguru's `2025-… | LEVEL | …`, `LEVEL [module] msg`, UCX's `[1784273406.68] [host:pid:0]
  file.c:452 UCX ERROR …`, an HTTP access line `127.0.0.1:39394 - "POST /v1/… HTTP/1.1" 200 OK`,
  a native backtrace frame `[bt] (1) lib.so(+0x5af51) [0x7f…]` / ` 3  /lib/libc.so.6(+0x1a07cd) [0x7f…]`);
- `library-text`: fixed text a library or the runtime prints around an error (torch's CUDA-error
  advice lines, a CUDA device-side assertion, CPython's `Error in sys.excepthook:` /
  `Original exception was:` / `Exception ignored in: …`, multiprocessing's `Process Process-2:`);
- `cut-line`: a line cut short where an excerpt ends or a hard wrap fell: the start of one of
  SGLang's messages (at least 12 characters of its literal head), of an envelope (`[2025-`, an
  envelope alone, vLLM's / torch's cut inside the file name, uvicorn's after the level) or of a
  progress bar before its percentage;
- `data`: a printed mapping (`{'run_name': 'before', 'throughput': …}`, a JSON record).
"""

from __future__ import annotations

from logparse.grammar.sourcemsgs import (
    is_cut_library_message,
    is_cut_source_message,
    is_library_message,
    is_source_message,
)
from logparse.model.lazyre import lazy_compile

__all__ = ["classify"]

# Compiled on first use: most short logs have few unrecognised lines, and some none of a kind.
_PIP = lazy_compile(
    r"(?:Collecting|Downloading|Requirement already satisfied:|Installing collected packages:|Successfully "
    r"(?:installed|uninstalled|built)|Attempting uninstall:|Found existing installation:|Uninstalling|"
    r"Building wheels? for|Created wheel for|Stored in directory:|Using cached|Obtaining|Preparing metadata|"
    r"Getting requirements to build|Installing build dependencies|Looking in (?:indexes|links):|"
    r"Building editable for|Installing backend dependencies|(?:Resolved|Prepared|Installed|Uninstalled|Audited) "
    r"\d+ packages? in|ERROR: pip's dependency resolver|WARNING: Running pip as the 'root' user|"
    r"ERROR: (?:Could not find a version|No matching distribution)|DEPRECATION: )"
    # uv's changed-package lines: ` + torch==2.8.0` / ` - torch==2.7.1`
    r"|[ ]?[+-] [A-Za-z0-9_.-]+==\S+$"
)
_MARKDOWN = lazy_compile(
    r"(?:`{3,}|~{3,})[\w+-]*\s*$"  # a code fence, with its language
    r"|#{1,6} \S"  # a heading
    r"|(?:-{3,}|\*{3,}|_{3,})\s*$"  # a horizontal rule
    r"|\|.*\|\s*$"  # a table row (also nvidia-smi's)
    r"|</?(?:details|summary|br|pre|code|p|b|i)\b[^>]*>"  # HTML a comment keeps
    r"|>\s*$"  # an empty quote line
)
_SHELL_OUTPUT = lazy_compile(
    r"\+[-=+]{10,}\+\s*$"  # nvidia-smi / tabulate borders
    r"|[-dlcbps][-rwxsStT]{9}[.+@]? +\d+ +\S+ +\S+ +\d"  # ls -l rows
    r"|total \d+\s*$"
    r"|[A-Z][A-Z0-9_]*=\S*\s*$"  # an `env` dump line
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
_FOREIGN_LOGGER = lazy_compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"  # Python logging's BASIC_FORMAT
    r"|\[Gloo\] "
    # torch's ProcessGroupNCCL / c10d messages (after their glog envelope, or alone):
    # `[PG 3 Rank 0] Heartbeat monitor timed out! …`, `[PG ID 2 PG GUID 3 Rank 1] …`, `[c10d] waitForInput: …`
    r"|\[PG (?:ID )?\d+(?: PG GUID \d+(?:\([\w]+\))?)? Rank \d+\] "
    r"|\[c10d\] "
    # sglang-router's launchers: `[Router (Python)] 2025-… - INFO - … - launch_server.py:56`, `[Router (Rust)] …`
    r"|\[Router \((?:Python|Rust)\)\] "
    # glog (Mooncake, TensorRT-LLM, …; torch's own has `[…]` around it): `I1120 11:09:23.594488 203018 pybind_client.cpp:218] …`
    r'|"?[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ [\w.-]+:\d+\] '
    # `file.py:123 - msg` (a logger whose format is `%(filename)s:%(lineno)d - %(message)s`)
    r"|[\w.-]+\.py:\d+ - \S"
    # `2025-04-03 12:06:29,258 - __main__ - INFO - msg` (`%(asctime)s - %(name)s - %(levelname)s - …`)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)? - [\w.<>-]+ - (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) -(?: |$)"
    # `2025-12-10 05:50:30 NIXL INFO    _api.py:361 msg` (a named component, its level, the file)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)? [A-Za-z][\w-]* +(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) +[\w.-]+\.\w+:\d+ "
    # loguru's default: `2025-01-01 12:00:00.123 | ERROR    | module:function:12 - msg` (also a
    # sink named `stderr`: `… | ERROR | stderr | msg`)
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)? \| (?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) +\|"
    # `INFO [sglang_router] msg`, `WARNING [vllm.config] msg`
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \[[\w.-]+\] \S"
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
    r"|(?:\[bt\] \(\d+\)|\d{1,3}) +\S+\.so[\w.-]*\([^)]*\) \[0x[0-9a-f]+\]\s*$"
)
# What is left of an SGLang envelope cut at the end of an excerpt: `[2025-`, `[2025-05-14 12:0`,
# or the whole envelope and nothing after it (`[2025-10-06 20:05:27 DP5 TP5]`).
# Other envelopes and heads cut where an excerpt ends: a uvicorn access line after its level
# (`INFO:     11.251.218.2`), vLLM's and torch's C++ envelopes inside their file name
# (`ERROR 12-01 12:00:00 tp_worker_overlap_`, `[rank4]:[E304 12:54:52.123710302 ProcessGroup`), a
# progress bar before its percentage (`Loading safetensors checkpoint shards:`).
_CUT_HEAD = lazy_compile(
    r"(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):\s+[\w.:\[\]-]*\s*$"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2} \[?[\w.]*\s*$"
    r"|(?:\[rank\d+\]:)?\[[IWEF]\d{3,4} \d{2}:\d{2}:\d{2}\.\d+(?: \d+)? [\w.]*\s*$"
    r"|(?:Loading (?:safetensors|pt|np_cache) checkpoint shards|Multi-thread loading(?: pt checkpoint)? shards"
    r"|Capturing batches \([^)]*\)|Capturing num tokens \([^)]*\)|Compiling num tokens \([^)]*\))\s*:?\s*$"
)
# A printed mapping or list of mappings (a benchmark's result dict, a JSON record): data, not a message.
_DATA = lazy_compile(r"""(?:\{['"][^'"]+['"]: .*\}|\[\{['"][^'"]+['"]: .*\}\])\s*$""")
_CUT_ENVELOPE = lazy_compile(r"\[\d{1,4}(?:-\d{0,2}){0,2}(?: [\d:.,]*)?(?: (?:[A-Z]+_)?[A-Z]{1,3}\d*)*\]?\s*$")
# Fixed text torch prints after a CUDA error (formats §1.7), when it is not part of a record.
_LIBRARY_TEXT = lazy_compile(
    r"CUDA kernel errors might be asynchronously reported at some other API call"
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
    r"|[A-Za-z0-9][\w.-]* {4,}\d+(?:\.[\w+]+)+\s*$"
)
# Fixed text other programs print that no envelope marks: glog before its initialisation.
_FOREIGN_TEXT = lazy_compile(r"WARNING: Logging before InitGoogleLogging\(\) is written to STDERR\s*$")


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
    if _FOREIGN_TEXT.match(body):
        return "foreign-logger"
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
    if _CUT_ENVELOPE.match(body) or _CUT_HEAD.match(body) or is_cut_source_message(body):
        return "cut-line"
    if _DATA.match(body):
        return "data"
    if _CONFIG_DUMP.match(body):
        return "config-dump"
    if is_cut_library_message(body):
        return "cut-line"
    return None
