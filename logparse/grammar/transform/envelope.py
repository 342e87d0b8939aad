"""Transformer callbacks for the line structure and the envelope (prefix) of a line."""

from __future__ import annotations

from typing import Any, NamedTuple

from logparse.model.events import DecodeBatch, PrefillBatch, Unparsed
from logparse.model.lazyre import lazy_compile


class Envelope(NamedTuple):
    """What a line's prefix said: its timestamp text, rank tags, level and which formatter wrote it."""

    ts: str | None  # 'YYYY-MM-DD HH:MM:SS[.fff]', 'HH:MM:SS' (time only) or 'MM-DD HH:MM:SS'
    rank: str | None  # 'TP3', 'DP1 TP1', 'TP5 EP5', 'GPU0', 'rank4' ...
    level: str | None
    style: str  # sglang / time / diffusion / cut / vllm / gpu / torch-rank / c10d


# Envelope styles that only another program's logger writes: torch's C++ (glog-style c10d lines,
# `[E304 12:54:52.122900428 ProcessGroupNCCL.cpp:616] `). A line in one is that program's record
# whatever its message (coverage counts an unknown one as `foreign-logger`). Not vLLM's style:
# SGLang's own n-gram corpus helper writes the same shape.
FOREIGN_STYLES = frozenset({"c10d"})

# Every callback receives a list of lark Tokens (from LALR or from the fast path). Callbacks must
# not use token positions: fast-path tokens have none.
Children = list[Any]


class EnvelopeCallbacks:
    """`line`, `unparsed_line` and the `prefix` alternatives. The `*_prefix` callbacks read their
    token's text only (never `.type`): the fast path passes them a plain str."""

    def line(self, children: Children) -> tuple[Envelope | None, type, dict[str, Any]]:
        if len(children) == 2:
            env, (cls, kw) = children
            return env, cls, kw
        cls, kw = children[0]
        return None, cls, kw

    def unparsed_line(self, children: Children) -> tuple[Envelope | None, type, dict[str, Any]]:
        env = None
        text = ""
        for child in children:
            if isinstance(child, Envelope):
                env = child
            else:
                text = str(child)
        if env is None and text[:1] == "[" and text.rstrip()[-1:] == "]":
            # An envelope and nothing after it (`[2025-10-06 20:05:27 DP5 TP5]`, the excerpt cut
            # right after it): the envelope still says the time and the rank.
            m = _BARE_ENVELOPE.fullmatch(text.rstrip())
            if m is not None:
                return self.sglang_prefix([text.rstrip() + " "]), Unparsed, {"text": text.rstrip()}
        if text[:1] in "DP" and len(text) < 32:
            cut = _cut_stats_head(text)
            if cut is not None:
                # A stats line cut right after its head (`[…] Decode batch` / `[…] Prefill b` as an
                # excerpt's last line): still a Decode / Prefill line, with no fields (the corpus
                # README counts a cut stats line).
                return env, cut, {}
        return env, Unparsed, {"text": text}

    def sglang_prefix(self, children: Children) -> Envelope:
        tok: str = children[0]
        close = tok.index("]")
        inner = tok[1:close]
        ts = inner[:19]
        rest = inner[19:]
        if rest[:1] in (".", ","):
            ts = f"{ts}.{rest[1:4]}"
            rest = rest[4:]
        if "." in rest:  # a mode enum's `Class.MEMBER` among the tags names no rank
            rest = " ".join(t for t in rest.split() if "." not in t)
        rank = rest.strip() or None
        level = None
        tail = tok[close + 2 :]
        if tail:
            level = tail.split(" ", 1)[0]
        return Envelope(ts, rank, level, "sglang")

    def time_prefix(self, children: Children) -> Envelope:
        inner = str(children[0])[1:-2]
        return Envelope(inner[:8], inner[9:] or None, None, "time")

    def diffusion_prefix(self, children: Children) -> Envelope:
        inner = str(children[0])[1:-2]
        return Envelope(inner[:14], inner[15:] or None, None, "diffusion")

    def cut_prefix(self, children: Children) -> Envelope:
        # A tail of `[YYYY-MM-DD HH:MM:SS[.fff] RANKS] ` (the paste lost its start). The timestamp
        # keeps what is still whole: the full form, `MM-DD HH:MM:SS` (the year then comes from the
        # dated line before it) or `HH:MM:SS`; a cut inside the date's day or the hours leaves none.
        text = str(children[0])[:-2]
        if text[:1] == "[":  # `[DP0 TP0] `: only the rank tags are left
            return Envelope(None, text[1:].strip() or None, None, "cut")
        words = text.split(" ")
        at = next(i for i, w in enumerate(words) if ":" in w)  # the grammar guarantees a clock
        date = words[0] if at else ""
        clock, frac = words[at][:8], words[at][9:12]
        ts: str | None = None
        if len(clock) == 8 and (not date or len(date) >= 5):
            ts = f"{date[-10:] if len(date) >= 10 else date[-5:]} {clock}".lstrip()
            if frac and len(date) >= 10:
                ts = f"{ts}.{frac}"
        rank = " ".join(words[at + 1 :]) or None
        return Envelope(ts, rank, None, "cut")

    def vllm_prefix(self, children: Children) -> Envelope:
        level, date, time, _src = str(children[0]).split(" ", 3)
        return Envelope(f"{date} {time}", None, level, "vllm")

    def gpu_prefix(self, children: Children) -> Envelope:
        tok = str(children[0])
        return Envelope(None, f"GPU{tok[tok.index('=') + 1 : -2]}", None, "gpu")

    def rank_prefix(self, children: Children) -> Envelope:
        return Envelope(None, str(children[0])[1:-3], None, "torch-rank")

    def c10d_prefix(self, children: Children) -> Envelope:
        tok = children[0]
        text = str(tok)
        rank = None
        if text[:5] in ("[rank", "[Rank"):
            rank = "r" + text[2 : text.index("]")]  # `[Rank7]:` is the same tag as `[rank7]:`
            text = text[text.index("]") + 2 :]
        body = text[1:-2]  # 'E304 12:54:52.122900428 ProcessGroupNCCL.cpp:616'
        level = body[0]
        parts = body[1:].split()
        ts = None
        if len(parts) >= 3 and len(parts[0]) in (3, 4):
            mmdd = parts[0].zfill(4)
            ts = f"{mmdd[:2]}-{mmdd[2:]} {parts[1][:8]}"
        return Envelope(ts, rank, level, "c10d")


_BARE_ENVELOPE = lazy_compile(r"\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{3})?(?: (?:[A-Z]+_)?[A-Z]{2,3}\d+)*\]")
_STATS_HEADS = (("Decode batch", DecodeBatch), ("Prefill batch", PrefillBatch))
# A cut head must keep this much of `Decode batch` / `Prefill batch` ("Decode b", "Prefill b").
_MIN_CUT_HEAD = 8


def _cut_stats_head(text: str) -> type | None:
    body = text.rstrip(" .,")
    for head, cls in _STATS_HEADS:
        if len(body) >= _MIN_CUT_HEAD and (head.startswith(body) or body == head):
            return cls
        if body.startswith(head) and body[len(head):].strip(" []0123456789") == "":
            return cls  # `Decode batch [1240]`
    return None
