"""Stage 1 appends the lines of learned stats and access shapes straight to the columns
(`FastPath.parse_hot` → `columns.HotRows`, no fields dict per line). The columns must be exactly
those of the plain way — `parse` to (envelope, class, fields), then `StatsColumns.add` /
`AccessColumns.add` — byte for byte, with the same rank and string codes, the same extras in the
same order and the same damage count, on varied and damaged lines."""

from __future__ import annotations

import random
from typing import Any

from logparse.grammar.build import get_parser
from logparse.io.readreport import ReadReport
from logparse.model import numbers
from logparse.model.events import DecodeBatch, HttpAccess, PrefillBatch
from logparse.parsing import columns, pipeline


def _lines(n: int, seed: int) -> list[tuple[int, str, Any]]:
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        ts = f"2026-04-14 10:{i // 600 % 60:02d}:{i // 10 % 60:02d}"
        if rng.random() < 0.3:
            ts += f".{rng.randint(0, 999):03d}"
        rank = rng.choice(["TP0", "TP1", "DP1 TP3", "TP2 EP2"])
        # Damaged values now and then: not a number, inf, nan, a count beyond MAX_COUNT.
        bad = rng.choice(["x", "inf", "nan", "1e300", "-5"]) if rng.random() < 0.05 else None
        tail = rng.choice(["", "", "", ", ", ",", " ", "  ", ",,"])
        kind = i % 4
        if kind == 0:
            head = rng.choice(["Decode batch, ", "Decode batch. ", f"Decode batch [{i}], "])
            usage = "full token usage" if i % 8 == 0 else "token usage"  # a hybrid model's pools
            out.append(
                f"[{ts} {rank}] {head}#running-req: {bad or rng.randint(0, 64)}, #token: {rng.randint(0, 99999)}, "
                f"{usage}: {rng.random():.2f}, accept len: {1 + rng.random() * 3:.2f}, "
                f"accept rate: {rng.random():.2f}, cuda graph: {rng.choice(['True', 'False'])}, "
                f"gen throughput (token/s): {bad or format(rng.random() * 3000, '.2f')}, #queue-req: {rng.randint(0, 9)}{tail}")
        elif kind == 1:
            head = rng.choice(["Prefill batch, ", f"Prefill batch [{i}], ",
                               f"Prefill batch(mixed #running-req: {rng.randint(0, 9)}). "])
            graph = rng.choice(["cuda graph", "npu graph"])
            out.append(
                f"[{ts} {rank}] {head}#new-seq: {rng.randint(1, 4)}, #new-token: {bad or rng.randint(1, 9000)}, "
                f"#cached-token: {rng.randint(0, 9000)}, token usage: {rng.random():.2f}, "
                f"#running-req: {rng.randint(0, 40)}, #queue-req: {rng.randint(0, 3)}, "
                f"{graph}: {rng.choice(['True', 'False'])}, input throughput (token/s): {rng.random() * 9000:.2f}{tail}")
        elif kind == 2:
            path = rng.choice(["/generate", "/v1/chat/completions", "/health?x=1", "/metrics"])
            status = rng.choice(["200 OK", "404 Not Found", "500 Internal Server Error", ""])
            client = rng.choice([f"10.0.0.{i % 250}:5{i % 9999:04d}", "unix", "[::1]:443"])
            sep = f'" {status}' if status else '"'
            out.append(f'[{ts}] INFO:     {client} - "{rng.choice(["POST", "GET"])} {path} HTTP/1.1{sep}')
        else:
            out.append(f"[{ts} {rank}] Decode batch, #running-req: {i % 5}, hicache hit rate: {rng.random():.2f}, "
                       f"#token: {i}, cuda graph: True, gen throughput (token/s): 12.5, #queue-req: 0")
    return [(no, text, None) for no, text in enumerate(out, 1)]


