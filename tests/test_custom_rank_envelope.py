"""A custom logging format that keeps SGLang's rank prefix inside its own bracket:
`2025-06-18 13:43:34 ERROR 31423 [ TP6 PP0 scheduler.py:2547] msg` (dev case e-024). The reader
gives the ranks back to the grammar as SGLang's envelope, so the traceback and its rank are seen."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze
from logparse.io.wrappers import Unwrapper

REPO = Path(__file__).resolve().parents[1]


def test_ranked_custom_prefix_becomes_an_sglang_envelope() -> None:
    w, rest = Unwrapper()("2025-06-18 13:43:34 ERROR 31423 [ TP6 PP0 scheduler.py:2547]     scheduler.event_loop_pp()")
    assert w is not None and w.pid == 31423 and w.level == "ERROR" and w.logger == "scheduler.py:2547"
    assert rest == "[2025-06-18 13:43:34 TP6 PP0]     scheduler.event_loop_pp()"


def test_dp_attention_tags_too() -> None:
    _, rest = Unwrapper()("2025-06-18 13:43:34,120 INFO 7 [ DP1 TP1 EP1 scheduler.py:10] Load weight begin.")
    assert rest == "[2025-06-18 13:43:34 DP1 TP1 EP1] Load weight begin."


def test_near_miss_custom_prefix_without_ranks_is_left_as_it_was() -> None:
    w, rest = Unwrapper()("2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch.")
    assert w is not None and w.kind == "custom-logging"
    assert rest == "Decode batch."


def test_the_real_case_is_a_scheduler_crash_of_that_rank() -> None:
    a = analyze(str(REPO / "fixtures/corpus/dev/e-024.log"))
    assert a.root_cause is not None and a.root_cause.name == "scheduler-crash"
    assert a.root_cause.ranks == ("TP6 PP0",) or list(a.root_cause.ranks) == ["TP6 PP0"]
