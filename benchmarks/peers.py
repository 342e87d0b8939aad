"""Peer tools timed on the same files as the reference (never project dependencies).

    python -m benchmarks.peers FILE... [--venv /tmp/logdiag-peers] [--install] [--repeat N]

A peer is a tool from the package registry that parses SGLang server logs (or any log, line by
line, into structure). It is installed only into a throwaway virtualenv (``--install`` creates
``--venv`` and pip-installs the peers there) and run from that venv's interpreter; the reference
(``benchmarks/reference.py``) runs in the same turns from this checkout, pinned to the same
core, so the ratio is paired. Peers that cannot be installed are listed as skipped with the
reason.

| peer | what is timed |
|---|---|
| drain3 | ``TemplateMiner().add_log_message(line)`` for every line (default config, no persistence): Drain template mining, the usual first step of log analyzers |
| srtlog, sglang-log-analyzer | not in the package registry here (``pip install`` finds no distribution): skipped |
| lnav | only from Debian packages, which the project's CI does not install: skipped |
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks import run

REPO = run.REPO
PY = sys.executable

DRAIN3 = (
    "import sys\n"
    "from drain3 import TemplateMiner\n"
    "tm = TemplateMiner()\n"
    "add = tm.add_log_message\n"
    "n = 0\n"
    "with open(sys.argv[1], encoding='utf-8', errors='replace') as f:\n"
    "    for line in f:\n"
    "        add(line.rstrip('\\n'))\n"
    "        n += 1\n"
    "print(n, len(tm.drain.clusters))\n"
)

PEERS: dict[str, dict[str, Any]] = {
    "drain3": {"pip": "drain3", "script": DRAIN3},
}
SKIPPED: dict[str, str] = {
    "srtlog": "no distribution in the package registry (pip: 'No matching distribution found')",
    "sglang-log-analyzer": "no distribution in the package registry (pip: 'No matching "
                           "distribution found')",
    "lnav": "a Debian package only; the project's CI (.ci/run) does not install it",
}


def install(venv: Path) -> dict[str, str]:
    """Create the throwaway venv and install the peers; returns peer -> error for failures."""
    errors: dict[str, str] = {}
    if not (venv / "bin" / "python").exists():
        subprocess.run([PY, "-m", "venv", str(venv)], check=True)
    for name, spec in PEERS.items():
        p = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec["pip"]],
                           capture_output=True, text=True, check=False)
        if p.returncode:
            errors[name] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "pip failed"
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.peers",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--venv", default="/tmp/logdiag-peers")
    ap.add_argument("--install", action="store_true", help="create the venv, pip-install peers")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--cpu", type=int, default=None, help="core to pin to (default: the first)")
    ap.add_argument("--json", default=None, help="result file (default benchmarks/out/peers.json)")
    a = ap.parse_args(argv)
    venv = Path(a.venv)
    errors = install(venv) if a.install else {}
    vpy = venv / "bin" / "python"
    scratch = REPO / "benchmarks" / "out" / "peers-scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    cpu = {min(os.sched_getaffinity(0)) if a.cpu is None else a.cpu}
    res: dict[str, Any] = {"venv": str(venv), "skipped": dict(SKIPPED), "files": {}}
    for name in PEERS:
        if name in errors:
            res["skipped"][name] = f"install failed: {errors[name]}"
        elif not vpy.exists():
            res["skipped"][name] = f"no venv at {venv} (run with --install)"
    active = [n for n in PEERS if n not in res["skipped"]]
    for f in a.files:
        lines, nbytes = run.count_lines(Path(f))
        cmds = {"reference": [PY, "-m", "benchmarks.reference", f]}
        cmds.update({n: [str(vpy), "-c", PEERS[n]["script"], f] for n in active})
        walls: dict[str, list[float]] = {k: [] for k in cmds}
        rss: dict[str, float] = dict.fromkeys(cmds, 0.0)
        fail: dict[str, str] = {}
        for _ in range(a.repeat):
            for k, cmd in cmds.items():  # in turns, same core
                m = run.measure(cmd, cpus=cpu, stdout_path=scratch / f"{k}.out",
                                stderr_path=scratch / f"{k}.err", timeout=a.timeout)
                if m["rc"] != 0 or m["timed_out"]:
                    fail[k] = f"rc={m['rc']} {m['stderr_tail'][-300:]}"
                    continue
                walls[k].append(m["wall_s"])
                rss[k] = max(rss[k], m["peak_rss_mib"])
        ref = statistics.median(walls["reference"]) if walls["reference"] else None
        res["files"][f] = {"lines": lines, "bytes": nbytes, "loadavg": os.getloadavg(),
                           "tools": {k: {"wall_s": statistics.median(v) if v else None,
                                         "peak_rss_mib": rss[k] if v else None,
                                         "error": fail.get(k)} for k, v in walls.items()},
                           "reference_s": ref}
    L = ["| file | lines | tool | wall s | × reference | peak RSS MiB |", "|---|---:|---|---:|---:|---:|"]
    for f, r in res["files"].items():
        ref = r["reference_s"]
        for k, t in r["tools"].items():
            w, mib = t["wall_s"], t["peak_rss_mib"]
            ratio = f"{w / ref:.2f}" if w and ref else "—"
            wall = "—" if w is None else f"{w:.2f}"
            peak = "—" if mib is None else f"{mib:.0f}"
            L.append(f"| {Path(f).name} | {r['lines']:,} | {k} | {wall} | {ratio} | {peak} |")
    L.append("")
    L.extend(f"- skipped: {k}: {why}" for k, why in res["skipped"].items())
    print("\n".join(L))
    dest = Path(a.json) if a.json else REPO / "benchmarks" / "out" / "peers.json"
    dest.write_text(json.dumps(res, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
