"""Field parsers for grammars/notices.lark: the informational notices of SGLang and its libraries.

Every notice is a `KnownMessage` (code = the kebab-case name of its terminal, see `known.py`); the
grammar decides which family a line is, these parsers only read the values a consumer may want
(counts, sizes, paths, request ids, the c10d socket failure kind). Notices whose text carries no
value (`Cache flushed successfully!`, the CUDA error hints) have no parser: their code is the fact.

`t` = the texts of the alternative's kept tokens, the code terminal first, then the TEXT rest if any.
A value that does not parse is left out (`present`), never guessed.
"""

from __future__ import annotations

from typing import Any

from logparse.grammar.transform.known import known_fields
from logparse.model.lazyre import lazy_compile
from logparse.model.numbers import present, to_float_or_none, to_int

__all__: list[str] = []

_INT = lazy_compile(r"-?\d+")
_NUMBER = lazy_compile(r"\d+(?:\.\d+)?")
_KEY_INT = lazy_compile(r"(#?[a-z_-]+)[:=] ?(-?\d+)")
_GEMM_DIMS = lazy_compile(r"\b(N|K|num_groups)=(\d+)")
# The identity of a KV transfer in SGLang's f-strings: `{decode_req.req.rid=}` prints
# `decode_req.req.rid='abc'`, the 0.4.x form `rid=abc`; the room is a (possibly negative) integer.
_RID = lazy_compile(r"\brid=(?:'([^']*)'|([^\s']+))")
_ROOM = lazy_compile(r"\bbootstrap_room=(-?\d+)")
# `Config file not found at …/E=264,N=256,device_name=NVIDIA_B200,dtype=fp8_w8a8,block_shape=[128, 128].json`
_MOE_FILE = lazy_compile(r"E=(\d+),N=(\d+)(?:,device_name=([^,/]+?)(?:,dtype=(\w+))?(?=[,.]|$))?")


def _rest(t: list[str]) -> str:
    return t[1] if len(t) > 1 else ""


def _first_int(text: str) -> int | None:
    m = _INT.search(text)
    return to_int(m.group(0)) if m else None


def _first_number(text: str) -> float | None:
    m = _NUMBER.search(text)
    return to_float_or_none(m.group(0)) if m else None


def _after(text: str, marker: str) -> str:
    """The first whitespace-delimited word after `marker` ('' when absent), without a closing '.' or ','."""
    _, found, tail = text.partition(marker)
    if not found:
        return ""
    word = tail.split(" ", 1)[0]
    return word.rstrip(".,")


def _json_path(text: str, marker: str) -> str:
    """A MoE config file's path after `marker`, through `.json` (its `block_shape=[128, 128]` holds a
    blank); '' when the line was cut before the file name ended."""
    _, found, tail = text.partition(marker)
    path, dot, _ = tail.partition(".json")
    return path + dot if found and dot else ""


@known_fields("CUDA_GRAPH_ADDRESSES")
def _graph_addresses(t: list[str]) -> dict[str, Any]:
    return present(count=_first_int(t[0]))


@known_fields("CACHE_NOT_FLUSHED")
def _cache_not_flushed(t: list[str]) -> dict[str, Any]:
    # `#queue-req: 0, #running-req: 3` (≤0.5.1x) or `waiting=0, pending_dp=0, running=1, …` (0.5.2x).
    pairs = {k.lstrip("#"): to_int(v) for k, v in _KEY_INT.findall(_rest(t))}
    return present(queue=pairs.get("queue-req", pairs.get("waiting")),
                   running=pairs.get("running-req", pairs.get("running")))


@known_fields("MOE_BACKEND_UNSET", "SPEC_MOE_BACKEND_UNSET")
def _moe_backend_unset(t: list[str]) -> dict[str, Any]:
    text = t[0]
    kind = "a2a" if "_A2A_" in text else "runner"
    chosen = _after(text, "using ") or "auto"
    return {"setting": kind, "speculative": text.startswith("SPECULATIVE_"), "backend": chosen}


def _moe_file(text: str) -> dict[str, Any]:
    m = _MOE_FILE.search(text)
    if m is None:
        return {}
    return present(experts=to_int(m.group(1)), intermediate=to_int(m.group(2)), device_name=m.group(3),
                   dtype=m.group(4))


@known_fields("MOE_CONFIG_FOUND")
def _moe_config_found(t: list[str]) -> dict[str, Any]:
    path = _json_path(t[0], " from ")
    return present(path=path or None, **_moe_file(path))


@known_fields("MOE_CONFIG_DEFAULT")
def _moe_config_default(t: list[str]) -> dict[str, Any]:
    # The path is cut short in many pastes; the file name's fields are read as far as they go.
    rest = _rest(t)
    path = _json_path(rest, "Config file not found at ") or _after(rest, "Config file not found at ")
    return present(path=path or None, **_moe_file(path))


@known_fields("MOE_CONFIG_FALLBACK")
def _moe_config_fallback(t: list[str]) -> dict[str, Any]:
    text = t[0]
    path = _json_path(text, " not found at ")
    return present(path=path or None, triton_version=_after(text, "triton version ") or None, **_moe_file(path))


@known_fields("TORCH_COMPILE_GRAPH", "TORCH_COMPILE_GRAPH_LOADED")
def _compile_graph(t: list[str]) -> dict[str, Any]:
    text = t[0]
    shape = "dynamic" if "dynamic shape" in text else _after(text, " for shape ")
    seconds = text.rsplit(" ", 2)[-2] if text.endswith(" s") else None
    return present(shape=shape or None, seconds=to_float_or_none(seconds))


