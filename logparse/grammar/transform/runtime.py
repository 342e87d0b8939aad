"""Transformer callbacks for grammars/runtime.lark: stats lines, retraction, uvicorn, readiness.

Known-message codes defined here: request-received, request-finished (`--log-requests`),
uvicorn-bind-failed [errno, host, port], uvicorn-asgi-exception.
"""

from __future__ import annotations

import re
from typing import Any

from logparse.grammar.transform.known import known_fields
from logparse.model.events import (
    DecodeBatch,
    HttpAccess,
    PrefillBatch,
    Retraction,
    ServerReady,
    UvicornLifecycle,
)
from logparse.model.numbers import MAX_COUNT, note_damage, to_count, to_float_or_none, to_int

Children = list[Any]

# Stats keys as printed → field names. Keys not listed go to `extra` under a normalised name.
_DECODE_KEYS = {
    "#running-req": "running",
    "#token": "tokens",
    "token usage": "token_usage",
    "accept len": "accept_len",
    "accept rate": "accept_rate",
    "gen throughput (token/s)": "gen_throughput",
    "#queue-req": "queue",
}
_PREFILL_KEYS = {
    "#new-seq": "new_seq",
    "#new-token": "new_token",
    "#cached-token": "cached_token",
    "token usage": "token_usage",
    "#running-req": "running",
    "#queue-req": "queue",
    "input throughput (token/s)": "input_throughput",
}
_GRAPH_KEYS = frozenset({"cuda graph", "cpu graph", "npu graph", "musa graph", "xpu graph"})
# When a hybrid model prints no plain `token usage`, the full-attention pool is the KV pool.
_USAGE_FALLBACK = ("full token usage", "gpu token usage")

_EXTRA_NAMES: dict[str, str] = {}
# Real stats lines have a few dozen keys; a damaged or hostile log can invent a new one per line,
# and a long `follow` must not keep them all: past this many, names are computed, not cached.
_EXTRA_NAMES_MAX = 4096


def _extra_name(key: str) -> str:
    """'#full token' → 'full_tokens', 'swa token usage' → 'swa_token_usage', 'cache hit rate' → ..."""
    name = _EXTRA_NAMES.get(key)
    if name is None:
        k = key.replace("(token/s)", "").replace("(per GPU)", "per_gpu").replace("(GB/s per GPU)", "gbps")
        k = k.replace("#", "n_").replace("-", "_").replace(".", "").replace("/", "_").replace("+", "_")
        name = "_".join(k.split()).strip("_").lower()
        if len(_EXTRA_NAMES) < _EXTRA_NAMES_MAX:
            _EXTRA_NAMES[key] = name
    return name


_COLLAPSED: dict[tuple[int, str], str | None] = {}
# A paste that lost the middle of a stats line glues the cut start of one key to the next one
# (`token usaccept rate: 0.32`: `age: 0.41, accept len: 2.10, ` is gone); the head must keep this
# much of the first key.
_MIN_COLLAPSED_HEAD = 3


def known_key(key: str, known: dict[str, str]) -> str | None:
    """The known key `key` is, or the known key a collapsed `key` ends with: the key glued after
    the cut start of another known key (`token us` + `accept rate`). None for any other key (an
    extra such as `full token usage`, whose head is no known key's start)."""
    if key in known:
        return key
    memo = (id(known), key)
    if memo in _COLLAPSED:
        return _COLLAPSED[memo]
    found = None
    for k in sorted(known, key=len, reverse=True):
        head = key[: len(key) - len(k)]
        if (len(key) > len(k) and key.endswith(k) and len(head) >= _MIN_COLLAPSED_HEAD
                and any(other.startswith(head) and other != head for other in known)):
            found = k
            break
    if len(_COLLAPSED) < _EXTRA_NAMES_MAX:
        _COLLAPSED[memo] = found
    return found


# Chained comparisons against these bounds reject inf, -inf and nan in one step (hot path).
_MAX_FLOAT = 1.7976931348623157e308
_MAX_COUNT = float(MAX_COUNT)


def _number(value: str) -> float | None:
    """An extra's value: a finite float, or None (a word is not damage; inf, nan and overflow are)."""
    value = value.strip().rstrip(",").strip()
    try:
        v = float(value.removesuffix("%"))
    except ValueError:
        return None
    if -_MAX_FLOAT <= v <= _MAX_FLOAT:
        return v
    note_damage()
    return None


