"""Transformer callbacks for grammars/startup.lark: launch commands, server args, startup phases.

The grammar keeps startup lines coarse (a head terminal and a key=value or `key: value` body);
the values are split here. Values printed with a unit (`78.31 GB`, `4.12 s`) are read only when
the unit is there: a line cut inside a number must not yield a wrong number, it yields None.

Known-message codes (public identifiers, matched by rules) and their ``fields``:

- ``memory-baseline``: ``Memory baseline taken. mem usage=0.52 GB`` (0.5.23); ``mem_usage_gb``.
- ``comm-warmup-done``: ``NCCL warmup completed in 0.412s (tp_size=8, pp_size=1, ep_size=1)``
  (also RCCL/HCCL, 0.5.23); ``backend``, ``seconds``, ``tp_size``, ``pp_size``, ``ep_size``.
- ``draft-load-format``: ``Using draft model load_format: 'auto'``; ``load_format``.
- ``fp16-below-sm80``: ``Compute capability below sm80. Use float16 due to lack of bfloat16
  support.`` (pre-Ampere GPU).
- ``hicache-host-alloc``: ``Allocating 12.00 GB host memory for hierarchical KV cache.``; ``gb``.
- ``warmup-ended``: ``Warmup ended`` (``--warmups``).
- ``pd-warmup-start``: ``Start of pd disaggregation warmup ...``.
- ``pd-warmup-end``: ``End of prefill disaggregation mode warmup with status 200, resp: …``
  (0.5.9) / ``End of disaggregation warmup`` (0.5.23); ``status`` when printed.
- ``disagg-warmup-dp-done``: ``Disaggregation warmup requests completed for all 2 DP ranks``;
  ``dp_ranks``.
- ``chat-sampling-defaults``: ``Using default chat sampling params from model generation config:
  {…}``; ``params`` (the dict, or its text if unreadable).
- ``chat-template-format``: ``Using default HuggingFace chat template with detected content
  format: string``; ``content_format``.
- ``chat-template-autodetect``: ``Auto-detected --reasoning-parser as 'qwen3' from chat template``
  (0.5.23); ``option``, ``value``.
- ``chat-template-autodetect-failed``: ``--reasoning_parser=auto specified but could not detect
  reasoning parser from chat template. Disabling reasoning parser.`` (0.5.23); ``option``
  (kebab case).
- ``serve-backend``: ``Selected serve backend 'llm'`` (``sglang serve``); ``backend``.
- ``serve-dispatch-override``: ``Dispatch override enabled: --model-type=llm (skip auto
  detection)``; ``model_type``.
- ``flashinfer-autotune-begin`` / ``flashinfer-autotune-end``: ``Running FlashInfer autotune...`` /
  ``FlashInfer autotune completed.``.
- ``overlap-off-multimodal``: ``Overlap scheduler is disabled for multimodal models.``.
- ``chunked-prefill-off``: ``Automatically turn off --chunked-prefill-size as it is not supported
  for {model_type}``; ``model_type``.
- ``chunked-prefix-cache-on``: ``Chunked prefix cache is turned on.``.
- ``hybrid-attn-backend``: ``Using hybrid attention backend for decode and prefill:
  decode_backend=…, prefill_backend=….``; ``decode_backend``, ``prefill_backend``.
- ``mem-fraction-reduced``: ``Automatically reduce --mem-fraction-static to 0.855 because this is
  a multimodal model.``; ``mem_fraction_static``, ``reason``.
- ``attn-backend-default``: ``Attention backend not specified. Use fa3 backend by default.``;
  ``backend``.
- ``mla-backend-on``: ``FlashInfer MLA optimization is turned on. Use flashinfer backend for
  DeepseekV3ForCausalLM.`` (and the Triton/FlashMLA/Cutlass siblings); ``backend``,
  ``model_class`` when printed.
- ``platform-detected``: vLLM's ``Automatically detected platform cuda.``; ``platform``.
- ``ignorable-error-note``: ``The following error message 'operation scheduled before its
  operands' can be ignored.``; ``message``.
- ``hf-snapshot-found``: ``Found local HF snapshot for {model} at {path}``; ``model``, ``path``.
"""

from __future__ import annotations

import ast
import re
import shlex
from functools import lru_cache
from typing import Any

