"""Issue 13 re-tested as a new user, with logs its authors did not use: one regression test per
defect found (the runs table against `analyze --format json`, time windows on old and
interleaved logs, ...)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import logparse
from logparse.cli.main import main
from tests.conftest import FIXTURES, corpus_logs


def _json(*args: str) -> dict:
    r = CliRunner().invoke(main, ["analyze", *args, "--format", "json", "--no-redact"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)["files"][0]


@pytest.mark.parametrize("path", [*corpus_logs()[:20], FIXTURES / "logs" / "eagle3-kv-pool.log"],
                         ids=lambda p: p.name)
def test_runs_tp_and_dp_are_what_analyze_prints(path: Path) -> None:
    # Was: the runs table read only stated sizes, so dev-004 (TP0..TP7, DP0..DP7 tags, no
    # server_args) had tp_size and dp_size null while `analyze` said 8 and 8.
    runs = logparse.analyze(str(path)).table("runs")
    config = _json(str(path))["config"]
    if len(runs) != 1:
        pytest.skip("several attempts: the JSON config is the file's")
    for key in ("tp_size", "dp_size"):
        value = runs[key].iloc[0]
        assert (None if pd.isna(value) else int(value)) == config.get(key), key
