"""The server's request dumps (`--log-requests`: `Receive: obj=GenerateReqInput(…)`, `Finish: …`)
hold a client's prompt or a model's answer: no catalog message on them is one, for the rules and the
run model alike (`parsing.candidates.REQUEST_DUMPS`) — the catalog index leaves them out, while the
same words printed by a program stay candidates."""

from __future__ import annotations

from pathlib import Path

from logparse.parsing.candidates import message_candidates, request_dump_lines
from logparse.parsing.pipeline import parse_file
from logparse.run.verdicts import startup_verdicts

_VERDICT = "Exception: Server process terminated unexpectedly."
_RECEIVE = ('[2026-01-01 10:00:0{n}] Receive: obj=GenerateReqInput(text=["My launcher printed: {quoted} Why?"], '
            'sampling_params={{"max_new_tokens": 64}}, rid="9a1c{n}")')
_FINISH = ("[2026-01-01 10:00:0{n}] Finish: obj=GenerateReqInput(rid='9a1c{n}'), "
           "out={{'text': 'It printed {quoted} because the process died.', 'meta_info': {{'id': '9a1c{n}'}}}}")


def _log(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_request_dumps_are_no_candidates_and_no_verdicts(tmp_path: Path) -> None:
    lines = [_RECEIVE.format(n=1, quoted=_VERDICT), _FINISH.format(n=2, quoted=_VERDICT)]
    log = parse_file(_log(tmp_path, lines))
    assert request_dump_lines(log) == {1, 2}  # both lines are the server's request dumps
    found = {no for hits in message_candidates(log).values() for no in hits.lines}
    assert not found & {1, 2}
    assert startup_verdicts(log, 1, 2) == []


def test_the_same_words_printed_are_a_candidate_and_a_verdict(tmp_path: Path) -> None:
    lines = [_RECEIVE.format(n=1, quoted="hello"), _VERDICT]
    log = parse_file(_log(tmp_path, lines))
    assert request_dump_lines(log) == {1}
    assert 2 in message_candidates(log)["server-died-starting"].lines
    (verdict,) = startup_verdicts(log, 1, 2)
    assert verdict.line == 2 and verdict.died
