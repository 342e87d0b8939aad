"""spec-low-acceptance and spec-inactive: speculation that accepts few draft tokens for its draft
depth (or less than it costs), or none at all, while serving."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Severity
from logparse.model.findings import Finding
from logparse.rules.context import RuleContext
from logparse.rules.registry import rule
from logparse.run.speculative import (
    acceptance,
    break_even,
    finite,
    implied_token_acceptance,
    spec_config,
)


# Decode-line fields SGLang prints after the accept fields' place, in every release that prints them.
_AFTER_ACCEPT = ("cuda_graph", "gen_throughput", "queue")


def _past_accept_fields(d: Any) -> list[int]:
    """The decode lines (line numbers) that print a field after the accept fields' place."""
    graph, gen, queue = (d.column(name) for name in _AFTER_ACCEPT)
    # (NaN == NaN is False: a field the row did not print)
    return [ln for ln, a, b, c in zip(d.line, graph, gen, queue, strict=True) if a == a or b == b or c == c]


def _inactive_max(ctx: RuleContext) -> float:
    return float(ctx.threshold("spec-inactive", "max_accept_len", 1.05))


@rule(code="SPEC005", name="spec-low-acceptance", family="speculative", severity=Severity.WARNING,
      needs=("serving", "config"))
def spec_low_acceptance(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding accepts few draft tokens for its configured draft width.

    **What it means**
    The mean `accept len` (tokens emitted per verify step, bonus token included) is low for the
    configured draft depth (`--speculative-num-steps`, max accept length = steps + 1): the implied
    per-draft-token acceptance is below the threshold (default 0.5). When the log also holds a run
    without speculation (decode lines without accept fields, or a bench_serving result at the same
    concurrency), the rule computes the break-even accept length from the measured throughputs and
    reports whether speculation is slower than no speculation.

    **Why it matters**
    Each verify step costs the draft steps plus a wider target forward; with low acceptance that cost
    is not repaid, so decoding can be slower than without speculation.

    **Example**
    ```
    $ python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE … --speculative-num-steps 5 --speculative-eagle-topk 1 --speculative-num-draft-tokens 6 --tp 2
    [2026-03-24 10:13:30 TP0] Decode batch, #running-req: 40, #token: 56786, token usage: 0.05, accept len: 1.30, accept rate: 0.22, cuda graph: True, gen throughput (token/s): 1488.33, #queue-req: 0
    ```

    **Fix**
    Fewer draft steps (`--speculative-num-steps`, `--speculative-num-draft-tokens` = steps + 1), a draft
    model trained for this target and data, or turn speculation off. Thresholds:
    `[tool.logdiag.thresholds.spec-low-acceptance] min_token_acceptance` (0.5), `min_accept_len` (1.5,
    used when the draft depth is unknown).
    """
    acc = acceptance(ctx.log)
    if acc.mean is None or acc.mean <= _inactive_max(ctx):
        return
    cfg = spec_config(ctx.log, ctx.views)
    min_p = float(ctx.threshold("spec-low-acceptance", "min_token_acceptance", 0.5))
    min_len = float(ctx.threshold("spec-low-acceptance", "min_accept_len", 1.5))
    depth = cfg.depth
    data: dict[str, Any] = {"accept_len_mean": acc.mean, "source": acc.source, "lines": acc.lines or None,
                            "depth": depth, "max_accept_len": depth + 1 if depth else None,
                            "min_token_acceptance": min_p}
    if acc.rate_mean is not None:
        data["accept_rate_mean"] = acc.rate_mean
    p = implied_token_acceptance(acc.mean, depth) if depth else None
    data["implied_token_acceptance"] = p
    be = break_even(ctx.log, acc)
    if be:
        data.update(be)
    low_width = p is not None and p < min_p
    low_abs = depth is None and acc.mean < min_len
    below_be = be is not None and be["speedup"] < 1.0
    if not (low_width or low_abs or below_be):
        return
    parts = [f"mean accept len {acc.mean:.2f} over {acc.lines} decode lines" if acc.lines
             else f"benchmark accept length {acc.mean:.2f}"]
    if depth:
        parts.append(f"of at most {depth + 1} (draft depth {depth}): ≈{p:.2f} of each draft token accepted "
                     f"(threshold {min_p})")
    else:
        parts.append(f"below {min_len} (the draft depth is not in the log, so only the absolute value is judged)")
    if be:
        parts.append(f"break-even accept len ≈{be['break_even_accept_len']} ({be['method']}: speculation runs at "
                     f"{be['speedup']:.2f}× the no-spec throughput)")
    else:
        parts.append("break-even not computable: the log holds no run without speculation at the same batch size "
                     "(run the same benchmark with speculation off to decide)")
    message = "Low speculative acceptance: " + "; ".join(parts)
    if below_be:
        remedy = "speculation is slower than no speculation here: turn it off (drop `--speculative-algorithm`)"
        if depth and depth > 1:
            remedy += f", or try `--speculative-num-steps {max(1, depth // 2)} --speculative-num-draft-tokens {max(1, depth // 2) + 1}`"
    else:
        new = max(1, (depth or 2) // 2)
        remedy = (f"fewer draft steps (`--speculative-num-steps {new} --speculative-num-draft-tokens {new + 1}`), a "
                  "draft model trained for this target, or turn speculation off")
    lines = [(acc.first_line, acc.first_line)] if acc.first_line else []
    if acc.last_line and acc.last_line != acc.first_line:
        lines.append((acc.last_line, acc.last_line))
    yield ctx.finding("spec-low-acceptance", message, remedy, lines=lines, data=data, claim=False)


@rule(code="SPEC006", name="spec-inactive", family="speculative", severity=Severity.WARNING,
      needs=("serving", "config"))
def spec_inactive(ctx: RuleContext) -> Iterator[Finding]:
    """Speculative decoding is configured but does not accept any draft token.

    **What it means**
    The run is set up for speculation (`--speculative-algorithm`, speculative warnings, draft CUDA
    graphs, or decode lines that print `accept len`), yet the decode stats show `accept len: 1.00`
    (only the bonus token: nothing accepted) or carry no accept fields at all (counted only on lines
    that print a field after the accept fields' place: a line cut before it says nothing).

    **Why it matters**
    The server pays for the draft model and the verify step and gains nothing; throughput is lower
    than without speculation. Usually the draft is not the one for this target, not loaded, or the
    algorithm does not fit it.

    **Example**
    ```
    2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch. #running-req: 48, #token: 3894, token usage: 0.00, accept len: 1.00, accept rate: 0.11, cuda graph: False, gen throughput (token/s): 5452.63, #queue-req: 0,
    ```

    **Fix**
    Check that the draft is loaded and matches the target (`--speculative-draft-model-path`, its
    `Load weight end`, draft CUDA graphs) and `--speculative-algorithm`; or turn speculation off.
    Threshold: `[tool.logdiag.thresholds.spec-inactive] max_accept_len` (1.05).
    """
    cfg = spec_config(ctx.log, ctx.views)
    if not cfg.configured:
        return
    acc = acceptance(ctx.log)
    limit = _inactive_max(ctx)
    d = ctx.log.decode
    remedy = ("check that the draft is loaded and matches the target (`--speculative-draft-model-path`"
              + (f" {cfg.draft_model}" if cfg.draft_model else "")
              + ", its `Load weight end` and draft CUDA-graph lines) and that `--speculative-algorithm` fits it; "
                "otherwise turn speculation off")
    data: dict[str, Any] = {"configured_by": cfg.reasons[:3], "max_accept_len": limit}
    if acc.mean is not None and acc.mean <= limit:
        data.update(accept_len_mean=acc.mean, accept_rate_mean=acc.rate_mean, lines=acc.lines or None)
        run_col, acc_col = d.column("running"), d.column("accept_len")
        running = finite(run_col[i] for i in range(len(d.line)) if acc_col[i] == acc_col[i])
        bs = f" at #running-req up to {int(max(running))}" if running else ""
        rate = f", accept rate {acc.rate_mean:.2f}" if acc.rate_mean is not None else ""
        where = f"over {acc.lines} decode lines" if acc.lines else "in the benchmark result"
        message = (f"Speculation is configured ({'; '.join(cfg.reasons[:2])}) but accepts nothing: accept len "
                   f"{acc.mean:.2f}{rate} {where}{bs} — every step emits only the bonus token")
        lines = [(acc.first_line, acc.first_line)]
        if acc.last_line != acc.first_line:
            lines.append((acc.last_line, acc.last_line))
        yield ctx.finding("spec-inactive", message, remedy, lines=lines, data=data, claim=False)
        return
    if acc.mean is None and len(d) and cfg.algorithm:
        # Only a line that reaches past where SGLang prints `accept len` (after `token usage`, before
        # `cuda graph`, `gen throughput` and `#queue-req`) says it has none: a line cut before
        # that place says nothing either way.
        witnesses = _past_accept_fields(d)
        if not witnesses:
            return
        message = (f"Speculation is configured ({'; '.join(cfg.reasons[:2])}) but none of the {len(witnesses)} "
                   "decode lines prints an accept length: the draft does not seem to run")
        yield ctx.finding("spec-inactive", message, remedy, lines=[(witnesses[0], witnesses[0])],
                          events=cfg.evidence[:1], data=data, claim=False)
