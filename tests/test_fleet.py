"""Fleet scale (`--dask`): a real LocalCluster on loopback with two workers gives the same bytes as
a local run, survives a worker killed mid-task, and reports every file that fails."""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from logparse.cli.main import main
from logparse.fleet import (
    CRASH_ONCE_ENV,
    DaskTarget,
    FilesFailed,
    TargetError,
    map_files,
    parse_target,
)
from tests.conftest import FIXTURES, REPO

distributed = pytest.importorskip("distributed")

LOGS = FIXTURES / "logs"
# The small whole-run fixtures (a crash, a kill, serving, a pasted shell): enough files for two
# workers to share, few enough lines to keep the module quick.
SAMPLE = ("eagle3-kv-pool.log", "nextn-1-topk.log", "nextn-2-mamba.log", "nextn-3-killed.log",
          "pasted-shell-session.log", "spec-serving-healthy.log")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="logdiag")


def _local_cluster() -> Any:
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    host="127.0.0.1", dashboard_address=None,
                                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                    silence_logs=logging.ERROR)


class _Clusters:
    """The module's cluster: two worker processes, one thread each, on 127.0.0.1 (~3 s to start),
    started again when a worker an earlier test killed is not back in time (seen once in a long
    CI run: the nanny did not bring it back within a minute). What the tests check is logdiag's
    behaviour on a cluster, not dask's recovery."""

    def __init__(self) -> None:
        self.current: Any = None

    def address(self) -> str:
        if self.current is not None:
            try:
                with distributed.Client(self.current.scheduler_address) as client:
                    client.wait_for_workers(2, timeout=60)  # a worker killed by an earlier test is back
                return str(self.current.scheduler_address)
            except TimeoutError:
                self.close()
        self.current = _local_cluster()
        with distributed.Client(self.current.scheduler_address) as client:
            client.wait_for_workers(2, timeout=60)
        return str(self.current.scheduler_address)

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


@pytest.fixture(scope="module")
def cluster() -> Iterator[_Clusters]:
    clusters = _Clusters()
    yield clusters
    clusters.close()


