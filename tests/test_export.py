"""`logdiag export`: the documented schema, row counts against per-file runs, determinism,
redaction,
failed inputs, output safety, and the README's DuckDB query."""

from __future__ import annotations

import json
import os
import pickle
import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logparse.cli.main import main
from logparse.engine.core import analyze
from logparse.export.schema import SCHEMA_VERSION, arrow_schema, table_columns, table_kinds
from logparse.export.tables import ExportOptions, FileTables, export_file
from logparse.export.write import write_dataset
from logparse.parsing.pipeline import parse_file
from logparse.render.outfiles import OutputError
from logparse.run.tables import IDENTITY, PROVENANCE
from tests.conftest import FIXTURES, REPO

LOGS = FIXTURES / "logs"
FILES = sorted(str(p) for p in LOGS.glob("*.log"))
SECRET = "sk-live-Zx81pQ4rT6vW9yB2nM5k"
TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
SECRET_LOG = f"""\
$ export HF_TOKEN={TOKEN}
$ export MY_DB_PASSWORD=hunter2hunter2
[2026-01-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=1, api_key='{SECRET}', port=1)
::set-output name=x::y
[2026-01-01 10:00:02] The server is fired up and ready to roll!
Traceback (most recent call last):
  File "/sgl/x.py", line 1, in <module>
ValueError: =HYPERLINK("http://evil.example/","x")
"""


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "out"
    result = run_cli("export", str(LOGS), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


# --------------------------------------------------------------------------- the documented schema


def documented() -> tuple[str, dict[str, list[tuple[str, str]]]]:
    """(schema version, {table: [(column, type)]}) as docs/export.md states them."""
    text = (REPO / "docs" / "export.md").read_text(encoding="utf-8")
    body = text[text.index("<!-- schema") : text.index("<!-- /schema -->")]
    version = re.search(r"Schema version: \*\*([\d.]+)\*\*", body)
    assert version is not None
    sections = re.split(r"^### ", body, flags=re.MULTILINE)[1:]
    tables: dict[str, list[tuple[str, str]]] = {}
    common: dict[str, list[tuple[str, str]]] = {}
    for section in sections:
        title, _, rest = section.partition("\n")
        rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|", rest, flags=re.MULTILINE)
        m = re.fullmatch(r"`(\w+)`", title.strip())
        if m is None:
            common["identity" if "starts with" in title else "provenance"] = rows
            continue
        kind = m.group(1)
        head = common["identity"] + ([] if kind in ("findings", "runs") else common["provenance"])
        tables[kind] = head + rows
    return version.group(1), tables


def test_docs_document_every_table_with_the_code_columns() -> None:
    version, tables = documented()
    assert version == SCHEMA_VERSION
    assert sorted(tables) == sorted(table_kinds())
    for kind in table_kinds():
        assert tables[kind] == [(c.name, c.type) for c in table_columns(kind)], (
            f"docs/export.md's `{kind}` differs from the code: update the doc "
            "(and SCHEMA_VERSION if a "
            "column changed)"
        )


def test_written_parquet_has_the_documented_schema(dataset: Path) -> None:
    _, tables = documented()
    written = sorted(p.stem for p in dataset.glob("*.parquet"))
    assert {"decode_batch", "findings", "runs", "traceback", "server_args"} <= set(written)
    for kind in written:
        schema = pq.read_schema(dataset / f"{kind}.parquet")
        assert schema.metadata[b"logdiag.schema_version"] == SCHEMA_VERSION.encode()
        assert schema.metadata[b"logdiag.table"] == kind.encode()
        assert schema.names == [name for name, _ in tables[kind]]
        assert schema.remove_metadata().equals(arrow_schema(kind).remove_metadata()), kind
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["schema_version"] == SCHEMA_VERSION and manifest["failed"] == 0
    assert sorted(manifest["tables"]) == written


def test_pandas_reads_typed_columns(dataset: Path) -> None:
    import pandas as pd

    frame = pd.read_parquet(dataset / "decode_batch.parquet")
    assert str(frame["ts"].dtype).startswith("datetime64")
    assert isinstance(frame["rank"].dtype, pd.CategoricalDtype)
    assert frame["line"].dtype == "int64" and frame["launch"].dtype == "int32"
    assert pd.api.types.is_float_dtype(frame["gen_throughput"])


# --------------------------------------------------------------------------- rows: nothing dropped


def test_every_row_of_every_file_is_exported(dataset: Path) -> None:
    expected: dict[str, int] = {}
    runs = 0
    for f in FILES:
        log = parse_file(f)
        for kind, cols in (
            ("decode_batch", log.decode),
            ("prefill_batch", log.prefill),
            ("http_access", log.access),
        ):
            expected[kind] = expected.get(kind, 0) + len(cols)
        for e in log.events:
            expected[e.kind] = expected.get(e.kind, 0) + 1
        runs += len(analyze(f).attempts)
    got = {p.stem: pq.read_metadata(p).num_rows for p in dataset.glob("*.parquet")}
    assert got.pop("runs") == runs
    assert got.pop("findings") > 0
    assert got == {k: v for k, v in expected.items() if v}
    assert expected["decode_batch"] == 348  # issue 13: `events DIR` once exported 106


def test_runs_rows_come_from_the_engine_and_the_run_model(dataset: Path) -> None:
    runs = pq.read_table(dataset / "runs.parquet").to_pylist()
    f = str(LOGS / "nextn-hybrid-launch.log")
    a = analyze(f)
    mine = [r for r in runs if r["file"] == f]
    assert [r["launch"] for r in mine] == [1, 2, 3, 4]
    for row, attempt, lc in zip(mine, a.attempts, a.run.lifecycles, strict=True):
        assert row["outcome"] == attempt.outcome
        assert row["root_cause"] == (attempt.root_cause.code if attempt.root_cause else None)
        assert row["time_to_ready_s"] == lc.time_to_ready_s and row["ready"] == lc.ready
        assert row["tp_size"] == 8
    assert mine[-1]["outcome"] == a.outcome == "serving"
    assert mine[-1]["gen_throughput_median"] is not None and mine[-1]["decode_lines"] > 0


def test_launch_column_is_the_run_models_attempt(dataset: Path) -> None:
    f = str(LOGS / "nextn-hybrid-launch.log")
    run = analyze(f).run
    for kind in ("decode_batch", "launch_command", "traceback", "findings"):
        rows = pq.read_table(
            dataset / f"{kind}.parquet", columns=["file", "launch", "line"]
        ).to_pylist()
        mine = [r for r in rows if r["file"] == f]
        assert mine, kind
        assert all(r["launch"] == run.launch_at(r["line"]).index for r in mine), kind


def test_events_dir_exports_every_files_rows(tmp_path: Path) -> None:
    result = run_cli("events", str(LOGS), "--kind", "decode_batch", "--format", "jsonl")
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    per_file = {f: len(parse_file(f).decode) for f in FILES}
    assert len(rows) == sum(per_file.values()) == 348
    by_source: dict[str, int] = {}
    for r in rows:
        by_source[r["source"]] = by_source.get(r["source"], 0) + 1
    assert by_source == {f: n for f, n in per_file.items() if n}


# --------------------------------------------------------------------------- determinism


def test_same_bytes_whatever_order_results_arrive(tmp_path: Path, dataset: Path) -> None:
    options = ExportOptions()
    results = [export_file(f, options) for f in FILES]
    results = [pickle.loads(pickle.dumps(r)) for r in results]  # as from a worker process
    random.Random(7).shuffle(results)
    out = tmp_path / "shuffled"
    write_dataset(results, out, "parquet", inputs=FILES)
    for p in dataset.iterdir():
        assert (out / p.name).read_bytes() == p.read_bytes(), p.name


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_formats_have_the_same_rows(tmp_path: Path, dataset: Path, fmt: str) -> None:
    out = tmp_path / fmt
    assert (
        run_cli(
            "export",
            str(LOGS),
            "-o",
            str(out),
            "--format",
            fmt,
            "--kind",
            "decode_batch",
            "--kind",
            "runs",
        ).exit_code
        == 0
    )
    for kind in ("decode_batch", "runs"):
        text = (out / f"{kind}.{fmt}").read_text(encoding="utf-8").splitlines()
        rows = pq.read_metadata(dataset / f"{kind}.parquet").num_rows
        if fmt == "csv":
            assert text[0].split(",") == [c.name for c in table_columns(kind)]
            assert len(text) == rows + 1
        else:
            assert len(text) == rows
            assert list(json.loads(text[0])) == [c.name for c in table_columns(kind)]
    assert sorted(p.name for p in out.iterdir()) == [
        f"decode_batch.{fmt}",
        "manifest.json",
        f"runs.{fmt}",
    ]


# --------------------------------------------------------------------------- output safety


def all_text(out: Path) -> str:
    parts = []
    for p in sorted(out.iterdir()):
        if p.suffix == ".parquet":
            parts.append(json.dumps(pq.read_table(p).to_pylist(), default=str))
        else:
            parts.append(p.read_text(encoding="utf-8"))
    return "\n".join(parts)


def test_secrets_redacted_by_default_and_kept_with_no_redact(tmp_path: Path) -> None:
    log = tmp_path / "secret.log"
    log.write_text(SECRET_LOG, encoding="utf-8")
    for fmt in ("parquet", "csv", "jsonl"):
        out = tmp_path / f"red-{fmt}"
        assert run_cli("export", str(log), "-o", str(out), "--format", fmt).exit_code == 0
        text = all_text(out)
        assert SECRET not in text and TOKEN not in text and "hunter2hunter2" not in text, fmt
        assert "[REDACTED]" in text
        assert "\n::set-output" not in text and '"::set-output' not in text
    out = tmp_path / "raw"
    assert run_cli("export", str(log), "-o", str(out), "--no-redact").exit_code == 0
    text = all_text(out)
    assert SECRET in text and TOKEN in text and "hunter2hunter2" in text


def test_csv_cells_never_start_a_formula(tmp_path: Path) -> None:
    log = tmp_path / "formula.log"
    log.write_text(SECRET_LOG, encoding="utf-8")
    out = tmp_path / "csv"
    assert (
        run_cli(
            "export", str(log), "-o", str(out), "--format", "csv", "--kind", "traceback"
        ).exit_code
        == 0
    )
    import csv

    with open(out / "traceback.csv", encoding="utf-8", newline="") as fh:
        cells = [c for row in csv.reader(fh) for c in row]
    assert any("HYPERLINK" in c for c in cells)
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)


