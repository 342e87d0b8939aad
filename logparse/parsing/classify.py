"""Deliberate classes for lines the grammar has no rule for: what kind of text a pasted log holds
besides SGLang's records. Decided by structure (whose output a line is), never by one excerpt's
sentences; only lines that came back `Unparsed` get here, so common lines pay nothing.

Kinds (`Coverage.classified` counts them; the lines stay `Unparsed` for every other purpose, so
tracebacks and commands still assemble across them):
- `sglang-source`: a message SGLang's own source prints (`grammar/sourcemsgs.py`);
- `pip`: pip's / uv's install output (`Collecting x`, `Requirement already satisfied: …`);
- `markdown`: the paste's markdown around the log (code fences, headings, rules, table rows, HTML
  `<details>` tags);
- `shell-output`: output of commands pasted around a launch (`nvidia-smi` tables, `ls -l` rows,
  `env` dumps);
- `foreign-logger`: another logger's record (Python logging's default `LEVEL:name:message`,
  `[Gloo]` lines, torch c10d's `[PG 3 Rank 0] …` / `[c10d] …`, sglang-router's `[Router (Python)] …`);
- `library-text`: fixed text a library prints around an error (torch's CUDA-error advice lines);
- `cut-line`: a line cut short where an excerpt ends or a hard wrap fell: the start of one of
  SGLang's messages (at least 12 characters of its literal head), of an envelope (`[2025-`, an
  envelope alone, vLLM's / torch's cut inside the file name, uvicorn's after the level) or of a
  progress bar before its percentage;
- `data`: a printed mapping (`{'run_name': 'before', 'throughput': …}`, a JSON record).
"""

from __future__ import annotations

from logparse.grammar.sourcemsgs import is_cut_source_message, is_source_message
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
)


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
    if is_source_message(body):
        return "sglang-source"
    if _CUT_ENVELOPE.match(body) or _CUT_HEAD.match(body) or is_cut_source_message(body):
        return "cut-line"
    if _DATA.match(body):
        return "data"
    return None
