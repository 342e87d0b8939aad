"""The plain-``re`` reference pipeline: what a competent engineer scripts in an afternoon.

    python -m benchmarks.reference FILE [FILE.gz]

Reads the log line by line (text mode, ``errors='replace'``), matches one compiled regex for the
SGLang envelope, dispatches on ``msg.startswith``, runs one compiled regex per interesting line
kind, collects rows as dicts, builds a pandas DataFrame per hot kind (decode, prefill, access) and
prints a small JSON summary. It is the yardstick for ``logdiag analyze``: not tuned to the
generator, not sandbagged either (compiled patterns, bound methods, no per-line allocations
beyond the row dicts).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import sys
import time
from typing import Any

import pandas as pd

ENVELOPE = re.compile(
    r"^\[(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d{3})?"
    r"(?P<ranks>(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+)*)\] (?P<msg>.*)$"
)
DECODE = re.compile(
    r"Decode batch, #running-req: (?P<running>\d+), #token: (?P<token>\d+), "
    r"token usage: (?P<usage>[\d.]+), "
    r"(?:accept len: (?P<accept_len>[\d.]+), accept rate: (?P<accept_rate>[\d.]+), )?"
    r"cuda graph: (?P<cuda_graph>True|False), "
    r"gen throughput \(token/s\): (?P<gen_tps>[\d.]+), #queue-req: (?P<queue>\d+)"
)
PREFILL = re.compile(
    r"Prefill batch, #new-seq: (?P<new_seq>\d+), #new-token: (?P<new_token>\d+), "
    r"#cached-token: (?P<cached_token>\d+), token usage: (?P<usage>[\d.]+), "
    r"#running-req: (?P<running>\d+), #queue-req: (?P<queue>\d+), "
    r"cuda graph: (?P<cuda_graph>True|False), input throughput \(token/s\): (?P<input_tps>[\d.]+)"
)
ACCESS = re.compile(
    r'INFO: {5}(?P<client>\S*) - "(?P<method>[A-Z]+) (?P<path>\S+) HTTP/(?P<http>[\d.]+)" '
    r"(?P<status>\d{3})"
)
LOAD_END = re.compile(
    r"Load weight end\. (?:elapsed=(?P<elapsed>[\d.]+) s, )?type=(?P<type>[^,]+), .*?"
    r"avail mem=(?P<avail>[\d.]+) GB(?:, mem usage=(?P<mem>[\d.]+) GB)?"
)
CAPTURE_END = re.compile(
    r"Capture (?P<graph>.+?) end\. Time elapsed: (?P<elapsed>[\d.]+) s\. "
    r"mem usage=(?P<mem>[\d.]+) GB\. avail mem=(?P<avail>[\d.]+) GB\."
)
KV_ALLOC = re.compile(
    r"KV Cache is allocated\. #tokens: (?P<tokens>\d+), "
    r"(?:K size: (?P<k>[\d.]+) GB, V size: (?P<v>[\d.]+) GB|KV size: (?P<kv>[\d.]+) GB)"
)
EXCEPTION = re.compile(r"Scheduler hit an exception: (?P<first>.*)")
EXC_LAST = re.compile(r"(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt)): (?P<text>.*)")


def _open(path: str):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "r", encoding="utf-8", errors="replace")


def parse(path: str) -> dict[str, Any]:
    decode: list[dict] = []
    prefill: list[dict] = []
    access: list[dict] = []
    load_end: list[dict] = []
    capture_end: list[dict] = []
    kv_alloc: list[dict] = []
    exceptions: list[dict] = []
    open_exc: list[dict] = []  # waiting for their final `XError: …` line
    counts = {"lines": 0, "unprefixed": 0, "other_prefixed": 0, "uvicorn_other": 0,
              "unmatched_known": 0}

    env = ENVELOPE.match
    dec, pre, acc = DECODE.match, PREFILL.match, ACCESS.match
    n = 0
    with _open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            m = env(line)
            if m is None:
                counts["unprefixed"] += 1
                if open_exc and line and not line.startswith(" "):
                    e = EXC_LAST.match(line)
                    if e:
                        x = open_exc.pop(0)
                        x["type"], x["message"] = e.group("type"), e.group("text")
                continue
            ts, ranks, msg = m.group("ts", "ranks", "msg")
            if msg.startswith("Decode batch"):
                r = dec(msg)
                if r:
                    d = r.groupdict()
                    d["ts"], d["rank"] = ts, ranks.strip()
                    decode.append(d)
                    continue
            elif msg.startswith("Prefill batch"):
                r = pre(msg)
                if r:
                    d = r.groupdict()
                    d["ts"], d["rank"] = ts, ranks.strip()
                    prefill.append(d)
                    continue
            elif msg.startswith("INFO:"):
                r = acc(msg)
                if r:
                    d = r.groupdict()
                    d["ts"] = ts
                    access.append(d)
                else:
                    counts["uvicorn_other"] += 1
                continue
            elif msg.startswith("Load weight end"):
                r = LOAD_END.match(msg)
                if r:
                    load_end.append({"ts": ts, "rank": ranks.strip(), "line": n, **r.groupdict()})
                    continue
            elif msg.startswith("Capture ") and " end. " in msg:
                r = CAPTURE_END.match(msg)
                if r:
                    capture_end.append({"ts": ts, "rank": ranks.strip(), "line": n, **r.groupdict()})
                    continue
            elif msg.startswith("KV Cache is allocated"):
                r = KV_ALLOC.match(msg)
                if r:
                    kv_alloc.append({"ts": ts, "rank": ranks.strip(), "line": n, **r.groupdict()})
                    continue
            elif msg.startswith("Scheduler hit an exception"):
                r = EXCEPTION.match(msg)
                if r:
                    x = {"ts": ts, "rank": ranks.strip(), "line": n, "first": r.group("first"),
                         "type": None, "message": None}
                    exceptions.append(x)
                    open_exc.append(x)
                    continue
            else:
                counts["other_prefixed"] += 1
                continue
            counts["unmatched_known"] += 1  # known prefix, unexpected shape
    counts["lines"] = n
    return {"decode": decode, "prefill": prefill, "access": access, "load_end": load_end,
            "capture_end": capture_end, "kv_alloc": kv_alloc, "exceptions": exceptions,
            "counts": counts}


def _frame(rows: list[dict], ints: tuple[str, ...], floats: tuple[str, ...]) -> pd.DataFrame:
    df = pd.DataFrame.from_records(rows)
    if df.empty:
        return df
    for c in ints:
        df[c] = df[c].astype("int64")
    for c in floats:
        df[c] = df[c].astype("float64")  # None (optional group) -> NaN
    df["ts"] = pd.to_datetime(df["ts"], format="%Y-%m-%d %H:%M:%S")
    return df


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
        "kv_tokens": sorted({int(r["tokens"]) for r in p["kv_alloc"]}),
    }
    out["exceptions"] = {
        "count": len(p["exceptions"]),
        "by_type": {},
        "first": p["exceptions"][0] if p["exceptions"] else None,
    }
    for x in p["exceptions"]:
        k = x["type"] or "?"
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
