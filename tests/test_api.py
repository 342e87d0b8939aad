"""The Python API: `analyze` → Analysis with outcome, root cause, findings, launches, facts and
typed
tables that agree with the engine, the run model, the parser and `logdiag export`."""

from __future__ import annotations

import subprocess
import sys
import typing

import pandas as pd
import pytest

import logparse
from logparse.export.schema import table_columns
from logparse.run.tables import event_kinds
from tests.conftest import FIXTURES, corpus_logs

LOG = str(FIXTURES / "logs" / "nextn-hybrid-launch.log")


@pytest.fixture(scope="module")
def analysis() -> logparse.Analysis:
    return logparse.analyze(LOG)


def test_public_names_and_cheap_import() -> None:
    assert logparse.__all__ == sorted(logparse.__all__)
    for name in logparse.__all__:
        assert getattr(logparse, name) is not None
    code = (
        "import sys, logparse; a = logparse.Analysis; "
        "print(any(m in sys.modules for m in ('pandas', 'pyarrow', 'lark')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"  # naming the types loads neither pandas, pyarrow nor the grammar


def test_type_hints_resolve_for_an_editor() -> None:
    hints = typing.get_type_hints(logparse.analyze)
    assert hints["return"] is logparse.Analysis
    assert typing.get_type_hints(logparse.parse)["return"] is logparse.ParsedLog
    table = typing.get_type_hints(logparse.Analysis.table, {"pd": pd})
    assert table["return"] is pd.DataFrame


def test_verdicts_are_the_engines(analysis: logparse.Analysis) -> None:
    assert analysis.outcome == "serving" and analysis.root_cause is None
    assert analysis.launches is analysis.attempts and len(analysis.launches) == 4
    assert [a.outcome for a in analysis.launches] == ["crashed-at-startup"] * 3 + ["serving"]
    assert all(isinstance(f, logparse.Finding) for f in analysis.findings)
    assert analysis.facts == analysis.views.facts() and analysis.facts["tp_size"] == 8


def test_table_dtypes(analysis: logparse.Analysis) -> None:
    decode = analysis.table("decode_batch")
    assert str(decode["ts"].dtype).startswith("datetime64")
    assert isinstance(decode["rank"].dtype, pd.CategoricalDtype)
    assert pd.api.types.is_integer_dtype(decode["line"]) and pd.api.types.is_integer_dtype(
        decode["running"]
    )
    assert pd.api.types.is_float_dtype(decode["gen_throughput"])
    assert decode["cuda_graph"].dtype == "boolean"
    assert list(decode.columns) == [c.name for c in table_columns("decode_batch")]
    assert isinstance(decode["extra"].iloc[0], dict)
    args = analysis.table("server_args")
    assert isinstance(args["args"].iloc[0], dict) and args["args"].iloc[0]["tp_size"] == 8
    sizes = analysis.table("capture_batch_sizes")["sizes"].iloc[0]
    assert isinstance(sizes, list) and all(isinstance(s, int) for s in sizes)


def test_tables_agree_with_the_parser_and_the_run_model(analysis: logparse.Analysis) -> None:
    log = analysis.log
    assert len(analysis.table("decode_batch")) == len(log.decode)
    assert analysis.table("decode_batch")["line"].tolist() == list(log.decode.line)
    tb = analysis.table("traceback")
    assert tb["line"].tolist() == [e.line for e in log.events if e.kind == "traceback"]
    assert all(analysis.run.launch_at(int(r.line)).index == r.launch for r in tb.itertuples())
    runs = analysis.table("runs")
    assert runs["launch"].tolist() == [lc.launch.index for lc in analysis.run.lifecycles]
    assert runs["outcome"].tolist() == [a.outcome for a in analysis.attempts]
    ttr = runs["time_to_ready_s"].tolist()
    assert ttr[-1] == analysis.run.last.time_to_ready_s and all(pd.isna(x) for x in ttr[:3])
    findings = analysis.table("findings")
    assert len(findings) == len(analysis.all_findings())
    roots = findings[findings["root_cause"]]
    assert roots["code"].tolist() == [a.root_cause.code for a in analysis.attempts if a.root_cause]


def test_tables_mapping_and_unknown_kinds(analysis: logparse.Analysis) -> None:
    names = list(analysis.tables)
    assert names[-2:] == ["findings", "runs"] and "decode_batch" in names
    assert "bench_serving_result" not in analysis.tables
    assert analysis.tables["decode_batch"] is analysis.table("decode_batch")  # built once
    empty = analysis.table("bench_serving_result")
    assert len(empty) == 0 and list(empty.columns) == [
        c.name for c in table_columns("bench_serving_result")
    ]
    with pytest.raises(ValueError, match="unknown table"):
        analysis.table("nope")
    with pytest.raises(KeyError):
        analysis.tables["bench_serving_result"]


def test_every_kind_builds_on_corpus_logs() -> None:
    # Every event kind, on logs that have it, turns into a table of its declared columns.
    seen: set[str] = set()
    for path in corpus_logs()[:25]:
        a = logparse.analyze(str(path))
        for kind in a.tables:
            frame = a.table(kind)
            assert list(frame.columns) == [c.name for c in table_columns(kind)], kind
            assert len(frame) > 0 or kind in ("findings",), (path.name, kind)
            seen.add(kind)
    assert len(seen & set(event_kinds())) >= 30


def test_a_bad_input_raises_input_error(tmp_path: typing.Any) -> None:
    from logparse.io.reader import InputError

    with pytest.raises(InputError):
        logparse.analyze(str(tmp_path / "missing.log"))