@pytest.fixture
def address(cluster: _Clusters) -> Iterator[str]:
    yield cluster.address()


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The whole-run fixtures under a *relative* path from another directory than the workers'
    (they must resolve it in the caller's working directory)."""
    (tmp_path / "logs").mkdir()
    for name in SAMPLE:
        shutil.copy(LOGS / name, tmp_path / "logs" / name)
    monkeypatch.chdir(tmp_path)
    return "logs"


def _bomb(path: Path) -> None:
    """A gzip log that fails only while it is read (on the worker): its first 70 kB are log
    lines (the up-front checks pass), then empty-ish lines push it past the 250x ratio limit."""
    text = (LOGS / "nextn-4-serving.log").read_bytes()
    head = text[:text.index(b"\n", 800) + 1]
    path.write_bytes(gzip.compress(head * (70_000 // len(head)) + b"hello world line\n" * 30_000,
                                   mtime=0))


# --------------------------------------------------------------------------- same bytes


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_check_on_dask_is_byte_identical(address: str, logs: str, fmt: str) -> None:
    local = run("check", logs, "--format", fmt)
    fleet = run("check", logs, "--format", fmt, "--dask", address)
    assert local.exit_code == 1, local.stderr  # the fixtures have failing runs
    assert (fleet.exit_code, fleet.stdout) == (local.exit_code, local.stdout), fleet.stderr
    assert "nextn-3-killed.log" in fleet.stdout


def test_dead_worker_file_is_retried(address: str, logs: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with distributed.Client(address) as client:
        before = set(client.run(os.getpid).values())
    marker = tmp_path / "crashed"
    monkeypatch.setenv(CRASH_ONCE_ENV, str(marker))
    fleet = run("check", logs, "--format", "json", "--dask", address)
    monkeypatch.delenv(CRASH_ONCE_ENV)
    assert marker.exists()  # a worker did die (os._exit) while it held a file
    with distributed.Client(address) as client:
        client.wait_for_workers(2, timeout=60)
        after = set(client.run(os.getpid).values())
    assert before - after, "the killed worker should have been replaced by a new process"
    local = run("check", logs, "--format", "json")
    assert (fleet.exit_code, fleet.stdout) == (local.exit_code, local.stdout), fleet.stderr


def test_failed_files_are_reported_not_dropped(address: str, logs: str) -> None:
    _bomb(Path(logs) / "bomb-1.log.gz")
    _bomb(Path(logs) / "bomb-2.log.gz")
    fleet = run("check", logs, "--format", "json", "--dask", address)
    assert fleet.exit_code == 2
    lines = fleet.stderr.splitlines()
    assert len(lines) == 2, fleet.stderr
    assert "bomb-1.log.gz" in lines[0] and "bomb-2.log.gz" in lines[1]
    assert all("decompression bomb" in line for line in lines)
    local = run("check", logs, "--format", "json")
    assert local.exit_code == 2 and local.stderr.splitlines()[0] == lines[0]


def test_caller_settings_reach_the_workers(address: str, logs: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers were started before this variable was set: it travels with the tasks."""
    _bomb(Path(logs) / "bomb-1.log.gz")
    monkeypatch.setenv("LOGDIAG_MAX_GZIP_RATIO", "0")
    fleet = run("check", logs, "--format", "json", "--dask", address)
    local = run("check", logs, "--format", "json")
    assert local.exit_code == 1
    assert (fleet.exit_code, fleet.stdout) == (local.exit_code, local.stdout), fleet.stderr
    assert "bomb-1.log.gz" in fleet.stdout


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_export_on_dask_is_byte_identical_despite_a_dead_worker(
        address: str, logs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "crashed"
    monkeypatch.setenv(CRASH_ONCE_ENV, str(marker))
    fleet = run("export", logs, "-o", "fleet", "--dask", address)
    monkeypatch.delenv(CRASH_ONCE_ENV)
    assert marker.exists()
    local = run("export", logs, "-o", "local")
    assert (fleet.exit_code, fleet.stderr) == (local.exit_code, local.stderr) == (0, "")
    exported = _tree(tmp_path / "local")
    assert "manifest.json" in exported and "decode_batch.parquet" in exported
    assert _tree(tmp_path / "fleet") == exported


def test_export_on_dask_lists_a_failed_file(address: str, logs: str, tmp_path: Path) -> None:
    _bomb(Path(logs) / "bomb-1.log.gz")
    fleet = run("export", logs, "-o", "fleet", "--format", "csv", "--dask", address)
    local = run("export", logs, "-o", "local", "--format", "csv")
    assert fleet.exit_code == local.exit_code == 2
    assert fleet.stderr.replace("fleet/", "local/") == local.stderr
    assert "bomb-1.log.gz" in fleet.stderr
    manifest = (tmp_path / "fleet" / "manifest.json").read_text()
    assert "bomb-1.log.gz" in manifest and "decompression bomb" in manifest
    assert _tree(tmp_path / "fleet") == _tree(tmp_path / "local")


def test_map_files_keeps_input_order(address: str) -> None:
    paths = [f"/x/{n}.log" for n in "qwertyuiopasdf"]
    expected = [os.path.basename(p) for p in paths]
    assert map_files(os.path.basename, paths, dask=address) == expected
    assert map_files(os.path.basename, paths, jobs=2) == expected
    assert map_files(os.path.basename, [], dask=address) == []
    seen: list[int] = []
    map_files(os.path.basename, paths, dask=address, on_done=seen.append)
    assert sorted(seen) == list(range(len(paths)))


def test_map_files_raises_all_failures_in_input_order(address: str, tmp_path: Path) -> None:
    from functools import partial

    from logparse.cli.check import analyze_file

    good = str(LOGS / "nextn-1-topk.log")
    bombs = [tmp_path / "b.log.gz", tmp_path / "a.log.gz"]
    for b in bombs:
        _bomb(b)
    with pytest.raises(FilesFailed) as err:
        map_files(partial(analyze_file, thresholds={}), [str(bombs[0]), good, str(bombs[1])],
                  dask=address)
    assert [f.path for f in err.value.failures] == [str(bombs[0]), str(bombs[1])]
    assert "(and 1 more file failed)" in str(err.value)


def test_local_cluster_started_for_the_call(logs: str) -> None:
    local = run("check", logs, "--format", "json")
    fleet = run("check", logs, "--format", "json", "--dask", "local:1")
    assert (fleet.exit_code, fleet.stdout) == (local.exit_code, local.stdout), fleet.stderr


# --------------------------------------------------------------------------- options and imports


@pytest.mark.parametrize(("spec", "target"), [
    ("local", DaskTarget(workers=2)),
    ("local:3", DaskTarget(workers=3)),
    ("tcp://10.0.0.5:8786", DaskTarget(address="tcp://10.0.0.5:8786")),
    ("sched.example:8786", DaskTarget(address="tcp://sched.example:8786")),
])
def test_parse_target(spec: str, target: DaskTarget) -> None:
    assert parse_target(spec) == target


@pytest.mark.parametrize("spec", ["local:0", "local:x", "nowhere", "http://h:1", "tcp://"])
def test_bad_dask_value_is_one_line_exit_2(spec: str) -> None:
    with pytest.raises(TargetError):
        parse_target(spec)
    r = run("check", str(LOGS / "nextn-1-topk.log"), "--dask", spec)
    assert r.exit_code == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and "--dask" in r.stderr


def test_unreachable_scheduler_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from logparse.fleet import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", "1s")
    r = run("check", str(LOGS / "nextn-1-topk.log"), "--dask", "tcp://127.0.0.1:9")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("logdiag: cannot connect to the Dask scheduler tcp://127.0.0.1:9")
    assert len(r.stderr.splitlines()) == 1


def test_without_the_extra_dask_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` fails
    r = run("check", str(LOGS / "nextn-1-topk.log"), "--dask", "local")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == "logdiag: --dask needs the dask extra: pip install 'logdiag[dask]'\n"


def test_check_without_dask_does_not_import_it() -> None:
    code = (
        "import sys\n"
        "from logparse.cli.main import main\n"
        "try:\n"
        f"    main(['check', {str(LOGS)!r}, '--format', 'json', '-o', '/dev/null', '--jobs', '2'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "sys.stderr.write('\\nLOADED=' + ','.join(loaded) + '\\n')\n"
        "sys.stderr.write('FLEET=' + str('logparse.fleet' in sys.modules) + '\\n')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          check=False, timeout=300)
    assert "FLEET=True" in proc.stderr, proc.stderr  # the fleet code path did run
    assert "\nLOADED=\n" in proc.stderr, proc.stderr
