"""The masked catalog prefilter also masks long standalone hex runs (request ids): the answers stay
`candidates`, and a log of request lines that differ only in their ids scans a bounded number of
distinct texts (the scans grew with the lines before: every id made a new masked text)."""

from __future__ import annotations

import random

from logparse.grammar import messages
from logparse.grammar.messages import Catalog, catalog


def _fresh() -> Catalog:
    return Catalog(catalog().specs)


def _rid(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(32))


def _request_lines(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        rid = _rid(rng)
        out.append(f"[2026-04-14 10:28:{i % 60:02d}] Receive: obj=GenerateReqInput(rid='{rid}', text=None, "
                   f"sampling_params={{'temperature': 0.7, 'max_new_tokens': {rng.randint(1, 4096)}}}, stream=True)")
        out.append(f"[2026-04-14 10:28:{i % 60:02d}] Finish: obj=GenerateReqInput(rid='{rid}'), out={{'meta_info': "
                   f"{{'id': '{rid}', 'finish_reason': {{'type': 'stop'}}, 'e2e_latency': {rng.random():.3f}}}}}")
    return out


def _scans(lines: list[str]) -> int:
    cat = _fresh()
    for line in lines:
        cat.candidates_masked(line)
    return int(cat.__dict__["_masked_scans"])


def test_request_lines_that_differ_in_their_ids_are_scanned_once_per_shape() -> None:
    counts = [_scans(_request_lines(n)) for n in (50, 200, 800)]
    # Two shapes (Receive, Finish): the scans must not grow with the lines (they were 2n).
    assert counts[-1] <= 4, counts
    assert counts[-1] == counts[0], counts


def test_hex_masking_answers_as_candidates_around_every_needle() -> None:
    """Every needle (including those that can touch a hex run: all-hex words, `--a`, `errno 12`)
    glued before, after and inside ids, hashes and digits: the same codes as `candidates`."""
    cat = _fresh()
    rng = random.Random(11)
    needles = sorted({n for spec in cat.specs.values() for n in spec.needles})
    seps = ["", " ", "'", "-", "_", "=", "x", "0", "a", "é"]
    texts = []
    for needle in needles:
        for _ in range(6):
            rid = _rid(rng)
            cut = rng.randint(0, 32)
            a, b = rng.choice(seps), rng.choice(seps)
            texts += [f"id={rid}{a}{needle}{b}{rid[:cut]} end", f"{needle}{a}{rid}", f"{rid}{b}{needle.upper()}",
                      f"[{rid[:cut]}{needle}{rid[cut:]}]", f"x {rid} {needle} {rng.randint(0, 10**6)}"]
    texts += _request_lines(100)
    for text in texts:
        assert cat.candidates_masked(text) == cat.candidates(text), text


def test_needles_that_can_touch_a_hex_run_are_told_apart() -> None:
    touch = messages._touches_hex
    assert touch("dead") and touch("--a") and touch("errno 12") and touch("ab-x") and touch("a" * 16)
    assert not touch("xab") and not touch("out of memory") and not touch("nccl")