def _plain(lines: list[tuple[int, str, Any]]) -> tuple[columns.StatsColumns, columns.StatsColumns, columns.AccessColumns]:
    """The columns the plain way: every line through `parse` and the stores' `add`."""
    parser = get_parser()
    decode, prefill, access = columns.decode_columns(), columns.prefill_columns(), columns.AccessColumns()
    adds = {DecodeBatch: decode.add, PrefillBatch: prefill.add, HttpAccess: access.add}
    times = pipeline.TimeCache()
    for no, text, wrapper in lines:
        env, cls, kw = parser.parse(text)
        add = adds.get(cls)
        if add is not None:
            stamp = env.ts if env is not None and env.ts is not None else (wrapper.ts if wrapper is not None else None)
            add(no, times.epoch(stamp), env.rank if env is not None else None, kw)
    return decode, prefill, access


def _same(a: Any, b: Any) -> None:
    assert a.line == b.line and a.ts.tobytes() == b.ts.tobytes() and a.rank == b.rank
    assert a.ranks.values == b.ranks.values
    if isinstance(a, columns.StatsColumns):
        for name in a.fields:
            assert a.column(name).tobytes() == b.column(name).tobytes(), name
        assert list(a.extra) == list(b.extra)
        for name in a.extra:
            assert a.extra[name][0] == b.extra[name][0] and a.extra[name][1].tobytes() == b.extra[name][1].tobytes()
    else:
        assert (a.status, a.method, a.path, a.client) == (b.status, b.method, b.path, b.client)
        assert a.strings.values == b.strings.values


def test_hot_rows_equal_the_plain_columns(monkeypatch: Any) -> None:
    made: list[int] = []
    for name in ("stats_adder", "access_adder"):
        original = getattr(columns.HotRows, name)

        def counted(self: Any, key: int, *args: Any, _original: Any = original) -> Any:
            made.append(key)
            return _original(self, key, *args)

        monkeypatch.setattr(columns.HotRows, name, counted)
    warm = _lines(3000, 1)
    _plain(warm)  # the shared parser learns its shapes (after 128 and 256 lines of a kind)
    lines = _lines(6000, 2)
    damaged = numbers.damaged()
    plain = _plain(lines)
    plain_damage = numbers.damaged() - damaged
    part = pipeline._new_part("x")
    part.report = ReadReport(path="x")
    damaged = numbers.damaged()
    rest = list(pipeline._stage1(iter(lines), part, False))  # not hot: a ',,' tail is no stats line
    assert len(rest) < len(lines) // 10
    assert numbers.damaged() - damaged == plain_damage > 0
    assert len(set(made)) >= 3  # decode, prefill and access rows did go straight to the columns
    for a, b in zip((part.decode, part.prefill, part.access), plain, strict=True):
        assert len(a) > 1000
        _same(a, b)


def test_tight_signature_implies_the_body_token_with_the_same_values() -> None:
    """A fused stats shape drops the body lookahead only for the STATS_BODY it was proved for:
    the grammar's terminal is still that text (else the optimisation is silently off), and on
    random bodies built from key and value pieces, whenever the tight signature matches, the
    lookahead `(?>BODY)\\Z` holds and the signature's captures are the same."""
    import re

    from logparse.grammar import fastpath
    from logparse.grammar.transform.runtime import _Signature

    fast = get_parser().fast
    assert fast is not None and fast.data.terminal_patterns is not None
    assert fast.data.terminal_patterns["STATS_BODY"] == fastpath.PROVED_STATS_BODY
    body = re.compile(f"(?>{fastpath.PROVED_STATS_BODY})\\Z")
    keys = ["#running-req", "token usage", "gen throughput (token/s)"]
    tight_src = fastpath._tight_signature(keys, fastpath.PROVED_STATS_BODY)
    assert tight_src is not None and fastpath._tight_signature(keys, "[^\\n]+") is None
    tight, loose = re.compile(tight_src), _Signature(keys, {}).regex
    rng = random.Random(3)
    pieces = ["", "1", "0.5", " ", "a: b", "x ", ":", " 7", "True"]
    tails = ["", ",", ", ", " ", "  ", ",,", ", ,", " ,"]
    matched = 0
    for _ in range(20000):
        text = ", ".join(f"{k}: {''.join(rng.choice(pieces) for _ in range(rng.randint(0, 2)))}" for k in keys)
        text += rng.choice(tails)
        m = tight.fullmatch(text)
        if m is None:
            continue
        matched += 1
        assert body.match(text) is not None, text
        lm = loose.fullmatch(text)
        assert lm is not None and lm.groups() == m.groups(), text
    assert matched > 5000
