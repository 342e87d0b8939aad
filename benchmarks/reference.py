"""The plain-``re`` reference pipeline: what a competent engineer scripts in an afternoon.

    python -m benchmarks.reference FILE [FILE.gz]

One pass over the file (text mode, ``errors='replace'``). The three kinds that make up nearly
every line (Decode batch, Prefill batch, HTTP access) are picked by a substring test and matched
by one compiled regex each, envelope included; every other line gets the envelope regex and a
``startswith`` dispatch to one compiled regex per interesting kind. The captured groups of the
hot kinds are appended straight to one list per column (no per-line dicts or row tuples); the
rare start-up kinds keep row tuples. At the end each hot kind becomes a pandas DataFrame: Arrow
(pandas' string backend) parses the number and timestamp columns in one vectorised cast each.
A small JSON summary is printed: decode/prefill stats, access status counts and top paths,
start-up line counts, exceptions by type.

It is the yardstick for ``logdiag analyze`` and must stay honest both ways: not tuned to the
generator (the regexes follow ``shared/sglang-log-formats.md`` §1.1, §3.1, §3.2, §1.5, §2, §6.1
for 0.5.9/0.5.10), not sandbagged (compiled patterns, bound methods, no work it does not need),
and not lighter than its summary needs (every decode/prefill/access row is typed, every
timestamp parsed, every exception paired with its final ``XError: …`` line).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sys
import time
from typing import IO, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_ENV = (r"\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d{3})?"
        r"(?: ((?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+)*))?\] ")
# The envelope alone (timestamp, rank suffix): a rare kind's regex then runs from `m.end()`
# (`pattern.match(line, pos)`), so the message is neither scanned for its end nor copied.
ENVELOPE = re.compile(_ENV)
_DECODE = (
    r"Decode batch, #running-req: (\d+), #token: (\d+), token usage: ([\d.]+), "
    r"(?:accept len: ([\d.]+), accept rate: ([\d.]+), )?"
    r"cuda graph: (True|False), gen throughput \(token/s\): ([\d.]+), #queue-req: (\d+)"
)
_PREFILL = (
    r"Prefill batch, #new-seq: (\d+), #new-token: (\d+), #cached-token: (\d+), "
    r"token usage: ([\d.]+), #running-req: (\d+), #queue-req: (\d+), "
    r"cuda graph: (True|False), input throughput \(token/s\): ([\d.]+)"
)
_ACCESS = r'INFO: {5}(\S*) - "([A-Z]+) (\S+) HTTP/([\d.]+)" (\d{3})'
DECODE, PREFILL, ACCESS = re.compile(_DECODE), re.compile(_PREFILL), re.compile(_ACCESS)
# The three kinds that make up nearly every line, envelope included: one match per hot line.
# A substring test picks the candidate; when its match fails the line takes the general path.
DECODE_LINE = re.compile(_ENV + _DECODE)
PREFILL_LINE = re.compile(_ENV + _PREFILL)
ACCESS_LINE = re.compile(_ENV + _ACCESS)
LOAD_END = re.compile(
    r"Load weight end\. (?:elapsed=([\d.]+) s, )?type=([^,]+), .*?"
    r"avail mem=([\d.]+) GB(?:, mem usage=([\d.]+) GB)?"
)
CAPTURE_END = re.compile(
    r"Capture (.+?) end\. Time elapsed: ([\d.]+) s\. mem usage=([\d.]+) GB\. avail mem=([\d.]+) GB\."
)
KV_ALLOC = re.compile(
    r"KV Cache is allocated\. #tokens: (\d+), (?:K size: ([\d.]+) GB, V size: ([\d.]+) GB|KV size: ([\d.]+) GB)"
)
EXCEPTION = re.compile(r"Scheduler hit an exception: (.*)")
EXC_LAST = re.compile(r"([A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (.*)")

DECODE_COLS = ("ts", "rank", "running", "token", "usage", "accept_len", "accept_rate",
               "cuda_graph", "gen_tps", "queue")
PREFILL_COLS = ("ts", "rank", "new_seq", "new_token", "cached_token", "usage", "running", "queue",
                "cuda_graph", "input_tps")
ACCESS_COLS = ("ts", "client", "method", "path", "http", "status")


def _open(path: str) -> IO[str]:
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def parse(path: str) -> dict[str, Any]:
    """One pass: a list per column of the hot kinds (decode, prefill, access), row tuples for
    the rare start-up kinds, the exceptions, and counts of what was not matched."""
    decode: dict[str, list] = {c: [] for c in DECODE_COLS}
    prefill: dict[str, list] = {c: [] for c in PREFILL_COLS}
    access: dict[str, list] = {c: [] for c in ACCESS_COLS}
    load_end: list[tuple] = []
    capture_end: list[tuple] = []
    kv_alloc: list[tuple] = []
    exceptions: list[list] = []  # [ts, rank, line, first, type, message]
    open_exc: list[list] = []  # waiting for their final `XError: …` line
    unprefixed = other_prefixed = uvicorn_other = unmatched_known = 0

    env = ENVELOPE.match
    dec, pre, acc = DECODE.match, PREFILL.match, ACCESS.match
    dec_line, pre_line, acc_line = DECODE_LINE.match, PREFILL_LINE.match, ACCESS_LINE.match
    # bound `append`s of every column, in the order of the regex groups
    d_ts, d_rank, *d_cols = (decode[c].append for c in DECODE_COLS)
    d0, d1, d2, d3, d4, d5, d6, d7 = d_cols
    p_ts, p_rank, *p_cols = (prefill[c].append for c in PREFILL_COLS)
    p0, p1, p2, p3, p4, p5, p6, p7 = p_cols
    a_ts, a0, a1, a2, a3, a4 = (access[c].append for c in ACCESS_COLS)
    n = 0
    with _open(path) as fh:
        for n, line in enumerate(fh, 1):
            if "] Decode batch, " in line:
                r = dec_line(line)
                if r:
                    g = r.groups()
                    d_ts(g[0]); d_rank(g[1]); d0(g[2]); d1(g[3]); d2(g[4]); d3(g[5])  # one call per column
                    d4(g[6]); d5(g[7]); d6(g[8]); d7(g[9])
                    continue
            elif "] Prefill batch, " in line:
                r = pre_line(line)
                if r:
                    g = r.groups()
                    p_ts(g[0]); p_rank(g[1]); p0(g[2]); p1(g[3]); p2(g[4]); p3(g[5])
                    p4(g[6]); p5(g[7]); p6(g[8]); p7(g[9])
                    continue
            elif "] INFO:     " in line:
                r = acc_line(line)
                if r:
                    g = r.groups()
                    a_ts(g[0]); a0(g[2]); a1(g[3]); a2(g[4]); a3(g[5]); a4(g[6])
                    continue
            # general path: the envelope, then the kind by its first words
            m = env(line)
            if m is None:
                unprefixed += 1
                if open_exc and line[:1] not in (" ", "\n", ""):
                    e = EXC_LAST.match(line)
                    if e:
                        x = open_exc.pop(0)
                        x[4], x[5] = e.group(1), e.group(2)
                continue
            at = m.end()
            if line.startswith("Decode batch", at):
                r = dec(line, at)
                if r:
                    g = r.groups()
                    d_ts(m[1]); d_rank(m[2])  # one call per column
                    d0(g[0]); d1(g[1]); d2(g[2]); d3(g[3]); d4(g[4]); d5(g[5]); d6(g[6]); d7(g[7])
                    continue
            elif line.startswith("Prefill batch", at):
                r = pre(line, at)
                if r:
                    g = r.groups()
                    p_ts(m[1]); p_rank(m[2])
                    p0(g[0]); p1(g[1]); p2(g[2]); p3(g[3]); p4(g[4]); p5(g[5]); p6(g[6]); p7(g[7])
                    continue
            elif line.startswith("INFO:", at):
                r = acc(line, at)
                if r:
                    g = r.groups()
                    a_ts(m[1]); a0(g[0]); a1(g[1]); a2(g[2]); a3(g[3]); a4(g[4])
                else:
                    uvicorn_other += 1
                continue
            elif line.startswith("Load weight end", at):
                r = LOAD_END.match(line, at)
                if r:
                    load_end.append((m[1], m[2] or "", n, *r.groups()))
                    continue
            elif line.startswith("Capture ", at) and " end. " in line:
                r = CAPTURE_END.match(line, at)
                if r:
                    capture_end.append((m[1], m[2] or "", n, *r.groups()))
                    continue
            elif line.startswith("KV Cache is allocated", at):
                r = KV_ALLOC.match(line, at)
                if r:
                    kv_alloc.append((m[1], m[2] or "", n, *r.groups()))
                    continue
            elif line.startswith("Scheduler hit an exception", at):
                r = EXCEPTION.match(line, at)
                if r:
                    x = [m[1], m[2] or "", n, r.group(1), None, None]
                    exceptions.append(x)
                    open_exc.append(x)
                    continue
            else:
                other_prefixed += 1
                continue
            unmatched_known += 1  # known prefix, unexpected shape
    counts = {"lines": n, "unprefixed": unprefixed, "other_prefixed": other_prefixed,
              "uvicorn_other": uvicorn_other, "unmatched_known": unmatched_known}
    return {"decode": decode, "prefill": prefill, "access": access, "load_end": load_end,
            "capture_end": capture_end, "kv_alloc": kv_alloc, "exceptions": exceptions,
            "counts": counts}


def _frame(cols: dict[str, list], ints: tuple[str, ...], floats: tuple[str, ...]) -> pd.DataFrame:
    """Typed DataFrame from the column lists. The number and timestamp strings are parsed by
    Arrow's vectorised casts (pandas' own string backend); a group that did not match (None)
    becomes a null, i.e. NaN. Text columns stay Arrow strings."""
    data: dict[str, pa.Array] = {}
    for name, values in cols.items():
        text = pa.array(values, type=pa.string())
        if name in ints:
            data[name] = pc.cast(text, pa.int64())
        elif name in floats:
            data[name] = pc.cast(text, pa.float64())
        elif name == "ts":
            data[name] = pc.strptime(text, format="%Y-%m-%d %H:%M:%S", unit="s")
        else:
            data[name] = text
    return pa.table(data).to_pandas()


def summarize(p: dict[str, Any]) -> dict[str, Any]:
    dec = _frame(p["decode"], ("running", "token", "queue"),
                 ("usage", "accept_len", "accept_rate", "gen_tps"))
    pre = _frame(p["prefill"], ("new_seq", "new_token", "cached_token", "running", "queue"),
                 ("usage", "input_tps"))
    acc = _frame(p["access"], ("status",), ())

    def f(x: Any) -> Any:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return None
        return round(float(x), 3) if isinstance(x, float) else int(x)

    out: dict[str, Any] = {"counts": p["counts"]}
    out["decode"] = {"rows": len(dec)}
    if len(dec):
        out["decode"].update({
            "gen_tps_median": f(dec["gen_tps"].median()),
            "gen_tps_max": f(dec["gen_tps"].max()),
            "running_max": f(dec["running"].max()),
            "queue_max": f(dec["queue"].max()),
            "usage_max": f(dec["usage"].max()),
            "accept_len_mean": f(dec["accept_len"].mean()),
            "cuda_graph_false": int((dec["cuda_graph"] == "False").sum()),
            "first_ts": str(dec["ts"].min()), "last_ts": str(dec["ts"].max()),
        })
    out["prefill"] = {"rows": len(pre)}
    if len(pre):
        out["prefill"].update({
            "new_tokens": f(pre["new_token"].sum()),
            "cached_tokens": f(pre["cached_token"].sum()),
            "queue_max": f(pre["queue"].max()),
            "input_tps_median": f(pre["input_tps"].median()),
        })
    out["access"] = {"rows": len(acc)}
    if len(acc):
        out["access"].update({
            "by_status": {str(k): int(v) for k, v in acc["status"].value_counts().sort_index().items()},
            "top_paths": {k: int(v) for k, v in acc["path"].value_counts().head(5).items()},
        })
    out["startup"] = {
        "load_weight_end": len(p["load_end"]),
        "capture_end": len(p["capture_end"]),
        "kv_alloc": len(p["kv_alloc"]),
        "kv_tokens": sorted({int(r[3]) for r in p["kv_alloc"]}),
    }
    excs = p["exceptions"]
    keys = ("ts", "rank", "line", "first", "type", "message")
    out["exceptions"] = {
        "count": len(excs),
        "by_type": {},
        "first": dict(zip(keys, excs[0], strict=True)) if excs else None,
    }
    for x in excs:
        k = x[4] or "?"
        out["exceptions"]["by_type"][k] = out["exceptions"]["by_type"].get(k, 0) + 1
    return out


def run_reference(path: str) -> dict[str, Any]:
    """Parse `path` and return the summary (what the CLI prints as JSON)."""
    return summarize(parse(path))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: python -m benchmarks.reference FILE", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    summary = run_reference(args[0])
    summary["elapsed_s"] = round(time.perf_counter() - t0, 3)
    json.dump(summary, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