from logparse.grammar.transform.known import known_fields
from logparse.model.events import (
    CaptureBatchSizes,
    CaptureBegin,
    CaptureEnd,
    DistInitBegin,
    DistInitEnd,
    EngineStartupTimings,
    GlooConnected,
    GraphKind,
    KvCacheAllocated,
    KvCacheDtype,
    LaunchDp,
    MambaCacheAllocated,
    MemoryPoolEnd,
    NcclLog,
    NcclVersion,
    ProfiledTokensExceeded,
    ProgressBar,
    SchedulerLimits,
    ServerArgs,
    SwaPoolAllocated,
    WeightLoadBegin,
    WeightLoadEnd,
    WeightsReady,
)
from logparse.model.lazyre import lazy_compile
from logparse.model.numbers import bound_literal, present, to_float_or_none, to_int

Children = list[Any]
Result = tuple[type, dict[str, Any]]

# --------------------------------------------------------------------------- small value readers

_GB = lazy_compile(r"(-?\d+(?:\.\d+)?) ?GB")
_SECONDS = lazy_compile(r"(-?\d+(?:\.\d+)?) ?s\b")
_INT = lazy_compile(r"-?\d+")


def _gb(value: str) -> float | None:
    """'15.54 GB.' → 15.54; a value whose unit was cut ('0.58 G', '0.5') → None."""
    m = _GB.match(value.strip())
    return to_float_or_none(m.group(1)) if m else None


def _seconds(value: str) -> float | None:
    m = _SECONDS.match(value.strip())
    return to_float_or_none(m.group(1)) if m else None


def _after(text: str, label: str, reader: Any) -> Any:
    """The value printed after `label` (e.g. 'avail mem='), read with `reader`, or None."""
    i = text.find(label)
    if i < 0:
        return None
    return reader(text[i + len(label) :])


def _int_list(text: str) -> tuple[int, ...]:
    """'[1, 2, 4]' → (1, 2, 4). A list cut before its ']' keeps only the numbers that a ',' closed
    (the last one may have lost digits)."""
    start = text.find("[")
    if start < 0:
        return ()
    end = text.find("]", start)
    if end < 0:
        inner = text[start + 1 :]
        inner = inner[: inner.rfind(",") + 1] if "," in inner else ""
    else:
        inner = text[start + 1 : end]
    return tuple(n for n in map(to_int, _INT.findall(inner)) if n is not None)


_INT_VALUE = lazy_compile(r"-?\d+")
_FLOAT_VALUE = lazy_compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|-?inf")


def _typed(value: str) -> Any:
    """A command-line value: int, float (`0.85`, `1e-3`, `inf`), or the string itself."""
    if _INT_VALUE.fullmatch(value):
        n = to_int(value)  # None past MAX_INT_CHARS digits: keep the text
        return value if n is None else n
    if _FLOAT_VALUE.fullmatch(value):
        return float(value)
    return value


# --------------------------------------------------------------------------- server_args


_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_SPECIAL_FLOATS = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _literal(source: str) -> Any:
    """A repr's value: a Python literal, or its source text (object reprs such as `<LoadFormat.AUTO:
    'auto'>` or `SomeConfig(...)`)."""
    source = source.strip()
    try:
        return ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _SPECIAL_FLOATS.get(source, source)


def _split_top_level(text: str, start: int, close: str) -> tuple[list[str], bool]:
    """Split text[start:] at top-level commas up to the bracket `close` that ends the repr.
    Returns (items, complete); when the text ends first (a cut line), the unfinished last item is
    dropped and complete is False."""
    items: list[str] = []
    stack: list[str] = []
    quote = ""
    item_start = start
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "'" or c == '"':
            quote = c
        elif c in _CLOSERS:
            stack.append(_CLOSERS[c])
        elif c == "<" and text[item_start:i].rstrip().endswith(("=", ":")):
            stack.append(">")  # an object repr `<Enum.X: 'x'>` as a value
        elif stack:
            if c == stack[-1]:
                stack.pop()
        elif c == ",":
            items.append(text[item_start:i])
            item_start = i + 1
        elif c == close:
            last = text[item_start:i]
            if last.strip():
                items.append(last)
            return items, True
        i += 1
    return items, False