# For the column stores' generated appenders (`parsing/columns.py`): the same conversions.
number = _number
MAX_FLOAT = _MAX_FLOAT
MAX_COUNT_F = _MAX_COUNT


def _apply(key: str, value: str, known: dict[str, str], kw: dict[str, Any], extra: dict[str, float]) -> None:
    """One `key: value` item into the fields: known keys (counts as ints), graph flags to
    `cuda_graph`, every other numeric item to `extra` under a normalised name."""
    name = known.get(key)
    if name is None and key not in _GRAPH_KEYS:
        k = known_key(key, known)
        if k is not None:  # a collapsed key: the line is damaged, the value is still that field's
            note_damage()
            key, name = k, known[k]
    if name is not None:
        # A damaged value (not a number, inf, nan, beyond MAX_COUNT for a count) leaves the field
        # out and is counted; counts are ints.
        try:
            num = float(value)
        except ValueError:
            note_damage()
            return
        if key[0] == "#":
            if -_MAX_COUNT <= num <= _MAX_COUNT:
                kw[name] = int(num)
                return
        elif -_MAX_FLOAT <= num <= _MAX_FLOAT:
            kw[name] = num
            return
        note_damage()
    elif key in _GRAPH_KEYS:
        kw["cuda_graph"] = value == "True"
        if key != "cuda graph":
            extra["graph_device_" + key.split()[0]] = 1.0
    else:
        number = _number(value)
        if number is not None:
            extra[_extra_name(key)] = number


def _finish(kw: dict[str, Any], extra: dict[str, float]) -> dict[str, Any]:
    if "token_usage" not in kw:
        for name in USAGE_FALLBACK_NAMES:
            if name in extra:
                kw["token_usage"] = extra[name]
                break
    if extra:
        kw["extra"] = extra
    return kw


class _Signature:
    """The key sequence of a stats body, compiled: a server prints the same keys on every line, so
    after the first line a body is split by one C-level regex match and turned into fields by a
    function generated for exactly these keys (no per-item dispatch). It produces exactly what the
    generic path produces — each generated statement is `_apply` specialised to one key, and
    `tests/test_grammar_runtime.py` compares both — and a body the regex does not match takes the
    generic path."""

    __slots__ = ("build", "keys", "plan", "regex")

    def __init__(self, keys: list[str], known: dict[str, str]) -> None:
        self.keys = keys
        # What each value becomes, for the column stores' direct appenders (`parsing/columns.py`
        # generates its code from this): ("count" | "float", field), ("graph", extra flag or ""),
        # ("extra", extra name). `build` below is the same semantics as a dict.
        self.plan: tuple[tuple[str, str], ...] = tuple(_plan_of(key, known) for key in keys)
        # Middle values hold no comma (the generic path splits on ', '); the last value may be
        # followed by the trailing ', ' / ',' / ' ' that some releases print.
        parts = [f"{re.escape(k)}: ([^,]*)" for k in keys[:-1]] + [f"{re.escape(keys[-1])}: ([^,]*?)[, ]*"]
        self.regex = re.compile(", ".join(parts))
        lines = ["def build(g):", "    kw = {}", "    extra = {}"]
        for i, key in enumerate(keys):
            name = known.get(key)
            if name is not None:
                # `_apply` specialised (hot path): not a number, inf, nan or, for a count, beyond
                # MAX_COUNT is damage and leaves the field out.
                bound = "_MAX_COUNT" if key[0] == "#" else "_MAX_FLOAT"
                conv = "int(x)" if key[0] == "#" else "x"
                lines += ["    try:", f"        x = float(g[{i}])", "    except ValueError:",
                          "        _damage()", "    else:", f"        if -{bound} <= x <= {bound}:",
                          f"            kw[{name!r}] = {conv}", "        else:", "            _damage()"]
            elif key in _GRAPH_KEYS:
                lines.append(f"    kw['cuda_graph'] = g[{i}] == 'True'")
                if key != "cuda graph":
                    lines.append(f"    extra[{'graph_device_' + key.split()[0]!r}] = 1.0")
            else:
                lines += [f"    x = _number(g[{i}])", "    if x is not None:", f"        extra[{_extra_name(key)!r}] = x"]
        lines.append("    return _finish(kw, extra)")
        namespace: dict[str, Any] = {"_number": _number, "_finish": _finish, "_damage": note_damage,
                                     "_MAX_COUNT": _MAX_COUNT, "_MAX_FLOAT": _MAX_FLOAT}
        exec("\n".join(lines), namespace)  # noqa: S102 — code generated from printed key names, all repr()-quoted
        self.build = namespace["build"]


