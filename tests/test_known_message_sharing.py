"""Known messages share what repeats: the code string of their terminal and, when they carry no
fields, one empty fields dict that refuses changes (`model.events.NO_FIELDS`): per event they cost
~120 bytes more (32 MB at a 1M-line log with request logging)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from logparse.model.events import NO_FIELDS, KnownMessage
from logparse.parsing.pipeline import parse_file

_LINES = [
    ("[2026-04-14 09:13:{s:02d}] Receive: obj=GenerateReqInput(rid='{rid:032x}', text=None, input_ids=None, "
     "sampling_params={{'temperature': 0.7}}, stream=True)"),
    ("[2026-04-14 09:13:{s:02d}] Finish: obj=GenerateReqInput(rid='{rid:032x}'), out={{'meta_info': "
     "{{'id': '{rid:032x}', 'prompt_tokens': 68, 'completion_tokens': 29}}}}"),
]


def _log(tmp_path: Path, n: int) -> str:
    path = tmp_path / "run.log"
    path.write_text("".join(line.format(s=i % 60, rid=i) + "\n" for i in range(n) for line in _LINES),
                    encoding="utf-8")
    return str(path)


def test_fieldless_known_messages_share_one_code_and_one_empty_fields(tmp_path: Path) -> None:
    events = parse_file(_log(tmp_path, 300)).of(KnownMessage)
    assert len(events) == 600
    assert {e.code for e in events} == {"request-received", "request-finished"}
    assert len({id(e.code) for e in events}) == 2
    assert all(e.fields is NO_FIELDS for e in events)


def test_the_shared_empty_fields_refuse_changes_and_survive_pickling() -> None:
    with pytest.raises(TypeError, match="shared"):
        NO_FIELDS["x"] = 1
    with pytest.raises(TypeError):
        NO_FIELDS.update(x=1)
    with pytest.raises(TypeError):
        NO_FIELDS.setdefault("x", 1)
    assert NO_FIELDS == {} and not NO_FIELDS
    copied = dict(NO_FIELDS)
    copied["x"] = 1  # a copy is an ordinary dict
    assert NO_FIELDS.copy() == {} and type(NO_FIELDS.copy()) is dict
    assert pickle.loads(pickle.dumps(NO_FIELDS)) is NO_FIELDS
    e = KnownMessage(line=1, code="request-received", text="Receive: obj=…", fields=NO_FIELDS)
    assert pickle.loads(pickle.dumps(e)).fields is NO_FIELDS


def test_split_parse_gives_the_same_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.parsing import pipeline

    path = _log(tmp_path, 4000)
    one = parse_file(path, jobs=1).of(KnownMessage)
    monkeypatch.setattr(pipeline, "PARALLEL_MIN_BYTES", 0)
    two = parse_file(path, jobs=2).of(KnownMessage)
    assert one == two
    assert all(e.fields is NO_FIELDS for e in two)