@known_fields("DYNAMO_TRANSFORM_TIME", "TORCH_COMPILE_TOTAL", "WEIGHTS_LOADING_TOOK")
def _seconds(t: list[str]) -> dict[str, Any]:
    return present(seconds=_first_number(t[0].partition(":")[2] or t[0]))


@known_fields("KILL_PROCESS_TREE")
def _kill_process_tree(t: list[str]) -> dict[str, Any]:
    rest = _rest(t)
    return present(parent_pid=to_int(_after(rest, "parent_pid=") or None), pid=to_int(_after(rest, " pid=") or None),
                   include_parent={"True": True, "False": False}.get(_after(rest, "include_parent=")))


@known_fields("PARAM_NOT_IN_PARAMS_DICT")
def _param_not_found(t: list[str]) -> dict[str, Any]:
    return {"name": t[0].split(" ", 2)[1]}


@known_fields("INPUT_EXCEEDS_MAX_LENGTH")
def _input_too_long(t: list[str]) -> dict[str, Any]:
    numbers = [to_int(n) for n in _INT.findall(t[0])]
    return present(input_tokens=numbers[0], max_tokens=numbers[1]) if len(numbers) >= 2 else {}


@known_fields("DIST_ENV")
def _dist_env(t: list[str]) -> dict[str, Any]:
    pairs = dict(item.split("=", 1) for item in t[0].split(" ") if "=" in item)
    return present(world_size=to_int(pairs.get("world_size")), global_rank=to_int(pairs.get("rank")),
                   local_rank=to_int(pairs.get("local_rank")), init_method=pairs.get("distributed_init_method"),
                   backend=pairs.get("backend"))


@known_fields("PYNCCL_LIBRARY")
def _pynccl_library(t: list[str]) -> dict[str, Any]:
    return {"library": t[0].rsplit(" ", 1)[-1]}


@known_fields("DECODE_TRANSFER_FAILED", "PREFILL_TRANSFER_FAILED", "PREFILL_BOOTSTRAP_FAILED")
def _kv_transfer_failed(t: list[str]) -> dict[str, Any]:
    head, rest = t[0], _rest(t)
    rid = _RID.search(rest)
    room = _ROOM.search(rest)
    _, has_exc, exc = rest.partition(" with exception ")
    return present(side="decode" if head.startswith("Decode") else "prefill",
                   stage="bootstrap" if "bootstrap failed" in head else "transfer",
                   tp_rank=_first_int(head),
                   rid=(rid.group(1) if rid.group(1) is not None else rid.group(2)) if rid else None,
                   bootstrap_room=to_int(room.group(1)) if room else None,
                   exception=exc.strip() if has_exc else None)


@known_fields("HICACHE_JIT_UNSUPPORTED")
def _hicache_jit(t: list[str]) -> dict[str, Any]:
    return present(element_size=_first_int(t[0]))


@known_fields("DEEPGEMM_JIT_COMPILING")
def _deepgemm_jit(t: list[str]) -> dict[str, Any]:
    text = t[0]
    kernel = text.partition("<")[2].partition(">")[0]
    pairs = {k: to_int(v) for k, v in _GEMM_DIMS.findall(text)}
    return present(kernel=kernel, n=pairs.get("N"), k=pairs.get("K"), num_groups=pairs.get("num_groups"))


@known_fields("DEEPGEMM_NVCC_OLD")
def _deepgemm_nvcc(t: list[str]) -> dict[str, Any]:
    return {"recommended_nvcc": _after(t[0], "at least NVCC ")}


# The c10d socket failure, from the head the grammar matched (torch socket.cpp / TCPStore.cpp).
_C10D_KINDS = (
    ("waitForInput: ", "timeout"),
    ("failed on ", "connection-lost"),
    ("has timed out", "connect-timeout"),
    ("has failed to connect", "connect-failed"),
    ("cannot be initialized", "connect-failed"),
    ("has failed to listen", "listen-failed"),
    ("has failed to bind", "listen-failed"),
    ("network addresses of", "address-lookup-failed"),
    ("hostname of the client socket", "address-lookup-failed"),
)


@known_fields("C10D_SOCKET")
def _c10d_socket(t: list[str]) -> dict[str, Any]:
    text = "".join(t)
    kind = next((k for marker, k in _C10D_KINDS if marker in text), "other")
    fields: dict[str, Any] = {"kind": kind}
    if " timed out after " in text:
        fields.update(present(timeout_ms=_first_int(text.rpartition(" timed out after ")[2])))
    return fields


@known_fields("MAX_NUM_REQS_RESOLVED")
def _max_num_reqs(t: list[str]) -> dict[str, Any]:
    return present(max_num_reqs=to_int(_after(t[0], "max_num_reqs=") or None))


@known_fields("RANK_LOAD_WEIGHT")
def _rank_load_weight(t: list[str]) -> dict[str, Any]:
    return present(tp_rank=_first_int(t[0]), stage="end" if "weight end" in t[0] else "begin")


@known_fields("JAX_WEIGHT_FILE_MISSING")
def _jax_weight_missing(t: list[str]) -> dict[str, Any]:
    return {"name": t[0].rstrip().rsplit(" ", 1)[-1]}


@known_fields("ARGPARSE_ERROR")
def _argparse_error(t: list[str]) -> dict[str, Any]:
    return {"message": _rest(t).strip()}