def _plan_of(key: str, known: dict[str, str]) -> tuple[str, str]:
    """One key's part of `_Signature.plan` (the same decisions as `_apply`)."""
    name = known.get(key)
    if name is not None:
        return ("count" if key[0] == "#" else "float", name)
    if key in _GRAPH_KEYS:
        return ("graph", "" if key == "cuda graph" else "graph_device_" + key.split()[0])
    return ("extra", _extra_name(key))


# The extra names `_finish` takes `token_usage` from when a line printed no plain `token usage`.
USAGE_FALLBACK_NAMES = tuple(_extra_name(key) for key in _USAGE_FALLBACK)


_SIGNATURES: dict[int, list[_Signature]] = {}
_MAX_SIGNATURES = 8


def _stats(body: str, known: dict[str, str]) -> dict[str, Any]:
    """Split a stats body into fields (see `_apply`). Hot: one regex match per line in steady state."""
    sigs = _SIGNATURES.setdefault(id(known), [])
    for i, sig in enumerate(sigs):
        m = sig.regex.fullmatch(body)
        if m is not None:
            if i:  # most recently used first: one server prints one or two key sets
                sigs.insert(0, sigs.pop(i))
            return sig.build(m.groups())  # type: ignore[no-any-return]
    kw: dict[str, Any] = {}
    extra: dict[str, float] = {}
    keys: list[str] | None = []
    for item in body.rstrip(", ").split(", "):
        key, sep, value = item.partition(": ")
        if not sep:
            keys = None  # an empty or cut item: not a shape worth learning
            continue
        if key not in known and key not in _GRAPH_KEYS and known_key(key, known) is not None:
            keys = None  # a collapsed key (a damaged line, see `known_key`): not a shape either
        if keys is not None:
            keys.append(key)
        _apply(key, value, known, kw, extra)
    if keys:
        if len(sigs) >= _MAX_SIGNATURES:
            sigs.pop()  # the least recently used key set
        sigs.insert(0, _Signature(keys, known))
    return _finish(kw, extra)


def _iteration(head: str) -> int | None:
    if "[" in head and "]" in head:
        return to_int(head[head.index("[") + 1 : head.index("]")])
    return None


def _decode_fields(head: str, kw: dict[str, Any]) -> tuple[type, dict[str, Any]]:
    """A decode line's fields from its head (`Decode batch [N], `) and its parsed stats body."""
    it = _iteration(head)
    if it is not None:
        kw["iteration"] = it
    return DecodeBatch, kw


def _prefill_fields(head: str, kw: dict[str, Any]) -> tuple[type, dict[str, Any]]:
    """A prefill line's fields from its head (`Prefill batch(mixed #running-req: 5). `) and body."""
    if "(mixed" in head:
        running = to_count(head[head.index(": ") + 2 : head.index(")")]) if ": " in head and ")" in head else None
        if running is not None:
            kw["running"] = running
    else:
        it = _iteration(head)
        if it is not None:
            kw["iteration"] = it
    return PrefillBatch, kw


def stats_signature(body: str, known: dict[str, str]) -> _Signature | None:
    """The learned signature whose regex matches this body (after `_stats` has seen it)."""
    for sig in _SIGNATURES.get(id(known), ()):
        if sig.regex.fullmatch(body) is not None:
            return sig
    return None


# For the fast path's fused stats shapes (grammar.FastPath): callback name → (keys, fields, class).
STATS_CALLBACKS: dict[str, tuple[dict[str, str], Any, type]] = {
    "decode_batch": (_DECODE_KEYS, _decode_fields, DecodeBatch),
    "prefill_batch": (_PREFILL_KEYS, _prefill_fields, PrefillBatch),
}