_DICT_KEY = lazy_compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\s*:""", re.DOTALL)
_KW_NAME = lazy_compile(r"\s*([A-Za-z_]\w*)=")


def _parse_server_args(body: str) -> dict[str, Any]:
    """`ServerArgs(a=1, …)` or `{'a': 1, …}` → args dict (typed values), style, complete; every
    number bounded (a 320-digit `mem_fraction_static` is NaN, counted as damage, not an int that
    overflows the first float() a rule makes of it)."""
    parsed = _parse_server_args_raw(body)
    parsed["args"] = bound_literal(parsed["args"])
    return parsed


def _parse_server_args_raw(body: str) -> dict[str, Any]:
    if body.startswith("ServerArgs("):
        try:
            tree = ast.parse(body, mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
        if isinstance(tree, ast.Call) and not tree.args:
            args: dict[str, Any] = {}
            for kw in tree.keywords:
                if kw.arg is not None:
                    try:
                        args[kw.arg] = ast.literal_eval(kw.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        args[kw.arg] = _literal(ast.get_source_segment(body, kw.value) or "")
            return {"args": args, "style": "dataclass", "complete": True}
        items, complete = _split_top_level(body, len("ServerArgs("), ")")
        args = {}
        for item in items:
            m = _KW_NAME.match(item)
            if m:
                args[m.group(1)] = _literal(item[m.end() :])
        return {"args": args, "style": "dataclass", "complete": complete}

    try:
        value = ast.literal_eval(body)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = None
    if isinstance(value, dict):
        return {"args": {str(k): v for k, v in value.items()}, "style": "dict", "complete": True}
    items, complete = _split_top_level(body, 1, "}")
    args = {}
    for item in items:
        m = _DICT_KEY.match(item)
        if m:
            key = m.group(1) if m.group(1) is not None else m.group(2)
            args[key] = _literal(item[m.end() :])
    return {"args": args, "style": "dict", "complete": complete}


# --------------------------------------------------------------------------- launch commands

_ENV_ASSIGN = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = lazy_compile(r"(?:.*/)?python[\d.]*")
_SHELL_STOP = ("|", "||", "&", "&&", ";", ">", ">>", "<")


def strip_shell_comment(text: str) -> str:
    """`text` without a shell comment: a `#` that starts a word outside quotes ends the command,
    as bash reads it (`--disable-cuda-graph # for faster test`). A `#` inside a word (`a#b`, a URL's
    fragment) or inside quotes is the word's own; shlex's `comments=True` would cut those too."""
    if "#" not in text:
        return text
    quote = ""
    escaped = False
    at_word_start = True  # after unescaped blanks outside quotes (or at the start)
    for i, c in enumerate(text):
        if escaped:
            escaped = at_word_start = False
        elif c == "\\" and quote != "'":
            escaped, at_word_start = True, False
        elif quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote, at_word_start = c, False
        elif c in " \t":
            at_word_start = True
        elif c == "#" and at_word_start:
            return text[:i].rstrip()
        else:
            at_word_start = False
    return text


@lru_cache(maxsize=4096)
def shell_split(text: str) -> tuple[str, ...] | None:
    """`shlex.split(text)` of the command before any shell comment (`strip_shell_comment`) as a
    tuple, None for an unbalanced quote (a cut line). Remembered by text: pasted sessions repeat
    their commands (the corpus profile: ~11k splits of a few hundred distinct lines, ~6 % of its
    one-core time); callers get a list of their own."""
    try:
        return tuple(shlex.split(strip_shell_comment(text)))
    except ValueError:
        return None


def _shell_words(text: str) -> list[str]:
    body = text.strip()
    body = body.removesuffix("\\")
    words = shell_split(body)
    return list(words) if words is not None else body.split()


def _is_flag(word: str) -> bool:
    return word.startswith("--") and len(word) > 2


def _parse_command(text: str) -> dict[str, Any]:
    words = _shell_words(text)
    i = 0
    n = len(words)
    env: dict[str, str] = {}
    program = ""
    if i < n and words[i] == "Command:":
        i += 1
    if i < n and words[i].startswith("$"):
        if words[i] == "$":
            i += 1
        else:
            words[i] = words[i][1:]
    if i < n and words[i] == "nohup":
        i += 1
    while i < n and _ENV_ASSIGN.match(words[i]):
        name, _, value = words[i].partition("=")
        env[name] = value
        i += 1
    if i + 2 < n and _PYTHON.fullmatch(words[i]) and words[i + 1] == "-m":
        program = words[i + 2]
        i += 3
    if not program and i + 1 < n and words[i] == "sglang" and words[i + 1] == "serve":
        program = "sglang serve"
        i += 2
    flags: dict[str, Any] = {}
    while i < n:
        word = words[i]
        if word in _SHELL_STOP or word.startswith(("2>", "1>", ">", "&>")):
            break
        i += 1
        if not _is_flag(word):
            continue  # a positional argument or a stray continuation backslash
        name, eq, value = word.partition("=")
        name = "--" + name[2:].replace("_", "-")
        if eq:
            flags[name] = _typed(value)
            continue
        values: list[Any] = []
        while i < n and not _is_flag(words[i]) and words[i] not in _SHELL_STOP and words[i] != "\\":
            if words[i].startswith(("2>", "1>", ">", "&>")):
                break
            values.append(_typed(words[i]))
            i += 1
        if not values:
            flags[name] = True
        elif len(values) == 1:
            flags[name] = values[0]
        else:
            flags[name] = values
    return {"program": program, "env": env, "flags": flags, "text": text}


# --------------------------------------------------------------------------- graphs and bars

_CAPTURE = lazy_compile(r"Capture (.*? graph) (?:begin|end|bs|num tokens)")

# (prefix of the printed graph name, kind); first match wins.
_GRAPH_KINDS = (
    ("target prefill ", GraphKind.PREFILL),
    ("draft prefill ", GraphKind.PREFILL),
    ("target verify ", GraphKind.VERIFY),
    ("target decode ", GraphKind.TARGET),
    ("target extend ", GraphKind.TARGET),
    ("draft decode ", GraphKind.DRAFT),
    ("draft verify ", GraphKind.DRAFT),
    ("draft extend ", GraphKind.DRAFT_EXTEND),
    ("draft ", GraphKind.DRAFT),
    ("piecewise ", GraphKind.PIECEWISE),
)


def _graph(text: str) -> dict[str, Any]:
    m = _CAPTURE.match(text)
    graph = m.group(1) if m else "cuda graph"
    kind = GraphKind.TARGET
    for prefix, k in _GRAPH_KINDS:
        if graph.startswith(prefix):
            kind = k
            break
    device = graph.rsplit(" ", 2)[-2].lower()
    return {"graph": graph, "graph_kind": kind, "device": device}


_BAR_HEAD = lazy_compile(r"(?:([^\s|:][^|:]*): +| *)(\d{1,3})%")
_BAR_COUNT = lazy_compile(r"\|\s*(\d+)/(\d+)(?![\d.])")
_BAR_TIMES = lazy_compile(r"\[((?:\d+:)?\d+:\d+)<((?:\d+:)?\d+:\d+|\?)")

# (test on the description, bar kind); first match wins.
_BAR_KINDS: tuple[tuple[Any, str], ...] = (
    (
        lambda d: (
            "checkpoint shards" in d
            or d.startswith(("Loading safetensors using", "Multi-thread loading"))
        ),
        "checkpoint-load",
    ),
    (lambda d: d.startswith("Capturing batches"), "capture"),
    (lambda d: d.startswith(("Compiling num tokens", "Capturing num tokens")), "piecewise"),
    (lambda d: d.startswith("Capturing prefill shape"), "prefill-capture"),
    (
        lambda d: (
            (d.startswith("Fetching ") and d.endswith(("files", "file")))
            or d.startswith("Downloading")
            or d.endswith(
                (".safetensors", ".bin", ".json", ".model", ".txt", ".py", ".gguf", ".pt")
            )
        ),
        "download",
    ),
)


def _clock(text: str) -> float | None:
    """'01:02:03' → 3723.0; None (damage) when a part is not a bounded integer."""
    seconds = 0.0
    for part in text.split(":"):
        n = to_int(part)
        if n is None:
            return None
        seconds = seconds * 60 + n
    return seconds


def _bar(text: str) -> dict[str, Any]:
    m = _BAR_HEAD.match(text)
    if m is None:  # cannot happen: PROGRESS_BAR has this head
        return {"desc": text.strip()}
    desc = (m.group(1) or "").strip()
    kw: dict[str, Any] = {"desc": desc, "bar_kind": "other", **present(percent=to_int(m.group(2)))}
    for test, kind in _BAR_KINDS:
        if desc and test(desc):
            kw["bar_kind"] = kind
            break
    rest = text[m.end() :]
    count = _BAR_COUNT.search(rest)
    if count:
        kw.update(present(n=to_int(count.group(1)), total=to_int(count.group(2))))
    times = _BAR_TIMES.search(rest)
    if times:
        kw["elapsed_s"] = _clock(times.group(1))
        if times.group(2) != "?":
            kw["remaining_s"] = _clock(times.group(2))
    return kw


# --------------------------------------------------------------------------- key=value bodies


def _kv_items(body: str, sep: str, unitless_last: bool = True) -> list[tuple[str, str]]:
    """'a=1, b c=2 GB.' → [('a', '1'), ('b c', '2 GB.')] (sep '=' or ': ').

    Every item but the last is known to be complete (a ', ' follows it). With unitless_last=False
    the last item is dropped unless it holds a digit followed by a unit letter: in a line cut at
    the end of an excerpt, 'dtype=torch.bf' or '#tokens: 4661' would be wrong values, while a cut
    '0.58 G' is caught by the unit check of _gb/_seconds."""
    out = []
    items = body.rstrip().removesuffix(",").split(", ")
    for i, item in enumerate(items):
        key, found, value = item.partition(sep)
        if not found:
            continue
        if i == len(items) - 1 and not unitless_last and not re.search(r"\d ?[A-Za-z]", value):
            continue
        out.append((key.strip(), value))
    return out


_LIMIT_KEYS = {
    "max_total_num_tokens": "max_total_num_tokens",
    "max_total_num_token": "max_total_num_tokens",  # 0.1.x's singular spelling
    "max_prefill_num_token": "max_prefill_tokens",  # 0.1.x
    "chunked_prefill_size": "chunked_prefill_size",
    "max_prefill_tokens": "max_prefill_tokens",
    "max_running_requests": "max_running_requests",
    "context_len": "context_len",
}


class StartupCallbacks:
    # These callbacks read token texts only (never `.type`): the fast path passes them plain str.
    PLAIN_TOKEN_CALLBACKS: tuple[str, ...] = ("nccl_log",)

    def server_args(self, children: Children) -> Result:
        return ServerArgs, _parse_server_args(str(children[0]))

    def launch_dp(self, children: Children) -> Result:
        dp, gpu = (_INT.findall(str(children[0])) + ["", ""])[:2]
        return LaunchDp, present(dp_rank=to_int(dp), base_gpu=to_int(gpu))

    def dist_init_begin(self, children: Children) -> Result:
        return DistInitBegin, {"variant": str(children[0]).split()[1]}

    def dist_init_end(self, children: Children) -> Result:
        text = str(children[0])
        return DistInitEnd, {
            "variant": text.split()[1],
            "elapsed_s": _after(text, "elapsed=", _seconds),
            "mem_usage_gb": _after(text, "mem usage=", _gb),
        }

    def nccl_version(self, children: Children) -> Result:
        return NcclVersion, {"version": str(children[0]).partition("==")[2]}

    def nccl_log(self, children: Children) -> Result:
        text = str(children[0])
        head, _, rest = text.partition(" NCCL ")
        where, _, dev = head.partition(" [")
        dev = dev.split("]", 1)[0] + "]"  # `6] misc/socket.cc:533`: the source location follows
        host, pid, tid = where.rsplit(":", 2)
        level, _, msg = rest.partition(" ")
        kw: dict[str, Any] = {
            "host": host,
            **present(pid=to_int(pid), tid=to_int(tid), device=to_int(dev[:-1])),
            "level": level,
            "text": msg,
        }
        m = re.search(r"\brank (\d+) n[Rr]anks (\d+)", msg)
        if m:
            kw.update(present(nccl_rank=to_int(m.group(1)), nranks=to_int(m.group(2))))
        m = re.match(r"NCCL version ([\w.+-]+)", msg)
        if m:
            kw["version"] = m.group(1)
        return NcclLog, kw

    def gloo_connected(self, children: Children) -> Result:
        rank, peers, expected = (_INT.findall(str(children[0])) + ["", "", ""])[:3]
        return GlooConnected, present(gloo_rank=to_int(rank), peers=to_int(peers), expected=to_int(expected))

    def weight_load_begin(self, children: Children) -> Result:
        return WeightLoadBegin, {"avail_mem_gb": _after(str(children[0]), "avail mem=", _gb)}

    def weight_load_end(self, children: Children) -> Result:
        text = str(children[0])
        body = text[len("Load weight end. ") :]
        if body.startswith("Committed "):
            return WeightLoadEnd, {
                "elapsed_s": _after(body, " in ", _seconds),
                "committed_after_capture": True,
            }
        kw: dict[str, Any] = {}
        for key, value in _kv_items(body, "=", unitless_last=False):
            if key == "elapsed":
                kw["elapsed_s"] = _seconds(value)
            elif key == "type":
                kw["model_class"] = value
            elif key == "dtype":
                kw["dtype"] = value
            elif key == "quant":
                kw["quant"] = value
            elif key == "avail mem":
                kw["avail_mem_gb"] = _gb(value)
            elif key == "mem usage":
                kw["mem_usage_gb"] = _gb(value)
        return WeightLoadEnd, kw

    def kv_cache_dtype(self, children: Children) -> Result:
        return KvCacheDtype, {"dtype": str(children[0]).rpartition(" ")[2]}

    def kv_cache_allocated(self, children: Children) -> Result:
        text = str(children[0])
        cut = text.find(" is allocated. ")
        upper = cut < 0
        if upper:
            cut = text.find(" VA upper bound. ")
        name = text[:cut]
        body = text[cut + len(" VA upper bound. " if upper else " is allocated. ") :]
        kw: dict[str, Any] = {"cache_name": name}
        if upper:
            kw["upper_bound"] = True
        for key, value in _kv_items(body, ": ", unitless_last=False):
            if key == "#tokens":
                if value.strip().isdigit():
                    kw.update(present(tokens=to_int(value)))
            elif key == "dtype":
                kw["dtype"] = value.strip()
            elif key == "K size":
                kw["k_size_gb"] = _gb(value)
            elif key == "V size":
                kw["v_size_gb"] = _gb(value)
            elif key == "KV size":
                kw["kv_size_gb"] = _gb(value)
        return KvCacheAllocated, kw

    def mamba_cache_allocated(self, children: Children) -> Result:
        text = str(children[0])
        kw: dict[str, Any] = {}
        m = re.search(r"max_mamba_cache_size: (\d+)", text)
        if m:
            kw.update(present(max_size=to_int(m.group(1))))
        # The labels are preceded by a space, so ' ssm_state size: ' is not the tail of
        # 'intermediate_ssm_state_cache size: '.
        for label, name in (
            (" conv_state size: ", "conv_gb"),
            (" ssm_state size: ", "ssm_gb"),
            (" intermediate_ssm_state_cache size: ", "intermediate_ssm_gb"),
            (" intermediate_conv_window_cache size: ", "intermediate_conv_gb"),
        ):
            value = _after(text, label, _gb)
            if value is not None:
                kw[name] = value
        return MambaCacheAllocated, kw

    def swa_pool_allocated(self, children: Children) -> Result:
        text = str(children[0])
        kw: dict[str, Any] = {}
        if text.startswith("SWAKVPool"):
            for key, value in _kv_items(text[len("SWAKVPool ") :], ": "):
                if key == "mem usage":
                    kw["mem_usage_gb"] = _gb(value)
                elif key == "swa size" and value.strip().isdigit():
                    kw.update(present(swa_tokens=to_int(value)))
                elif key == "full size" and value.strip().isdigit():
                    kw.update(present(full_tokens=to_int(value)))
        else:
            for key, value in _kv_items(text[text.index(". ") + 2 :], "="):
                if value.strip().isdigit():
                    if key == "full_layer_tokens":
                        kw.update(present(full_tokens=to_int(value)))
                    elif key == "swa_layer_tokens":
                        kw.update(present(swa_tokens=to_int(value)))
        return SwaPoolAllocated, kw

    def memory_pool_end(self, children: Children) -> Result:
        return MemoryPoolEnd, {"avail_mem_gb": _after(str(children[0]), "avail mem=", _gb)}

    def capture_begin(self, children: Children) -> Result:
        text = str(children[0])
        kw = _graph(text)
        kw["avail_mem_gb"] = _after(text, "avail mem=", _gb)
        m = re.search(r"\bbackend=([^,\s]+)", text)
        if m:
            kw["backend"] = m.group(1)
        for label in (" bs=[", " num_tokens=["):
            i = text.find(label)
            if i >= 0:
                kw["sizes"] = _int_list(text[i + len(label) - 1 :])
                break
        return CaptureBegin, kw

    def capture_end(self, children: Children) -> Result:
        text = str(children[0])
        kw = _graph(text)
        kw["elapsed_s"] = _after(
            text, "elapsed: " if "Time elapsed: " in text else "elapsed=", _seconds
        )
        kw["mem_usage_gb"] = _after(text, "mem usage=", _gb)
        kw["avail_mem_gb"] = _after(text, "avail mem=", _gb)
        i = text.find(" bs=[")
        if i >= 0:
            kw["sizes"] = _int_list(text[i + 4 :])
        return CaptureEnd, kw

    def capture_batch_sizes(self, children: Children) -> Result:
        text = str(children[0])
        what = "num tokens" if " num tokens [" in text else "bs"
        return CaptureBatchSizes, {"sizes": _int_list(text), "what": what}

    def progress_bar(self, children: Children) -> Result:
        return ProgressBar, _bar(str(children[0]))

    def scheduler_limits(self, children: Children) -> Result:
        kw: dict[str, Any] = {}
        text = str(children[0])
        if text.startswith("Rank "):  # 0.1.x: `Rank 0: max_total_num_token=…` (the rank before the fields)
            text = text.partition(": ")[2]
        for key, value in _kv_items(text, "="):
            name = _LIMIT_KEYS.get(key)
            if name is not None:
                if re.fullmatch(r"-?\d+", value.strip()):
                    kw.update(present(**{name: to_int(value)}))
            elif key in ("available_gpu_mem", "available_cpu_mem"):
                kw["available_mem_gb"] = _gb(value)
        return SchedulerLimits, kw

    def profiled_tokens_exceeded(self, children: Children) -> Result:
        total, profiled = (_INT.findall(str(children[0])) + ["", ""])[:2]
        return ProfiledTokensExceeded, present(max_total_tokens=to_int(total), profiled=to_int(profiled))

    def engine_startup_timings(self, children: Children) -> Result:
        body = str(children[0]).partition("): ")[2]
        phases: dict[str, float] = {}
        for m in re.finditer(r"(\w+)=(\{[^}]*\}?|[^,]*)", body):
            key, value = m.group(1), m.group(2)
            if value.startswith("{"):
                for inner in re.finditer(r"(\w+)=(-?\d+(?:\.\d+)?)(?=,|\})", value):
                    seconds = to_float_or_none(inner.group(2))
                    if seconds is not None:
                        phases[f"{key}.{inner.group(1)}"] = seconds
            elif re.fullmatch(r"-?\d+\.\d+", value.strip()):
                seconds = to_float_or_none(value)
                if seconds is not None:
                    phases[key] = seconds
        return EngineStartupTimings, {"phases": phases}

    def weights_ready(self, children: Children) -> Result:
        words = str(children[0]).split()
        return WeightsReady, present(seconds=to_float_or_none(words[4] if len(words) > 4 else None))


# --------------------------------------------------------------------------- known messages


def _quoted(text: str) -> str:
    return text[text.index("'") + 1 : text.rindex("'")]


@known_fields("MEMORY_BASELINE")
def _memory_baseline(tokens: list[str]) -> dict[str, Any]:
    return {"mem_usage_gb": _after(tokens[0], "mem usage=", _gb)}


@known_fields("COMM_WARMUP_DONE")
def _comm_warmup(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    kw: dict[str, Any] = {
        "backend": text.split(" ", 1)[0],
        **present(seconds=to_float_or_none(text.partition(" in ")[2].split("s", 1)[0])),
    }
    for key, value in re.findall(r"(\w+)=(\d+)", text):
        kw.update(present(**{key: to_int(value)}))
    return kw


@known_fields("DRAFT_LOAD_FORMAT")
def _draft_load_format(tokens: list[str]) -> dict[str, Any]:
    return {"load_format": _quoted(tokens[0])}


@known_fields("HICACHE_HOST_ALLOC")
def _hicache_host_alloc(tokens: list[str]) -> dict[str, Any]:
    words = tokens[0].split()
    return present(gb=to_float_or_none(words[1] if len(words) > 1 else None))


@known_fields("PD_WARMUP_END")
def _pd_warmup_end(tokens: list[str]) -> dict[str, Any]:
    m = re.search(r" with status (\d+), resp: ", tokens[0])
    return present(status=to_int(m.group(1))) if m else {}


@known_fields("DISAGG_WARMUP_DP_DONE")
def _disagg_warmup_dp_done(tokens: list[str]) -> dict[str, Any]:
    found = _INT.findall(tokens[0])
    return present(dp_ranks=to_int(found[0] if found else None))


@known_fields("CHAT_SAMPLING_DEFAULTS")
def _chat_sampling(tokens: list[str]) -> dict[str, Any]:
    return {"params": _literal(tokens[0].partition("config: ")[2])}


@known_fields("CHAT_TEMPLATE_FORMAT")
def _chat_template_format(tokens: list[str]) -> dict[str, Any]:
    return {"content_format": tokens[0].rpartition(" ")[2]}


@known_fields("CHAT_TEMPLATE_AUTODETECT")
def _chat_template_autodetect(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    return {"option": text.split(" ", 2)[1], "value": _quoted(text)}


@known_fields("CHAT_TEMPLATE_AUTODETECT_FAILED")
def _chat_template_autodetect_failed(tokens: list[str]) -> dict[str, Any]:
    return {"option": "--" + tokens[0][2:].partition("=")[0].replace("_", "-")}


@known_fields("SERVE_BACKEND")
def _serve_backend(tokens: list[str]) -> dict[str, Any]:
    return {"backend": _quoted(tokens[0])}


@known_fields("SERVE_DISPATCH_OVERRIDE")
def _serve_dispatch_override(tokens: list[str]) -> dict[str, Any]:
    return {"model_type": tokens[0].partition("--model-type=")[2].split(" ", 1)[0]}


@known_fields("CHUNKED_PREFILL_OFF")
def _chunked_prefill_off(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    model = text.partition(" not supported for ")[2] or text.partition(" disable radix cache for ")[2]
    return {"model_type": model.strip().rstrip(".")}


@known_fields("HYBRID_ATTN_BACKEND")
def _hybrid_attn_backend(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    decode = text.partition("decode_backend=")[2].partition(",")[0]
    prefill = text.partition("prefill_backend=")[2].strip().rstrip(".")
    return {"decode_backend": decode, "prefill_backend": prefill}


@known_fields("MEM_FRACTION_REDUCED")
def _mem_fraction_reduced(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    value, _, reason = text.partition(" to ")[2].partition(" because ")
    return {**present(mem_fraction_static=to_float_or_none(value)), "reason": reason.strip().rstrip(".")}


@known_fields("ATTN_BACKEND_DEFAULT")
def _attn_backend_default(tokens: list[str]) -> dict[str, Any]:
    return {"backend": tokens[0].split(" Use ", 1)[1].split(" ", 1)[0]}


@known_fields("MLA_BACKEND_ON")
def _mla_backend_on(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0].rstrip(".")
    kw: dict[str, Any] = {"backend": text.split(" Use ", 1)[1].split(" ", 1)[0]}
    if " backend for " in text:
        kw["model_class"] = text.rpartition(" ")[2]
    return kw


@known_fields("PLATFORM_DETECTED")
def _platform_detected(tokens: list[str]) -> dict[str, Any]:
    return {"platform": tokens[0].rstrip(".").rpartition(" ")[2]}


@known_fields("IGNORABLE_ERROR_NOTE")
def _ignorable_error_note(tokens: list[str]) -> dict[str, Any]:
    return {"message": _quoted(tokens[0])}


@known_fields("HF_SNAPSHOT_FOUND")
def _hf_snapshot_found(tokens: list[str]) -> dict[str, Any]:
    model, _, path = tokens[0][len("Found local HF snapshot for ") :].partition(" at ")
    return {"model": model, "path": path.strip()}
