"""`LineTexts` (parsing/linetexts.py) behaves as the `dict[int, str]` it replaces, whatever the
order lines are written in, and survives pickling (workers and fleets send parsed logs)."""

from __future__ import annotations

import pickle
import random

from hypothesis import given
from hypothesis import strategies as st

from logparse.parsing.linetexts import LineTexts


@given(st.lists(st.tuples(st.integers(min_value=-5, max_value=60), st.text(max_size=5)), max_size=80),
       st.lists(st.integers(min_value=-10, max_value=70), max_size=20))
def test_same_answers_as_a_dict(writes: list[tuple[int, str]], deletes: list[int]) -> None:
    ref: dict[int, str] = {}
    texts = LineTexts()
    for no, text in writes:
        ref[no] = text
        texts[no] = text
    for no in deletes:
        if no in ref:
            del ref[no]
            del texts[no]
    assert len(texts) == len(ref)
    assert list(texts) == sorted(ref) == list(texts.keys())
    assert list(texts.items()) == sorted(ref.items())
    assert list(texts.values()) == [ref[k] for k in sorted(ref)]
    for no in range(-12, 72):
        assert (no in texts) == (no in ref)
        assert texts.get(no) == ref.get(no)
        assert texts.get(no, "") == ref.get(no, "")
    assert texts == ref and dict(texts) == ref
    assert pickle.loads(pickle.dumps(texts)) == ref


def test_file_order_writes_append_and_segments_join() -> None:
    texts = LineTexts()
    for no in range(1, 1001, 3):
        assert texts.get(no) is None  # the pipeline's read of a new line
        texts[no] = f"line {no}"
    texts[1000] = texts[1000] + " ⏎ more"  # a physical line's next segment
    assert texts[1000] == "line 1000 ⏎ more" and len(texts) == 334
    assert "not a number" not in texts and 2 not in texts
    order = list(range(500))
    random.Random(7).shuffle(order)
    shuffled = LineTexts((n, str(n)) for n in order)
    assert list(shuffled) == list(range(500))