def access_fields(text: str) -> tuple[str, str, str, int, str]:
    """An access line's ACCESS token → (client, method, path, status, reason). A status cut off
    or damaged (a '" ' inside the request tail) is 0: the access columns need one."""
    client, _, rest = text.partition(' - "')
    rest = rest.rstrip()
    request, _, status = rest.rpartition('" ') if not rest.endswith('"') else (rest[:-1], "", "")
    method, _, tail = request.partition(" ")
    code = status[:3]
    # Hot: three ASCII digits are what `to_int` would read; anything else goes through it (and
    # its damage count).
    return (client, method, tail.rpartition(" ")[0],
            int(code) if len(code) == 3 and code.isascii() and code.isdigit() else to_int(code) or 0,
            status[4:].strip())


@known_fields("UVICORN_BIND_FAILED")
def _bind_failed(tokens: list[str]) -> dict[str, Any]:
    """`[Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use`"""
    text = tokens[0]
    out: dict[str, Any] = {}
    errno = to_int(text[len("[Errno ") : text.index("]")]) if "]" in text else None
    if errno is not None:
        out["errno"] = errno
    if "(" in text and ")" in text:
        host, _, port = text[text.index("(") + 1 : text.index(")")].rpartition(", ")
        out["host"] = host.strip("'\"")
        if port.strip().isdigit():
            port_no = to_int(port)
            if port_no is not None:
                out["port"] = port_no
    return out


class RuntimeCallbacks:
    STATS_CALLBACKS = STATS_CALLBACKS
    # These callbacks read token texts only (never `.type`): the fast path passes them plain str.
    PLAIN_TOKEN_CALLBACKS = ("decode_batch", "prefill_batch", "retraction", "http_access", "uvicorn_lifecycle",
                             "server_ready")

    def decode_batch(self, children: Children) -> tuple[type, dict[str, Any]]:
        head, body = children
        return _decode_fields(str(head), _stats(str(body), _DECODE_KEYS))

    def prefill_batch(self, children: Children) -> tuple[type, dict[str, Any]]:
        head, body = children
        return _prefill_fields(str(head), _stats(str(body), _PREFILL_KEYS))

    def retraction(self, children: Children) -> tuple[type, dict[str, Any]]:
        kw: dict[str, Any] = {}
        for item in str(children[1]).rstrip(", ").split(", "):
            key, _, value = item.partition(": ")
            # Two ranks' lines glued on one line repeat the keys with text in between: the
            # first value wins, a damaged one is left out.
            if key == "#retracted_reqs" and "retracted" not in kw:
                count = to_count(value)
                if count is not None:
                    kw["retracted"] = count
            elif key == "#new_tokens_gained" and "new_tokens_gained" not in kw:
                count = to_count(value)
                if count is not None:
                    kw["new_tokens_gained"] = count
            elif key == "#new_token_ratio":
                before, _, after = value.partition("->")
                kw["ratio_from"] = to_float_or_none(before)
                if after.strip():
                    kw["ratio_to"] = to_float_or_none(after)
        return Retraction, kw

    def http_access(self, children: Children) -> tuple[type, dict[str, Any]]:
        client, method, path, status, reason = access_fields(str(children[1]))
        return HttpAccess, {"client": client, "method": method, "path": path, "status": status, "reason": reason}

    def uvicorn_lifecycle(self, children: Children) -> tuple[type, dict[str, Any]]:
        text = str(children[1])
        kw: dict[str, Any] = {}
        if text.startswith("Started"):
            kw["stage"] = "started" if "server" in text else "started-parent"
            pid = to_int(text[text.index("[") + 1 : -1]) if "[" in text else None
            if pid is not None:
                kw["pid"] = pid
        elif text.startswith("Finished"):
            kw["stage"] = "finished"
            pid = to_int(text[text.index("[") + 1 : -1]) if "[" in text else None
            if pid is not None:
                kw["pid"] = pid
        elif text.startswith("Uvicorn running on "):
            kw["stage"] = "running"
            kw["url"] = text[len("Uvicorn running on ") :].split(" ", 1)[0]
        elif text.startswith("Waiting"):
            kw["stage"] = "waiting-startup" if "startup" in text else "waiting-shutdown"
        elif text.startswith("Application"):
            kw["stage"] = "startup-complete" if "startup" in text else "shutdown-complete"
        else:
            kw["stage"] = "shutting-down"
        return UvicornLifecycle, kw

    def server_ready(self, children: Children) -> tuple[type, dict[str, Any]]:
        return ServerReady, {}
