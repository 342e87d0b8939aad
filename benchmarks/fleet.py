"""Fleet benchmark: `check` and `export` over a directory of generated logs, locally and on Dask.

    python -m benchmarks.fleet [--files 200] [--min-lines 1000] [--max-lines 20000]
                               [--modes jobs1,local:1,local:2] [--commands check,export]
                               [--dask tcp://host:8786]

Generates (once, cached under benchmarks/out/fleet/) FILES logs of mixed sizes with
`benchmarks/generate.py` (log-uniform line counts between --min-lines and --max-lines, 1 to 8
ranks, every fifth file gzip-compressed), then runs each command in a fresh process per mode:
`jobs1` (`--jobs 1`: this process, no Dask; `jobsN`: a pool of N processes), `local:1` and
`local:2` (`--dask local:N`: a LocalCluster started by the call, its start-up in the wall time)
and, with --dask, a running scheduler.

Reported per run: wall seconds, CPU seconds of the whole process tree, files/s, lines/s, the
peak RSS of the logdiag process and of each Dask worker. RSS is sampled every 50 ms over the
process tree (psutil): a peak shorter than that can be missed. Every run's output (the check
JSON, the exported files) is hashed and compared with the `jobs1` run: the table says whether
the bytes are identical.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import generate as gen

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "out" / "fleet"
PY = sys.executable
SAMPLE_S = 0.05


@dataclass
class Run:
    command: str
    mode: str
    wall_s: float = 0.0
    cpu_s: float = 0.0  # user + system time of the whole process tree (workers included)
    exit_code: int = 0
    main_peak_mib: float = 0.0
    worker_peak_mib: list[float] = field(default_factory=list)
    digest: str = ""
    error: str = ""


# --------------------------------------------------------------------------- the logs


def plan(files: int, min_lines: int, max_lines: int, seed: int) -> list[tuple[str, int, int, bool]]:
    """(name, lines, ranks, gzip) per file, deterministic for the arguments."""
    rnd = random.Random(seed)
    out = []
    for k in range(files):
        lines = int(math.exp(rnd.uniform(math.log(min_lines), math.log(max_lines))))
        ranks = rnd.choice((1, 2, 4, 8))
        gz = k % 5 == 4
        out.append((f"node{k:03d}-{lines}l-r{ranks}.log" + (".gz" if gz else ""), lines, ranks, gz))
    return out


def ensure_logs(args: argparse.Namespace) -> tuple[Path, int, int]:
    """The log directory (generated once per arguments); total files and physical lines."""
    key = f"v{gen.GENERATOR_VERSION}-f{args.files}-{args.min_lines}-{args.max_lines}-s{args.seed}"
    folder = OUT / f"logs-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for k, (name, lines, ranks, gz) in enumerate(plan(args.files, args.min_lines, args.max_lines,
                                                       args.seed)):
        path = folder / name
        if not path.exists():
            tmp = path.with_name(path.name + ".tmp")
            gen.generate(str(tmp), lines, args.seed + k, ranks, gz)
            tmp.rename(path)
        total += _count_lines(path)
    return folder, args.files, total


def _count_lines(path: Path) -> int:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    n = 0
    with opener(path, "rb") as f:
        while block := f.read(1 << 20):
            n += block.count(b"\n")
    return n


# --------------------------------------------------------------------------- measuring


class Sampler(threading.Thread):
    """Peak RSS per process of a tree, sampled (psutil ships with distributed)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak: dict[int, int] = {}
        self.workers: set[int] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self.stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    if p.pid != self.pid and p.pid not in self.workers:
                        # Dask's worker processes are multiprocessing spawns; skip its
                        # resource tracker.
                        cmd = " ".join(p.cmdline())
                        if "spawn_main" in cmd:
                            self.workers.add(p.pid)
                except psutil.Error:
                    continue
                self.peak[p.pid] = max(self.peak.get(p.pid, 0), rss)
            self.stop.wait(SAMPLE_S)


def measure(command: str, mode: str, logs: Path, work: Path) -> Run:
    out = work / f"{command}-{mode.replace(':', '').replace('/', '')}"
    run = Run(command, mode)
    for old in (out, Path(str(out) + ".json")):
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()
    cmd = [PY, "-m", "logparse", command, str(logs)]
    if command == "check":
        cmd += ["--format", "json", "-o", str(out) + ".json", "--fail-on", "never"]
    else:
        cmd += ["-o", str(out), "--format", "parquet"]
    cmd += ["--jobs", mode[4:]] if mode.startswith("jobs") else ["--dask", mode]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = Sampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    run.wall_s = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # One child at a time: the delta is this run's tree (the CLI waits for its worker processes).
    run.cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sampler.stop.set()
    sampler.join()
    run.exit_code = proc.returncode
    if proc.returncode not in (0, 1):
        run.error = err.decode(errors="replace").strip().splitlines()[-1:][0] if err else "failed"
        return run
    mib = 1 << 20
    run.main_peak_mib = sampler.peak.get(proc.pid, 0) / mib
    run.worker_peak_mib = sorted((sampler.peak[p] / mib for p in sampler.workers), reverse=True)
    run.digest = _digest(Path(str(out) + ".json") if command == "check" else out)
    return run


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for p in files:
        if path.is_dir():  # a file's own name differs per run; the names inside a folder do not
            h.update(str(p.relative_to(path)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------- report


def render(runs: list[Run], files: int, lines: int) -> str:
    out = [f"{files} files, {lines:,} lines; {os.cpu_count()} CPUs\n",
           ("| command | mode | wall s | CPU s | files/s | lines/s | peak RSS logdiag MiB | "
            "peak RSS per worker MiB | same bytes as --jobs 1 |"),
           "|---|---|---:|---:|---:|---:|---:|---|---|"]
    reference = {r.command: r.digest for r in runs if r.mode == "jobs1"}
    for r in runs:
        if r.error:
            out.append(f"| {r.command} | {r.mode} | failed: {r.error} | | | | | | |")
            continue
        workers = ", ".join(f"{m:.0f}" for m in r.worker_peak_mib) or "–"
        same = "yes" if reference.get(r.command) == r.digest else "NO"
        out.append(f"| {r.command} | `{r.mode}` | {r.wall_s:.1f} | {r.cpu_s:.1f} | "
                   f"{files / r.wall_s:.1f} | "
                   f"{lines / r.wall_s:,.0f} | {r.main_peak_mib:.0f} | {workers} | {same} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fleet",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--min-lines", type=int, default=1000)
    ap.add_argument("--max-lines", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--modes", default="jobs1,local:1,local:2")
    ap.add_argument("--commands", default="check,export")
    ap.add_argument("--dask", metavar="ADDRESS", help="also run against this running scheduler")
    args = ap.parse_args(argv)
    logs, files, lines = ensure_logs(args)
    print(f"logs: {logs} ({files} files, {lines:,} lines)", file=sys.stderr)
    modes = args.modes.split(",") + ([args.dask] if args.dask else [])
    work = OUT / "runs"
    work.mkdir(parents=True, exist_ok=True)
    runs = []
    for command in args.commands.split(","):
        for mode in modes:
            r = measure(command, mode, logs, work)
            print(f"{command} {mode}: {r.wall_s:.1f} s {r.error}", file=sys.stderr)
            runs.append(r)
    (OUT / "results.json").write_text(json.dumps([r.__dict__ for r in runs], indent=2) + "\n")
    sys.stdout.write(render(runs, files, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
