"""Damaged numbers never crash a command (issue 11): every crash class of the hostile-input
campaign, built from real SGLang lines with the hostile number substituted, through `analyze`,
`check --format sarif`, `report -o x.html` and `events`, in-process. Exit 0/1 (never 3), line
accounting holds, the line is kept and its damaged field counted in `read.damaged_numbers`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from logparse.cli.main import main
from logparse.model import numbers
from logparse.model.numbers import (
    MAX_COUNT,
    present,
    probe_float,
    to_count,
    to_float,
    to_float_or_none,
    to_int,
)

# Real lines (fixtures/logs/*.log and the corpus), with {} where the hostile value goes.
DECODE = ("[2026-03-11 14:07:23 TP0] Decode batch, #running-req: {}, #token: 1865, token usage: 0.01, "
          "cuda graph: True, gen throughput (token/s): 103.54, #queue-req: 0")
DECODE_THROUGHPUT = ("[2026-03-11 14:07:23 TP0] Decode batch, #running-req: 3, #token: 1865, token usage: 0.01, "
                     "cuda graph: True, gen throughput (token/s): {}, #queue-req: 0")
PREFILL = ("[2026-03-11 14:05:45 TP0] Prefill batch, #new-seq: 1, #new-token: {}, #cached-token: 0, token usage: "
           "0.00, #running-req: 0, #queue-req: 0, input throughput (token/s): 0.00, cuda graph: False")
RETRACT = "[2025-03-07 21:49:33 TP13] Decode out of memory happened. #retracted_reqs: {}, #new_token_ratio: 0.1474 -> 0.1845"
RANK = "[2026-04-09 16:20:57 TP{}] Init torch distributed begin."
RAY = ("(WorkerDict pid={})   File \"/mnt/zzhbr/syncworkspace/fastrl/third-party/sglang/python/sglang/srt/managers/"
       "scheduler.py\", line 3130, in run_scheduler_process")
FRAME = '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line {}, in run_scheduler_process'
TQDM = ("Capturing batches (bs=160 avail_mem=9.78 GB):   4%|          | 1/24 [00:{}<00:08,  2.67it/s]")
ACCESS = '[2026-03-11 14:05:45] INFO:     127.0.0.1:54000 - "GET /model_info HTTP/1.1" 200 OK'

HUGE_INT = "9" * 4400  # past Python's 4,300-digit int-string limit
HUGE_FLOAT = "9" * 320  # float overflow: float() gives inf, int(inf) raises

# A real traceback around the frame line, so the frame is read as a frame ({} is the line number).
TRACEBACK = (f"Traceback (most recent call last):\n{FRAME}\n    scheduler.event_loop_overlap()\n"
             "RuntimeError: CUDA error: an illegal memory access was encountered")


def _good_decodes(n: int) -> list[str]:
    return [DECODE.format(3 + i % 5) for i in range(n)]


# (id, log text, whether a numeric field is damaged)
CASES: list[tuple[str, str, bool]] = [
    ("running-inf", DECODE.format("inf"), True),
    ("running-minus-inf", DECODE.format("-inf"), True),
    ("running-nan", DECODE.format("nan"), True),
    ("running-int-limit", DECODE.format(HUGE_INT), True),
    ("throughput-float-overflow", DECODE_THROUGHPUT.format(HUGE_FLOAT), True),
    ("prefill-float-overflow", PREFILL.format(HUGE_FLOAT), True),
    ("rank-tag-int-limit", RANK.format(HUGE_INT), False),  # a rank tag stays text; only sorting reads it
    ("ray-pid-int-limit", RAY.format(HUGE_INT), True),
    ("frame-lineno-int-limit", TRACEBACK.format(HUGE_INT), True),
    ("tqdm-clock-int-limit", TQDM.format(HUGE_INT), True),
    ("retraction-inf", RETRACT.format("inf"), True),
    # Two ranks' retraction lines glued on one line (no newline between the writes).
    ("retraction-glued", RETRACT.format(1) + RETRACT.format(1).replace("TP13", "TP12"), True),
    ("retraction-glued-after-count", RETRACT.format(1).split(",")[0] + RETRACT.format(1).replace("TP13", "TP12"), True),
    # A '" ' inside the access line's tail: the status is not a number.
    ("access-quote-in-tail", ACCESS + '" x', True),
    # Decode lines without #running-req (cut by the writer): the report must not need it.
    ("decode-without-running", "\n".join(DECODE.format(3).replace("#running-req: 3, ", "") for _ in range(20)), False),
    # A bad value after enough good lines for the fast path's fused stats shape to exist.
    ("fused-shape-then-inf", "\n".join([*_good_decodes(80), DECODE.format("inf"), *_good_decodes(5)]), True),
    ("fused-shape-then-int-limit", "\n".join([*_good_decodes(80), DECODE.format(HUGE_INT), *_good_decodes(5)]), True),
    ("fused-shape-then-nan-usage",
     "\n".join([*_good_decodes(80), DECODE.replace("token usage: 0.01", "token usage: nan").format(3)]), True),
    # Found by the 19,668-case campaign: a 320-digit value in server_args reached float() in the
    # memory budget (OverflowError); a 1e999 one is inf, which SGLang prints itself, and must not
    # crash anything either.
    ("server-args-huge-int",
     "[2026-03-11 14:05:12] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', "
     f"mem_fraction_static={'9' * 320}, tp_size=8, cuda_graph_max_bs=160)", True),
    ("server-args-float-overflow",
     "[2026-03-11 14:05:12] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', "
     "mem_fraction_static=1e999, tp_size=8)", False),
]



def _run(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(main, args, catch_exceptions=True)
    assert res.exit_code in (0, 1), f"{args[0]} exited {res.exit_code}: {res.output[-500:]} {res.exception!r}"
    return res.exit_code, res.stdout


@pytest.mark.parametrize(("text", "damaged"), [pytest.param(t, d, id=i) for i, t, d in CASES])
def test_hostile_number_never_crashes(tmp_path: Path, text: str, damaged: bool) -> None:
    log = tmp_path / "run.log"
    log.write_text(text + "\n", encoding="utf-8")
    lines = text.count("\n") + 1

    _, out = _run(["analyze", str(log), "--format", "json", "--jobs", "1"])
    (f,) = json.loads(out)["files"]
    cov, rd = f["coverage"], f["read"]
    assert cov["recognized"] + cov["unparsed"] == cov["total"] == rd["lines"]
    assert rd["lines"] >= lines  # kept (a glued line may be split, never dropped)
    assert (rd["damaged_numbers"] > 0) == damaged

    _run(["check", str(log), "--format", "sarif", "-o", str(tmp_path / "x.sarif")])
    sarif = json.loads((tmp_path / "x.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"

    _run(["report", str(log), "-o", str(tmp_path / "x.html")])
    assert (tmp_path / "x.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")

    _run(["report", str(log), "-o", str(tmp_path / "x.json")])
    json.loads((tmp_path / "x.json").read_text(encoding="utf-8"))  # valid JSON: no NaN/Infinity leaked

    for kind in ("decode_batch", "prefill_batch", "http_access", "traceback", "progress_bar", "retraction"):
        _run(["events", str(log), "--kind", kind, "--format", "jsonl"])


def test_damaged_decode_line_is_kept_without_the_field(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("\n".join([*_good_decodes(80), DECODE.format("inf"), *_good_decodes(3)]) + "\n", encoding="utf-8")
    _, out = _run(["events", str(log), "--kind", "decode_batch", "--format", "jsonl"])
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 84
    damaged = rows[80]
    assert damaged["line"] == 81
    assert damaged["running"] is None and damaged["tokens"] == 1865 and damaged["gen_throughput"] == 103.54
    assert all(r["running"] is not None for r in rows[:80] + rows[81:])


def test_glued_retraction_keeps_the_first_value(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(RETRACT.format(2) + RETRACT.format(7).replace("TP13", "TP12") + "\n", encoding="utf-8")
    _, out = _run(["events", str(log), "--kind", "retraction", "--format", "jsonl"])
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows and rows[0]["retracted"] == 2


def test_damaged_numbers_agree_between_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.parsing import pipeline

    text = "\n".join([*_good_decodes(3000), DECODE.format("inf"), *_good_decodes(3000), RANK.format(3),
                      DECODE_THROUGHPUT.format(HUGE_FLOAT)]) + "\n"
    log = tmp_path / "run.log"
    log.write_text(text, encoding="utf-8")
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 1024)
    one = pipeline.parse_file(str(log), jobs=1)
    two = pipeline.parse_file(str(log), jobs=2)
    assert one.report.damaged_numbers == two.report.damaged_numbers == 2
    assert len(one.decode) == len(two.decode) == 6002


@pytest.mark.parametrize("line", [pytest.param(RETRACT.format("inf"), id="retraction-count"),
                                  pytest.param(RETRACT.replace("0.1845", "0.1845 ##[error]x"), id="retraction-ratio"),
                                  pytest.param(RAY.format("9" * 40), id="ray-prefix")])
def test_each_damaged_occurrence_counts_in_every_run(tmp_path: Path, line: str) -> None:
    """A damaged line read three times counts three times its own damage, and the next run of
    the same process counts the same: the fast path's memo and envelope cache skip the
    conversions on a hit, so they must never keep a result whose reading counted damage (found
    by the fuzz suite: a second in-process run reported 0 where the first reported 1)."""
    from logparse.parsing import pipeline

    single, log = tmp_path / "one.log", tmp_path / "run.log"
    single.write_text(line + "\n", encoding="utf-8")
    log.write_text("\n".join([line, *_good_decodes(2), line, line]) + "\n", encoding="utf-8")
    once = pipeline.parse_file(str(single), jobs=1).report.damaged_numbers
    first = pipeline.parse_file(str(log), jobs=1).report.damaged_numbers
    again = pipeline.parse_file(str(log), jobs=1).report.damaged_numbers
    assert once > 0
    assert first == again == 3 * once


# ------------------------------------------------------------------------------ the parsers


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "NaN", "", " ", "1.5", "0x1f", "1e3", "abc", HUGE_INT,
                                  "9" * 32, "٣" * 40, "1" * 10_000_000])
def test_to_int_rejects_without_raising(text: str) -> None:
    before = numbers.damaged()
    assert to_int(text) is None
    assert numbers.damaged() == before + 1


@pytest.mark.parametrize(("text", "value"), [("42", 42), (" -3 ", -3), ("+7", 7), ("9" * 31, int("9" * 31)), ("٣", 3)])
def test_to_int_accepts_bounded_integers(text: str, value: int) -> None:
    before = numbers.damaged()
    assert to_int(text) == value
    assert numbers.damaged() == before


def test_to_int_none_is_not_damage() -> None:
    before = numbers.damaged()
    assert to_int(None) is None and to_float_or_none(None) is None
    assert numbers.damaged() == before


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "Infinity", "1e999", "-1e999", HUGE_FLOAT, "x", "", "1.2.3",
                                  "0." + "1" * 100])
def test_to_float_non_finite_is_nan(text: str) -> None:
    assert to_float_or_none(text) is None
    assert math.isnan(to_float(text))


@pytest.mark.parametrize(("text", "value"), [("0.01", 0.01), ("103.54", 103.54), ("-2.5e-3", -0.0025), (" 7 ", 7.0)])
def test_to_float_accepts_finite(text: str, value: float) -> None:
    assert to_float(text) == value


def test_to_count() -> None:
    assert to_count("5") == 5 and to_count("5.0") == 5 and to_count("1e3") == 1000
    assert to_count(str(MAX_COUNT)) == MAX_COUNT
    for bad in ("1e300", "inf", "nan", HUGE_INT, str(MAX_COUNT * 4)):
        assert to_count(bad) is None


def test_probe_float_words_are_not_damage() -> None:
    before = numbers.damaged()
    assert probe_float("True") is None and probe_float("idle") is None and probe_float("") is None
    assert numbers.damaged() == before
    assert probe_float("12.5") == 12.5
    assert probe_float("inf") is None and probe_float(HUGE_FLOAT) is None
    assert numbers.damaged() == before + 2


def test_present_drops_damaged_fields() -> None:
    assert present(a=1, b=None, c=0) == {"a": 1, "c": 0}


def test_stats_key_name_cache_is_bounded() -> None:
    """A hostile log can invent a new stats key on every line; the name cache must not grow with it."""
    from logparse.grammar.transform import runtime

    for i in range(runtime._EXTRA_NAMES_MAX + 500):
        assert runtime._extra_name(f"made up key {i}") == f"made_up_key_{i}"
    assert len(runtime._EXTRA_NAMES) <= runtime._EXTRA_NAMES_MAX


def test_bound_literal_bounds_every_number_it_walks() -> None:
    import math

    from logparse.model.numbers import bound_literal

    out = bound_literal({"a": 10**40, "b": [1, 2.5, float("inf")], "c": (True, "x", None), "d": 7})
    assert math.isnan(out["a"]) and out["b"] == [1, 2.5, float("inf")]
    assert out["c"] == (True, "x", None) and out["d"] == 7
