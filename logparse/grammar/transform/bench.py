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
- ``send-one-header`` / ``send-one-row``: send_one's results table (0.5.x); the row's fields
  ``latency_s``, ``tokens``, ``acc_length``, ``speed``.
- ``mtbench-result``: ``#questions: N, Throughput: X token/s, Acceptance length: Y``; fields
  ``questions``, ``throughput``, ``accept_length``.
- ``eval-accuracy``, ``eval-invalid``, ``eval-latency``, ``eval-output-throughput``: the few-shot
  evaluation scripts' result lines; fields ``accuracy``, ``invalid``, ``latency_s``, ``output_throughput``.
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


_TIER_LABELS = frozenset({"Device", "Host", "Storage"})


class BenchCallbacks:
    def bench_banner(self, children: Children) -> tuple[type, dict[str, Any]]:
        text = str(children[0]).strip()  # an indented block (pasted in a markdown list) too
        return BenchBanner, {"title": text.strip("=- "), "rule": text[0]}

    def bench_row(self, children: Children) -> tuple[type, dict[str, Any]]:
        # Without the colon and the block's indentation; a Cache Hit Details tier row keeps the
        # two-space mark benchblocks reads (its label says it is one).
        label = str(children[0])[:-1].strip()
        if label in _TIER_LABELS:
            label = "  " + label
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
    # `acc_length=3.12` or `acc_length=3.12 speed=123.45`
    words = tokens[0].split()
    out = {"acc_length": to_float_or_none(words[0].partition("=")[2])}
    if len(words) > 1:
        out["speed"] = to_float_or_none(words[1].partition("=")[2])
    return out


def _number_after(text: str, label: str, end: str = "") -> float | None:
    rest = text[text.index(label) + len(label) :]
    if end:
        rest = rest.split(end, 1)[0]
    return to_float_or_none(rest.strip().split(" ", 1)[0])


@known_fields("SEND_ONE_ROW")
def _send_one_row(tokens: list[str]) -> dict[str, Any]:
    cells = [c.strip() for c in tokens[0].strip().strip("|").split("|")]
    return present(latency_s=to_float_or_none(cells[0]), tokens=to_int(cells[1]),
                   acc_length=to_float_or_none(cells[2]), speed=to_float_or_none(cells[3]))


@known_fields("MTBENCH_RESULT")
def _mtbench_result(tokens: list[str]) -> dict[str, Any]:
    t = tokens[0]
    return present(questions=to_int(t[len("#questions: ") : t.index(",")]),
                   throughput=_number_after(t, "Throughput: "),
                   accept_length=_number_after(t, "Acceptance length: "))


@known_fields("EVAL_ACCURACY")
def _eval_accuracy(tokens: list[str]) -> dict[str, Any]:
    return present(accuracy=_number_after(tokens[0], "Accuracy: "))


@known_fields("EVAL_INVALID")
def _eval_invalid(tokens: list[str]) -> dict[str, Any]:
    return present(invalid=_number_after(tokens[0], "Invalid: "))


@known_fields("EVAL_LATENCY")
def _eval_latency(tokens: list[str]) -> dict[str, Any]:
    return present(latency_s=_number_after(tokens[0], "Latency: "))


@known_fields("EVAL_OUTPUT_THROUGHPUT")
def _eval_output_throughput(tokens: list[str]) -> dict[str, Any]:
    return present(output_throughput=_number_after(tokens[0], "Output throughput: "))


@known_fields("SEND_ONE_SPEED")
def _send_one_speed(tokens: list[str]) -> dict[str, Any]:
    return {"speed": to_float_or_none(tokens[0].partition("=")[2].split(" ", 1)[0])}