def test_refuses_to_overwrite_what_logdiag_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "decode_batch.parquet"
    mine.write_bytes(b"the user's own file")
    notes = out / "notes.txt"
    notes.write_text("keep me")
    result = run_cli("export", str(LOGS), "-o", str(out))
    assert result.exit_code == 2 and "refusing to overwrite" in result.stderr
    assert mine.read_bytes() == b"the user's own file" and sorted(
        p.name for p in out.iterdir()
    ) == ["decode_batch.parquet", "notes.txt"]
    mine.unlink()
    assert run_cli("export", str(LOGS), "-o", str(out)).exit_code == 0
    # Its own files are replaced; a table this export does not write is removed, the user's
    # file stays.
    assert run_cli("export", str(LOGS), "-o", str(out), "--kind", "runs").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt", "runs.parquet"]
    assert notes.read_text() == "keep me"


def test_refuses_to_write_over_an_input(tmp_path: Path) -> None:
    log = tmp_path / "decode_batch.parquet"
    original = (LOGS / "spec-serving-healthy.log").read_bytes()
    log.write_bytes(original)
    with pytest.raises(OutputError):
        write_dataset(
            [export_file(str(log), ExportOptions())], tmp_path, "parquet", inputs=[str(log)]
        )
    assert log.read_bytes() == original
    result = run_cli("export", str(log), "-o", str(log))
    assert result.exit_code == 2 and "not a folder" in result.stderr
    assert log.read_bytes() == original


