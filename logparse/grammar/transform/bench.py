"""Transformer callbacks for grammars/bench.lark: benchmark banners, rows and result lines.

Line events only; logparse/parsing/benchblocks.py assembles them into BenchServingResult /
BenchOneBatchResult records.

Known-message codes (public identifiers, matched by rules):
- ``one-batch-warmup``: bench_one_batch's ``Warmup ...`` marker (the runs after it are warmup runs).
- ``one-batch-benchmark``: ``Benchmark ...`` (the runs after it are the measured ones).
- ``one-batch-skip``: ``skipping (bs, input_len, output_len) due to max batch size limit``;
  fields ``batch_size``, ``input_len``, ``output_len``.
- ``send-one-acc-length``: test/send_one.py ``acc_length=3.12``; field ``acc_length``.
- ``send-one-speed``: test/send_one.py ``speed=123.45 token/s``; field ``speed`` (token/s).
"""

from __future__ import annotations

from typing import Any

from logparse.grammar.transform.known import known_fields
from logparse.model.events import BenchBanner, BenchRow, OneBatchLine
from logparse.model.numbers import present, to_float_or_none, to_int

Children = list[Any]

# Stage of a bench_one_batch line, by the type of its first terminal.
_ONE_BATCH_STAGES = {
    "ONE_BATCH_PREFILL": "prefill",
    "ONE_BATCH_DECODE_STEP": "decode-step",
    "ONE_BATCH_DECODE_MEDIAN": "decode-median",
    "ONE_BATCH_TOTAL": "total",
}


class BenchCallbacks:
    def bench_banner(self, children: Children) -> tuple[type, dict[str, Any]]:
        text = str(children[0]).rstrip()
        return BenchBanner, {"title": text.strip("=- "), "rule": text[0]}

    def bench_row(self, children: Children) -> tuple[type, dict[str, Any]]:
        label = str(children[0])[:-1]  # without the colon; tier rows keep their indentation
        value = str(children[1]).strip() if len(children) > 1 else ""
        return BenchRow, {"label": label, "value": value}

    def one_batch_line(self, children: Children) -> tuple[type, dict[str, Any]]:
        head = children[0]
        stage = _ONE_BATCH_STAGES[head.type]
        kw: dict[str, Any] = {"stage": stage}
        if stage == "decode-step":
            text = str(head)
            kw.update(present(
                step=to_int(text[len("Decode ") : text.index(".")] if "." in text else None),
                batch_size=to_int(str(children[1])),
                latency_s=to_float_or_none(str(children[2])),
                throughput=to_float_or_none(str(children[3])),
            ))
        else:
            kw.update(present(latency_s=to_float_or_none(str(children[1])),
                              throughput=to_float_or_none(str(children[2]))))
        return OneBatchLine, kw


@known_fields("ONE_BATCH_SKIP")
def _one_batch_skip(tokens: list[str]) -> dict[str, Any]:
    text = tokens[0]
    bs, inp, out = (text[text.index("(") + 1 : text.index(")")].split(", ") + ["", "", ""])[:3]
    return {"batch_size": to_int(bs), "input_len": to_int(inp), "output_len": to_int(out)}


@known_fields("SEND_ONE_ACC_LENGTH")
def _send_one_acc_length(tokens: list[str]) -> dict[str, Any]:
    return {"acc_length": to_float_or_none(tokens[0].strip().partition("=")[2])}


@known_fields("SEND_ONE_SPEED")
def _send_one_speed(tokens: list[str]) -> dict[str, Any]:
    return {"speed": to_float_or_none(tokens[0].partition("=")[2].split(" ", 1)[0])}
