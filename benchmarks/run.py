"""Benchmark runner: logdiag vs. the plain-``re`` reference on a generated SGLang log.

    python -m benchmarks.run [--lines 1000000] [--keep] [--out benchmarks/out] [--repeat N]

Steps (each measurement is a fresh child process, started with ``subprocess.Popen`` and reaped
with ``os.wait4`` so that wall time, CPU time and peak RSS are those of that child alone):

  a. reference          python -m benchmarks.reference FILE                              (1 core)
  b. logdiag, 1 core    python -m logparse analyze FILE --format json --jobs 1 >/dev/null (1 core)
  c. logdiag, 2 procs   python -m logparse analyze FILE --format json --jobs 2 >/dev/null (2 cores)
  d. start-up           python -m logparse analyze SMALL --format json  vs  python -c "import lark"
                        on a 1,000-line log, median of 5 runs each                      (1 core)

"1 core" is enforced with ``os.sched_setaffinity`` in the child's ``preexec_fn`` (``taskset``
semantics); the runner itself moves to another core when there is one. Prints a Markdown table,
writes ``OUT/results.json`` and exits 0 even when targets are missed (it lists them).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks import generate as gen

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
PAGE = os.sysconf("SC_PAGE_SIZE")

TARGETS = {
    # name: (description, comparison, goal)
    # issue 10's goals (benchmarks/scaling.py checks the same ones on every profile)
    "wall_ratio_b_over_a": ("logdiag 1-core wall / reference wall", "<=", 1.5),
    "speedup_b_over_c": ("logdiag --jobs 1 wall / --jobs 2 wall", ">=", 1.7),
    "peak_rss_b_mib": ("logdiag 1-core peak RSS (MiB)", "<=", 300.0),
    "startup_ratio": ("logdiag start-up / `import lark` start-up", "<=", 2.0),
}


# -- process measurement ---------------------------------------------------------------------

def _ppid_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split(None, 2)[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def _descendants(root: int) -> list[int]:
    kids = _ppid_map()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def _rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


class _Sampler(threading.Thread):
    """Peak of the summed RSS of a process tree, sampled from /proc.

    Reading every /proc/*/stat to find the tree is the expensive part, so the process list is
    refreshed only every `rescan` samples; the RSS of the known processes is read every time.
    """

    def __init__(self, pid: int, interval: float = 0.1, rescan: int = 10) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.rescan = pid, interval, rescan
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        pids = [self.pid]
        i = 0
        while not self.stop.wait(self.interval):
            with contextlib.suppress(OSError, ValueError):  # best effort
                if i % self.rescan == 0:
                    pids = _descendants(self.pid)
                self.peak = max(self.peak, _rss_bytes(pids))
            i += 1


def measure(cmd: list[str], *, cpus: set[int] | None, stdout_path: Path | None,
            stderr_path: Path, timeout: float | None = None, sample: bool = False,
            cwd: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `cmd` once as a fresh child; wall/CPU/peak RSS of that child via os.wait4.

    `cwd` (default: the repository) and `env` (default: inherited) let the scaling benchmark
    time another checkout of logdiag (the tree before a change) with its own cache."""

    def preexec() -> None:
        if cpus:
            os.sched_setaffinity(0, cpus)

    floor = self_rss_mib()
    with contextlib.ExitStack() as files:
        out = files.enter_context(open(stdout_path, "wb")) if stdout_path else subprocess.DEVNULL
        err = files.enter_context(open(stderr_path, "wb"))
        t0 = time.perf_counter()
        # preexec_fn only calls sched_setaffinity; no runner threads are alive at this point
        # (the sampler and timer of earlier runs have been joined/cancelled).
        p = subprocess.Popen(
            cmd, cwd=cwd or REPO, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            preexec_fn=preexec, start_new_session=True,  # noqa: PLW1509
        )
        sampler = _Sampler(p.pid) if sample else None
        if sampler:
            sampler.start()
        timer = None
        timed_out = threading.Event()
        if timeout:
            def kill() -> None:
                timed_out.set()
                try:
                    os.killpg(p.pid, signal.SIGKILL)  # the child's own session/group
                except ProcessLookupError:
                    pass
            timer = threading.Timer(timeout, kill)
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if timer:
            timer.cancel()
        if sampler:
            sampler.stop.set()
            sampler.join()
    stderr = stderr_path.read_text(errors="replace")
    return {
        "cmd": cmd,
        "cpus": sorted(cpus) if cpus else None,
        "rc": p.returncode,
        "timed_out": timed_out.is_set(),
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        # Linux: max RSS of the child or of any descendant it waited for (max, not sum), KiB.
        # It includes what the child inherited at fork before exec, i.e. the runner's RSS:
        # `runner_rss_mib` is therefore a floor under every peak reported here.
        "peak_rss_mib": ru.ru_maxrss / 1024,
        "runner_rss_mib": floor,
        "tree_rss_peak_mib_sampled": (sampler.peak / 2**20) if sampler else None,
        "stderr_tail": stderr[-4000:],
    }


def _failed(m: dict[str, Any]) -> str | None:
    """Why a logdiag run counts as failed (None if it succeeded)."""
    err = m["stderr_tail"]
    if m["timed_out"]:
        return "timed out"
    if m["rc"] not in (0, 1):  # 1 = findings at or above --fail-on (a valid analysis) ...
        return f"exit code {m['rc']}"
    if m["rc"] == 1:  # ... or an uncaught Python exception / missing module (also exit 1)
        for marker in ("Traceback (most recent call last)", "No module named",
                       "Error while finding module specification"):
            if marker in err:
                return f"exit code 1: {marker}"
    return None


def repeat(n: int, cmd: list[str], **kw: Any) -> dict[str, Any]:
    runs = [measure(cmd, **kw) for _ in range(n)]
    best = dict(runs[0])
    best["runs"] = len(runs)
    best["wall_s_all"] = [round(r["wall_s"], 3) for r in runs]
    best["wall_s"] = statistics.median(r["wall_s"] for r in runs)
    best["user_s"] = statistics.median(r["user_s"] for r in runs)
    best["sys_s"] = statistics.median(r["sys_s"] for r in runs)
    best["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    sampled = [r["tree_rss_peak_mib_sampled"] for r in runs if r["tree_rss_peak_mib_sampled"]]
    best["tree_rss_peak_mib_sampled"] = max(sampled) if sampled else None
    bad = [r for r in runs if r["rc"] != runs[0]["rc"]]
    if bad:
        best["rc"] = bad[0]["rc"]
        best["stderr_tail"] = bad[0]["stderr_tail"]
    return best


# -- inputs ----------------------------------------------------------------------------------

def log_path(out: Path, lines: int, seed: int, ranks: int) -> Path:
    return out / f"sglang-{lines}l-s{seed}-r{ranks}-g{gen.GENERATOR_VERSION}.log"


def ensure_log(out: Path, lines: int, seed: int, ranks: int) -> tuple[Path, bool, float | None]:
    """Generate (or reuse) the log; returns (path, created_now, generation seconds).

    Generation runs in a child process: the runner must stay small, because every child's
    ru_maxrss starts from the runner's RSS at fork time (see `measure`).
    """
    path = log_path(out, lines, seed, ranks)
    if path.exists():
        return path, False, None
    tmp = path.with_suffix(".log.tmp")
    t0 = time.perf_counter()
    subprocess.run([PY, "-m", "benchmarks.generate", str(tmp), "--lines", str(lines),
                    "--seed", str(seed), "--ranks", str(ranks), "-q"], cwd=REPO, check=True)
    secs = time.perf_counter() - t0
    os.replace(tmp, path)
    return path, True, secs


def count_lines(path: Path) -> tuple[int, int]:
    """(number of '\\n'-terminated lines, bytes); also warms the page cache."""
    n = size = 0
    buf = bytearray(1 << 20)  # fixed buffer: keep the runner's RSS flat
    with open(path, "rb", buffering=0) as fh:
        while k := fh.readinto(buf):
            n += buf.count(b"\n", 0, k)
            size += k
    return n, size


def self_rss_mib() -> float:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


def versions() -> dict[str, str | None]:
    v: dict[str, str | None] = {"python": platform.python_version()}
    for dist in ("lark", "pandas", "regex", "click"):
        try:
            v[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            v[dist] = None
    try:
        m = re.search(r"""__version__\s*=\s*['"]([^'"]+)['"]""",
                      (REPO / "logparse" / "_version.py").read_text())
        v["logdiag"] = m.group(1) if m else None
    except OSError:
        v["logdiag"] = None
    return v


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


# -- main ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000, help="lines of the big log")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--out", default="benchmarks/out", help="output dir (log cache, results.json)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated logs (they are reused by later runs with the same args)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per measurement a-c (median wall)")
    ap.add_argument("--startup-runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=1800.0, help="per child process, seconds")
    ap.add_argument("--logdiag-cmd", default=None,
                    help="command prefix for logdiag (default: '<this python> -m logparse'), "
                         "e.g. 'logdiag' to time an installed entry point")
    a = ap.parse_args(argv)

    out = Path(a.out)
    if not out.is_absolute():
        out = REPO / out
    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)

    allowed = sorted(os.sched_getaffinity(0))
    one = {allowed[0]}
    two = set(allowed[:2])
    if len(allowed) >= 2:
        os.sched_setaffinity(0, {allowed[-1]})  # keep the runner off the measured core
    else:
        print("warning: only one CPU available; the --jobs 2 run cannot use two cores",
              file=sys.stderr)

    created: list[Path] = []

    def say(*x: object) -> None:
        print(*x, file=sys.stderr, flush=True)

    big, new, gen_s = ensure_log(out, a.lines, a.seed, a.ranks)
    if new:
        created.append(big)
        say(f"generated {big.name} in {gen_s:.2f} s")
    else:
        say(f"reusing {big.name}")
    small, new_small, _ = ensure_log(out, 1000, a.seed, a.ranks)
    if new_small:
        created.append(small)
    n_lines, n_bytes = count_lines(big)

    results: dict[str, Any] = {
        "machine": {"cpu": cpu_model(), "cpus_allowed": len(allowed), "kernel": platform.release(),
                    "one_core": sorted(one), "two_cores": sorted(two)},
        "versions": versions(),
        "log": {"path": str(big), "lines": n_lines, "bytes": n_bytes, "seed": a.seed,
                "ranks": a.ranks, "generator_version": gen.GENERATOR_VERSION,
                "generation_s": round(gen_s, 3) if gen_s is not None else None},
        "loadavg_before": Path("/proc/loadavg").read_text().split()[:3],
        "runs": {}, "startup": {}, "ratios": {}, "targets": {}, "missed": [], "errors": [],
        "warnings": [],
    }

    def per_s(m: dict[str, Any]) -> None:
        m["lines_per_s"] = n_lines / m["wall_s"] if m["wall_s"] else None
        m["mb_per_s"] = n_bytes / 1e6 / m["wall_s"] if m["wall_s"] else None
        # CPU time / wall time: for a 1-core run well below 1.0 means the core was shared
        # (other processes, hypervisor steal) or the run waited on I/O -> numbers are suspect.
        m["cpu_per_wall"] = (m["user_s"] + m["sys_s"]) / m["wall_s"] if m["wall_s"] else None
        if m.get("cpus") and len(m["cpus"]) == 1 and m["cpu_per_wall"] is not None \
                and m["cpu_per_wall"] < 0.85 and m["rc"] in (0, 1):
            results["warnings"].append(
                f"{' '.join(m['cmd'][1:4])}: CPU/wall = {m['cpu_per_wall']:.2f} on its pinned core; "
                "the core was contended, rerun on a quiet machine")

    # a. reference (1 core)
    say("a. reference (1 core) ...")
    ref = repeat(a.repeat, [PY, "-m", "benchmarks.reference", str(big)], cpus=one,
                 stdout_path=logs / "reference.json", stderr_path=logs / "reference.err",
                 timeout=a.timeout)
    per_s(ref)
    ref["ok"] = ref["rc"] == 0 and not ref["timed_out"]
    if not ref["ok"]:
        results["errors"].append(f"reference failed (rc={ref['rc']}): {ref['stderr_tail'][-800:]}")
    results["runs"]["a_reference"] = ref

    # b, c. logdiag
    ld_cmd = shlex.split(a.logdiag_cmd) if a.logdiag_cmd else [PY, "-m", "logparse"]
    results["logdiag_cmd"] = ld_cmd

    def logdiag(jobs: int, cpus: set[int], tag: str) -> dict[str, Any]:
        cmd = [*ld_cmd, "analyze", str(big), "--format", "json", "--jobs", str(jobs)]
        m = repeat(a.repeat, cmd, cpus=cpus, stdout_path=None,
                   stderr_path=logs / f"{tag}.err", timeout=a.timeout, sample=jobs > 1)
        per_s(m)
        why = _failed(m)
        m["ok"] = why is None
        if why:
            m["error"] = why
            results["errors"].append(f"logdiag --jobs {jobs} failed: {why}\n{m['stderr_tail'][-1500:]}")
        return m

    say("b. logdiag --jobs 1 (1 core) ...")
    b = logdiag(1, one, "logdiag-jobs1")
    results["runs"]["b_logdiag_1core"] = b
    if b["ok"]:
        say("c. logdiag --jobs 2 (2 cores) ...")
        c = logdiag(2, two, "logdiag-jobs2")
    else:
        say("   logdiag failed; skipping c.")
        c = {"ok": False, "skipped": "logdiag --jobs 1 failed", "wall_s": None}
    results["runs"]["c_logdiag_2proc"] = c

    # d. start-up on a 1,000-line log (alternating runs, 1 core)
    say("d. start-up ...")
    cmds = {
        "logdiag": [*ld_cmd, "analyze", str(small), "--format", "json"],
        "import_lark": [PY, "-c", "import lark"],
        "python_bare": [PY, "-c", "pass"],
    }
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, float] = {k: 0.0 for k in cmds}
    startup_err = None
    for _ in range(a.startup_runs):
        for k, cmd in cmds.items():
            if k == "logdiag" and startup_err:
                continue
            m = measure(cmd, cpus=one, stdout_path=None, stderr_path=logs / f"startup-{k}.err",
                        timeout=120)
            if k == "logdiag":
                why = _failed(m)
                if why:
                    startup_err = f"{why}\n{m['stderr_tail'][-1500:]}"
                    continue
            walls[k].append(m["wall_s"])
            rss[k] = max(rss[k], m["peak_rss_mib"])
    for k in cmds:
        results["startup"][k] = {
            "median_s": statistics.median(walls[k]) if walls[k] else None,
            "all_s": [round(x, 4) for x in walls[k]],
            "peak_rss_mib": rss[k] if walls[k] else None,
        }
    if startup_err:
        results["startup"]["logdiag"]["error"] = startup_err
        results["errors"].append(f"logdiag start-up run failed: {startup_err}")

    # ratios and targets
    r = results["ratios"]
    r["wall_ratio_b_over_a"] = b["wall_s"] / ref["wall_s"] if b["ok"] and ref["ok"] else None
    r["speedup_b_over_c"] = b["wall_s"] / c["wall_s"] if b["ok"] and c.get("ok") else None
    r["peak_rss_b_mib"] = b["peak_rss_mib"] if b["ok"] else None
    # informational, not a target: CPU-time (user+sys) ratio, less sensitive to a busy machine
    r["cpu_ratio_b_over_a"] = ((b["user_s"] + b["sys_s"]) / (ref["user_s"] + ref["sys_s"])
                               if b["ok"] and ref["ok"] else None)
    ld, lk = results["startup"]["logdiag"]["median_s"], results["startup"]["import_lark"]["median_s"]
    r["startup_ratio"] = ld / lk if ld and lk else None
    for name, (desc, op, goal) in TARGETS.items():
        v = r[name]
        if v is None:
            status = "n/a"
        else:
            status = "met" if (v <= goal if op == "<=" else v >= goal) else "MISSED"
        results["targets"][name] = {"description": desc, "value": v, "goal": f"{op} {goal}",
                                    "status": status}
        if status != "met":
            results["missed"].append(name)

    with contextlib.suppress(OSError, ValueError):
        results["reference_summary"] = json.loads((logs / "reference.json").read_text())

    # report
    print(render(results, a))
    (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    say(f"wrote {out / 'results.json'}")

    if not a.keep:
        for p in created:
            p.unlink(missing_ok=True)
    return 0


def _f(x: Any, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def render(res: dict[str, Any], a: argparse.Namespace) -> str:
    L: list[str] = []
    lg = res["log"]
    L.append(f"## logdiag benchmark — {lg['lines']:,} lines, {lg['bytes'] / 1e6:.1f} MB "
             f"(seed {lg['seed']}, TP{lg['ranks']})")
    L.append("")
    L.append(f"CPU: {res['machine']['cpu']} ({res['machine']['cpus_allowed']} allowed); "
             f"Python {res['versions']['python']}, lark {res['versions']['lark']}, "
             f"pandas {res['versions']['pandas']}; runs per measurement: {a.repeat}; "
             f"RSS floor (runner RSS at fork, included in every peak): "
             f"{_f(res['runs']['a_reference'].get('runner_rss_mib'), '.0f')} MiB")
    L.append("")
    L.append("| run | cores | wall s | CPU s | lines/s | MB/s | peak RSS MiB "
             "| tree RSS MiB (sampled) | status |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
    names = {"a_reference": "a. reference (plain `re` + pandas)",
             "b_logdiag_1core": "b. logdiag `--jobs 1`",
             "c_logdiag_2proc": "c. logdiag `--jobs 2`"}
    for key, label in names.items():
        m = res["runs"][key]
        cores = len(m.get("cpus") or []) or "—"
        if m.get("skipped"):
            L.append(f"| {label} | — | — | — | — | — | — | — | skipped: {m['skipped']} |")
            continue
        status = "ok" if m["ok"] else f"FAILED ({m.get('error') or 'rc=' + str(m['rc'])})"
        cpu = m["user_s"] + m["sys_s"]
        L.append(f"| {label} | {cores} | {_f(m['wall_s'], '.2f')} | {cpu:.2f} | "
                 f"{_f(m['lines_per_s'], ',.0f')} | {_f(m['mb_per_s'], '.1f')} | "
                 f"{_f(m['peak_rss_mib'], '.0f')} | {_f(m['tree_rss_peak_mib_sampled'], '.0f')} | "
                 f"{status} |")
    L.append("")
    st = res["startup"]
    L.append("Start-up (1,000-line log, median of "
             f"{a.startup_runs}, 1 core): logdiag {_f(st['logdiag']['median_s'], '.3f')} s, "
             f"`import lark` {_f(st['import_lark']['median_s'], '.3f')} s, "
             f"bare `python -c pass` {_f(st['python_bare']['median_s'], '.3f')} s")
    L.append("")
    L.append("| target | value | goal | status |")
    L.append("|---|---:|---|---|")
    for t in res["targets"].values():
        v = t["value"]
        L.append(f"| {t['description']} | {_f(v, '.2f')} | {t['goal']} | {t['status']} |")
    L.append("")
    L.append("Informational: CPU-time ratio b/a (user+sys) = "
             f"{_f(res['ratios'].get('cpu_ratio_b_over_a'), '.2f')}")
    L.append("")
    if res["missed"]:
        L.append("Missed / not measured: " + ", ".join(res["missed"]))
    else:
        L.append("All targets met.")
    for w in res["warnings"]:
        L.append("")
        L.append("WARNING: " + w)
    for e in res["errors"]:
        L.append("")
        L.append("ERROR: " + e.rstrip())
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())