# --------------------------------------------------------------------------- failed inputs


def test_a_failing_input_is_listed_never_dropped(tmp_path: Path) -> None:
    good = str(LOGS / "spec-serving-healthy.log")
    missing = str(tmp_path / "gone.log")
    results = [export_file(good, ExportOptions()), export_file(missing, ExportOptions())]
    assert results[0].ok and not results[1].ok and results[1].tables == {}
    manifest = write_dataset(results, tmp_path / "out", "parquet", inputs=[good, missing])
    assert [i["status"] for i in manifest.inputs] == ["ok", "failed"]
    assert "gone.log" in manifest.inputs[1]["errors"][0]
    doc = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert doc["failed"] == 1 and doc["inputs"][1]["file"] == missing


def test_cli_exports_the_rest_and_exits_2_when_an_input_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(
        (LOGS / "spec-serving-healthy.log").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (logs / "b.log.gz").write_bytes(gzip.compress((LOGS / "nextn-4-serving.log").read_bytes()))
    # Up-front checks pass; the gzip ratio limit then stops b.log.gz while it is read.
    monkeypatch.setattr("logparse.io.reader.check_readable", lambda path: None)
    monkeypatch.setenv("LOGDIAG_MAX_GZIP_RATIO", "1.5")
    out = tmp_path / "out"
    result = run_cli("export", str(logs), "-o", str(out))
    doc = json.loads((out / "manifest.json").read_text())
    assert result.exit_code == 2
    assert "b.log.gz" in result.stderr and "1 of 2 inputs failed" in result.stderr
    assert [i["status"] for i in doc["inputs"]] == ["ok", "failed"]
    assert pq.read_metadata(out / "decode_batch.parquet").num_rows == len(
        parse_file(str(logs / "a.log")).decode
    )


def test_unknown_table_and_missing_output_are_one_line_errors() -> None:
    result = run_cli("export", str(LOGS), "-o", "x", "--kind", "nope")
    assert result.exit_code == 2 and "unknown table 'nope'" in result.stderr
    result = run_cli("export", str(LOGS))
    assert result.exit_code == 2 and "missing -o" in result.stderr
    listed = run_cli("export", "--kind", "list").stdout.split()
    assert listed == table_kinds()


def test_file_tables_pickle_and_keep_the_schema() -> None:
    r = export_file(
        str(LOGS / "nextn-hybrid-launch.log"), ExportOptions(kinds=("decode_batch", "runs"))
    )
    assert isinstance(r, FileTables) and sorted(r.tables) == ["decode_batch", "runs"]
    back = pickle.loads(pickle.dumps(r))
    assert all(back.tables[k].equals(r.tables[k]) for k in r.tables)
    assert r.runs is not None and r.runs.num_rows == 4
    assert isinstance(r.tables["decode_batch"].schema.field("rank").type, pa.DictionaryType)
    assert [f.name for f in r.tables["runs"].schema][: len(IDENTITY)] == ["run", "file", "launch"]
    assert len(PROVENANCE) == 5


# --------------------------------------------------------------------------- README


def readme_query() -> tuple[str, str]:
    """(the export command, the DuckDB query) of the README's Export section, between markers."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- export-example -->") : text.index("<!-- /export-example -->")]
    command = re.search(r"^(logdiag export .+)$", block, flags=re.MULTILINE)
    query = re.search(r"```sql\n(.+?)```", block, flags=re.DOTALL)
    assert command is not None and query is not None
    return command.group(1), query.group(1)


def test_readme_duckdb_query_runs_on_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    command, query = readme_query()
    args = command.split()[1:]
    assert args[:2] == ["export", "fixtures/logs"]
    monkeypatch.chdir(REPO)
    out = tmp_path / "fleet"
    args[args.index("-o") + 1] = str(out)
    assert run_cli(*args).exit_code == 0
    monkeypatch.chdir(tmp_path)
    rows = duckdb.sql(query).fetchall()
    runs = pq.read_table(out / "runs.parquet").to_pylist()
    assert len(rows) == len(runs) == sum(len(analyze(f).attempts) for f in FILES)
    by_key = {(r["file"], r["launch"]): r for r in runs}
    for file, launch, outcome, root, decode_lines, median in rows:
        run = by_key[(file, launch)]
        assert outcome == run["outcome"] and root == run["root_cause_name"]
        assert decode_lines == run["decode_lines"]
        if run["gen_throughput_median"] is None:
            assert median is None
        else:
            assert median == pytest.approx(run["gen_throughput_median"], abs=0.05)
    assert sum(r[4] for r in rows) == 348
    assert os.path.isdir(out)


# --------------------------------------------------------------------------- inputs and windows


def test_stdin_and_a_fifo_are_exported_once(tmp_path: Path) -> None:
    import threading

    text = (LOGS / "spec-serving-healthy.log").read_text(encoding="utf-8")
    result = CliRunner().invoke(
        main, ["export", "-", "-o", str(tmp_path / "stdin"), "--kind", "runs"], input=text
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "stdin" / "manifest.json").read_text())
    assert doc["inputs"][0]["run"] == "stdin" and doc["inputs"][0]["lines"] == text.count("\n")
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(text,), daemon=True)
    writer.start()
    r = export_file(str(fifo), ExportOptions(kinds=("decode_batch",)))
    writer.join(timeout=30)
    assert r.ok and r.tables["decode_batch"].num_rows == 117 and len(r.run) == 16


def test_since_until_export_only_the_window(tmp_path: Path) -> None:
    from logparse.model.window import window_of

    log = str(LOGS / "spec-serving-healthy.log")
    window = window_of("2026-04-21 08:50:00", "2026-04-21 08:51:00")
    expected = len(parse_file(log, window=window).decode)
    assert 0 < expected < len(parse_file(log).decode)
    out = tmp_path / "w"
    args = ["export", log, "-o", str(out), "--kind", "decode_batch"]
    assert (
        run_cli(*args, "--since", "2026-04-21 08:50:00", "--until", "2026-04-21 08:51:00").exit_code
        == 0
    )
    table = pq.read_table(out / "decode_batch.parquet")
    assert table.num_rows == expected
    ts = table.column("ts").to_pylist()
    assert (
        min(ts).isoformat() >= "2026-04-21T08:50:00"
        and max(ts).isoformat() <= "2026-04-21T08:51:00"
    )
    assert run_cli(*args, "--since", "tomorrow").exit_code == 2


def test_a_file_name_that_is_not_utf8_is_exported_with_a_replacement(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    name = os.fsdecode(b"node\xff.log")  # Python's surrogate escape of the undecodable byte
    (logs / name).write_bytes((LOGS / "spec-serving-healthy.log").read_bytes())
    for fmt in ("parquet", "jsonl"):
        out = tmp_path / fmt
        result = run_cli("export", str(logs), "-o", str(out), "--format", fmt, "--kind", "runs")
        assert result.exit_code == 0, result.output
        doc = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert doc["inputs"][0]["file"].endswith("node\ufffd.log")
    assert (
        pq.read_table(tmp_path / "parquet" / "runs.parquet")
        .column("file")[0]
        .as_py()
        .endswith("node\ufffd.log")
    )


HOSTILE = [
    (
        "[2026-01-01 10:00:00 TP0] Decode batch. #running-req: 99999999999999999999999999, "
        "#token: 1, token usage: 0.01, gen throughput (token/s): 1e400, #queue-req: 0, "
    ),
    "[2026-01-01 10:00:01] server_args=ServerArgs(tp_size=" + "9" * 5000 + ", api_key='x')",
    (
        "[2026-01-01 10:00:02] Load weight end. type=X, dtype=torch.bfloat16, avail mem=nan GB, "
        "mem usage=-inf GB."
    ),
    "\x00\x1b[31m::error::boom\x1b[0m",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=200)), min_size=1, max_size=12)
)
def test_no_log_makes_export_fail(tmp_path: Path, lines: list[str]) -> None:
    log = tmp_path / "h.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    r = export_file(str(log), ExportOptions())
    assert r.ok, r.errors
    assert set(r.tables) >= {"findings", "runs"}
    for kind, table in r.tables.items():
        assert table.schema.remove_metadata().equals(arrow_schema(kind).remove_metadata()), kind
