"""Latency of `logdiag follow`: from the ready line being written to follow's exit (median of N).

For each run: the start-up part of a real 8-rank log (fixtures/logs/nextn-hybrid-launch.log, up to
the line before the ready marker) is written to a fresh file, `python -m logparse follow` is
started on it and given time to import and catch up (until it has printed its first phase events
and gone quiet), then the ready line is appended and the time until the follow process has
exited (as its parent sees it: process teardown included) is measured.

    python -m benchmarks.follow_latency                # 5 runs at the default --poll 0.25
    python -m benchmarks.follow_latency --poll 0.05 --runs 9
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "fixtures" / "logs" / "nextn-hybrid-launch.log"
READY_LINE = 541


def one_run(poll: float, settle_s: float) -> float:
    """Seconds from writing the ready line to the follow process's exit."""
    lines = LOG.open("rb").readlines()
    with tempfile.TemporaryDirectory(prefix="follow-latency-") as tmp:
        path = Path(tmp) / "server.log"
        path.write_bytes(b"".join(lines[: READY_LINE - 1]))
        cmd = [
            sys.executable,
            "-m",
            "logparse",
            "follow",
            str(path),
            "--format",
            "json",
            "--poll",
            str(poll),
            "--timeout",
            "60",
        ]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None
        proc.stdout.readline()  # the first phase event: imported, reading
        time.sleep(settle_s)  # let it finish the catch-up and wait for new lines
        with path.open("ab", buffering=0) as f:
            written = time.monotonic()
            f.write(lines[READY_LINE - 1])
        proc.stdout.read()
        code = proc.wait(timeout=60)
        ended = time.monotonic()
        if code != 0:
            raise SystemExit(f"follow exited {code}, expected 0")
        return ended - written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--poll", type=float, default=0.25)
    ap.add_argument(
        "--settle", type=float, default=2.0, help="seconds between catch-up and the ready line"
    )
    args = ap.parse_args(argv)
    times = [one_run(args.poll, args.settle) for _ in range(args.runs)]
    print(
        f"follow latency, ready line written → exit (--poll {args.poll}, {args.runs} runs): "
        f"median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
