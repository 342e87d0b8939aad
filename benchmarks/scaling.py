"""Scaling benchmark: every tool on every profile at several sizes, fitted exponents, targets.

    python -m benchmarks.scaling [--profiles serving-heavy,failure-heavy|all]
                                 [--sizes 100000,1000000,4000000] [--tools ...] [--repeat N]
                                 [--quick] [--logdiag-root DIR] [--out benchmarks/out]

For each profile (``benchmarks/profiles.py``) and size, in fresh child processes measured as
``benchmarks/run.py`` does (``os.wait4`` wall/CPU/peak RSS, page cache warmed by counting the
lines first, one-core runs pinned with ``sched_setaffinity``), the tools run in turns, so
the reference and logdiag see the same machine load:

  floor-read     read the file in 1 MiB chunks (the I/O + interpreter floor)        1 core
  floor-lines    a Python text-mode line loop over the file                          1 core
  reference      python -m benchmarks.reference FILE                                 1 core
  analyze-j1     logdiag analyze FILE --format json --jobs 1                         1 core
  analyze-j2     logdiag analyze FILE --format json --jobs 2                         2 cores
  check          logdiag check FILE --format json --jobs 1 --exit-zero               1 core
  report         logdiag report FILE -o OUT/report.html --jobs 1                     1 core

plus the start-up pair (a 1,000-line default log through ``analyze`` against
``python -c "import lark"``, alternating, median). Then, per profile and tool, the exponents
``b`` of ``wall ≈ a·lines^b`` and ``peak RSS ≈ a·lines^b`` (least squares on log-log), and the
targets of issue 10, printed as Markdown (README table) and written to ``OUT/scaling.json``.

``--logdiag-root DIR`` times another checkout (e.g. a ``git worktree`` of the tree before a
change): logdiag then runs with ``cwd=DIR``, ``PYTHONPATH=DIR`` and its own ``XDG_CACHE_HOME``,
and the ``logparse.__file__`` it imports is recorded. The reference and the floors always come
from this checkout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import generate as gen
from benchmarks import run
from benchmarks.profiles import PROFILES

REPO = run.REPO
PY = sys.executable

TOOLS = ("floor-read", "floor-lines", "reference", "analyze-j1", "analyze-j2", "check", "report")
LOGDIAG_TOOLS = frozenset({"analyze-j1", "analyze-j2", "check", "report"})
QUICK_SIZES = (2000, 8000)
FULL_SIZES = (100_000, 1_000_000, 4_000_000)
TARGET_SIZE = 1_000_000

READ_FLOOR = (
    "import sys\n"
    "b = bytearray(1 << 20)\n"
    "with open(sys.argv[1], 'rb', buffering=0) as f:\n"
    "    while f.readinto(b):\n"
    "        pass\n"
)
LINE_FLOOR = (
    "import sys\n"
    "with open(sys.argv[1], encoding='utf-8', errors='replace') as f:\n"
    "    for line in f:\n"
    "        pass\n"
)

# name: (description, comparison, goal); values are computed by `evaluate`
TARGETS: dict[str, tuple[str, str, float]] = {
    "one_core_ratio": ("analyze --jobs 1 wall / reference wall (1M)", "<=", 1.5),
    "two_proc_speedup": ("analyze --jobs 1 wall / --jobs 2 wall (1M)", ">=", 1.7),
    "peak_rss_mib": ("largest analyze peak RSS, MiB (1M and 4M)", "<=", 300.0),
    "wall_exponent": ("analyze --jobs 1 wall-time exponent", "<=", 1.05),
    "check_ratio": ("check wall / analyze --jobs 1 wall (1M)", "<=", 1.3),
    "report_ratio": ("report wall / analyze --jobs 1 wall (1M)", "<=", 1.3),
}
STARTUP_GOAL = 2.0


# -- fitting and targets (pure: the test checks them on synthetic numbers) ------------------

def fit_exponent(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Slope b of the least-squares line through (log x, log y): y ≈ a·x^b. None with fewer
    than two distinct positive x values (or any y <= 0)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True)
           if x and y and x > 0 and y > 0]
    if len(pts) != len(xs) or len({p[0] for p in pts}) < 2:
        return None
    mx = statistics.fmean(p[0] for p in pts)
    my = statistics.fmean(p[1] for p in pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    return sxy / sxx


def _status(value: float | None, op: str, goal: float) -> str:
    if value is None:
        return "n/a"
    return "met" if (value <= goal if op == "<=" else value >= goal) else "MISSED"


def _wall(cell: dict[str, Any] | None) -> float | None:
    return cell["wall_s"] if cell and cell.get("ok") else None


def _cpu(cell: dict[str, Any] | None) -> float | None:
    return cell.get("cpu_s") if cell and cell.get("ok") else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fits(profile_runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per tool: wall and peak-RSS exponents over the sizes where the tool succeeded."""
    out: dict[str, dict[str, float | None]] = {}
    tools = sorted({t for cells in profile_runs.values() for t in cells["tools"]})
    for tool in tools:
        xs: list[float] = []
        walls: list[float] = []
        cpus: list[float] = []
        rss: list[float] = []
        for cells in sorted(profile_runs.values(), key=lambda b: b["lines"]):
            c = cells["tools"].get(tool)
            if c and c.get("ok"):
                xs.append(cells["lines"])
                walls.append(c["wall_s"])
                cpus.append(c.get("cpu_s") or c["wall_s"])
                rss.append(c["peak_rss_mib"])
        # the slope between the two largest sizes too: at 100k start-up still dominates, so a
        # fit over all sizes can hide growth that only shows from 1M to 4M
        out[tool] = {"wall": fit_exponent(xs, walls) if len(xs) >= 2 else None,
                     "rss": fit_exponent(xs, rss) if len(xs) >= 2 else None,
                     "wall_top": fit_exponent(xs[-2:], walls[-2:]) if len(xs) >= 3 else None,
                     # CPU time: steadier than wall when the machine's load changes between sizes
                     "cpu": fit_exponent(xs, cpus) if len(xs) >= 2 else None,
                     "cpu_top": fit_exponent(xs[-2:], cpus[-2:]) if len(xs) >= 3 else None,
                     "points": len(xs)}
    return out


def evaluate(profile_runs: dict[str, dict[str, Any]],
             exps: dict[str, dict[str, float | None]]) -> dict[str, dict[str, Any]]:
    """The targets of one profile. The ratio targets are read at 1M lines (the largest size
    when there is no 1M run, e.g. --quick; `at` says which), the RSS target at every size of
    at least 1M lines (again the largest when there is none)."""
    sizes = sorted(profile_runs, key=int)
    at = str(TARGET_SIZE) if str(TARGET_SIZE) in profile_runs else sizes[-1]
    cells = profile_runs[at]["tools"]
    j1 = _wall(cells.get("analyze-j1"))
    big = [s for s in sizes if int(s) >= TARGET_SIZE] or [sizes[-1]]
    rss_vals = [c["peak_rss_mib"] for s in big
                for k in ("analyze-j1", "analyze-j2")
                if (c := profile_runs[s]["tools"].get(k)) and c.get("ok")]
    values = {
        "one_core_ratio": _ratio(j1, _wall(cells.get("reference"))),
        "two_proc_speedup": _ratio(j1, _wall(cells.get("analyze-j2"))),
        "peak_rss_mib": max(rss_vals) if rss_vals else None,
        "wall_exponent": exps.get("analyze-j1", {}).get("wall"),
        "check_ratio": _ratio(_wall(cells.get("check")), j1),
        "report_ratio": _ratio(_wall(cells.get("report")), j1),
    }
    out: dict[str, dict[str, Any]] = {}
    for name, (desc, op, goal) in TARGETS.items():
        v = values[name]
        out[name] = {"description": desc, "value": v, "goal": f"{op} {goal}",
                     "status": _status(v, op, goal), "at_lines": int(at)}
    out["peak_rss_mib"]["at_lines"] = [int(s) for s in big]
    return out


def cpu_ratios(profile_runs: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """The one-core, check and report ratios of `evaluate` in CPU seconds (user+sys), at the same
    size: steadier than wall time on a VM whose speed drifts between runs. Shown beside the wall
    ratios; the targets are judged on wall time."""
    sizes = sorted(profile_runs, key=int)
    cells = profile_runs[str(TARGET_SIZE) if str(TARGET_SIZE) in profile_runs else sizes[-1]]["tools"]
    j1 = _cpu(cells.get("analyze-j1"))
    return {"one_core_ratio": _ratio(j1, _cpu(cells.get("reference"))),
            "check_ratio": _ratio(_cpu(cells.get("check")), j1),
            "report_ratio": _ratio(_cpu(cells.get("report")), j1)}


# -- running ---------------------------------------------------------------------------------

def log_file(logs: Path, profile: str, lines: int, seed: int) -> Path:
    """Generate (or reuse) the log of `profile` with `lines` lines, in a child process (the
    runner's RSS is inherited by every child's ru_maxrss, so it must stay small)."""
    path = logs / f"{profile}-{lines}l-s{seed}-g{gen.GENERATOR_VERSION}.log"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        subprocess.run([PY, "-m", "benchmarks.generate", str(tmp), "--lines", str(lines),
                        "--profile", profile, "--seed", str(seed), "-q"], cwd=REPO, check=True)
        os.replace(tmp, path)
    return path


def tool_cmd(tool: str, path: Path, ld: list[str], scratch: Path) -> list[str]:
    f = str(path)
    return {
        "floor-read": [PY, "-c", READ_FLOOR, f],
        "floor-lines": [PY, "-c", LINE_FLOOR, f],
        "reference": [PY, "-m", "benchmarks.reference", f],
        "analyze-j1": [*ld, "analyze", f, "--format", "json", "--jobs", "1"],
        "analyze-j2": [*ld, "analyze", f, "--format", "json", "--jobs", "2"],
        "check": [*ld, "check", f, "--format", "json", "--jobs", "1", "--exit-zero"],
        "report": [*ld, "report", f, "-o", str(scratch / "report.html"), "--jobs", "1"],
    }[tool]


class Runner:
    def __init__(self, a: argparse.Namespace, out: Path) -> None:
        self.a = a
        self.out = out
        self.scratch = out / "scaling-scratch"
        self.scratch.mkdir(parents=True, exist_ok=True)
        allowed = sorted(os.sched_getaffinity(0))
        core = allowed[0] if a.cpu is None else a.cpu
        self.one = {core}
        self.two = set(allowed[:2])
        if len(allowed) >= 2:  # the runner stays off the measured core
            os.sched_setaffinity(0, {next(c for c in allowed if c != core)})
        self.ld = shlex.split(a.logdiag_cmd) if a.logdiag_cmd else [PY, "-m", "logparse"]
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode caches are part of a normal run
        self.env = base
        self.ld_cwd: Path | None = None
        self.ld_env = base
        if a.logdiag_root:
            root = Path(a.logdiag_root).resolve()
            self.ld_cwd = root
            self.ld_env = {**base, "PYTHONPATH": str(root),
                           "XDG_CACHE_HOME": str(self.out / f"xdg-cache-{root.name}")}

    def logparse_file(self) -> str:
        """Which logparse the logdiag runs import (the editable install points at /work/main)."""
        if self.ld[1:3] != ["-m", "logparse"]:
            return "n/a (--logdiag-cmd)"
        p = subprocess.run([self.ld[0], "-c", "import logparse; print(logparse.__file__)"],
                           cwd=self.ld_cwd or REPO, env=self.ld_env, capture_output=True,
                           text=True, check=False)
        return p.stdout.strip() or p.stderr.strip()[-300:]

    def warm(self) -> None:
        """One untimed analyze of a small log: builds the grammar/regex caches of a fresh
        XDG_CACHE_HOME so that no timed run pays for it."""
        small = log_file(self.out / "logs", "default", 1000, self.a.seed)
        subprocess.run([*self.ld, "analyze", str(small), "--format", "json"],
                       cwd=self.ld_cwd or REPO, env=self.ld_env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)

    def one_run(self, tool: str, path: Path) -> dict[str, Any]:
        cmd = tool_cmd(tool, path, self.ld, self.scratch)
        is_ld = tool in LOGDIAG_TOOLS
        m = run.measure(cmd, cpus=self.two if tool == "analyze-j2" else self.one,
                        stdout_path=None, stderr_path=self.scratch / f"{tool}.err",
                        timeout=self.a.timeout, sample=tool == "analyze-j2",
                        cwd=self.ld_cwd if is_ld else REPO,
                        env=self.ld_env if is_ld else self.env)
        why = run._failed(m) if is_ld else (None if m["rc"] == 0 and not m["timed_out"]
                                            else f"exit code {m['rc']}")
        m["ok"] = why is None
        if why:
            m["error"] = why
        m["cpu_per_wall"] = (m["user_s"] + m["sys_s"]) / m["wall_s"] if m["wall_s"] else None
        return m

    def cell(self, tool: str, runs: list[dict[str, Any]], lines: int) -> dict[str, Any]:
        ok = [r for r in runs if r["ok"]]
        if not ok:
            bad = runs[0]
            return {"ok": False, "error": bad.get("error"), "stderr_tail": bad["stderr_tail"][-1500:]}
        wall = statistics.median(r["wall_s"] for r in ok)
        return {
            "ok": True, "runs": len(ok),
            "wall_s": wall, "wall_s_all": [round(r["wall_s"], 3) for r in ok],
            "cpu_s": statistics.median(r["user_s"] + r["sys_s"] for r in ok),
            "cpu_per_wall": statistics.median(r["cpu_per_wall"] or 0 for r in ok),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in ok),
            "tree_rss_mib": max((r["tree_rss_peak_mib_sampled"] or 0) for r in ok) or None,
            "lines_per_s": lines / wall if wall else None,
        }

    def size_block(self, profile: str, size: int, tools: list[str], say: Any) -> dict[str, Any]:
        path = log_file(self.out / "logs", profile, size, self.a.seed)
        lines, nbytes = run.count_lines(path)
        load0 = os.getloadavg()
        per: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
        for rnd in range(self.a.repeat):
            for tool in tools:  # in turns: every tool sees the same stretch of machine load
                if rnd and per[tool] and not per[tool][-1]["ok"]:
                    continue  # it failed once: do not spend the time again
                say(f"  {profile} {size:,} {tool} (round {rnd + 1}) ...")
                per[tool].append(self.one_run(tool, path))
        block = {"path": str(path), "lines": lines, "bytes": nbytes,
                 "loadavg": {"before": [round(x, 2) for x in load0],
                             "after": [round(x, 2) for x in os.getloadavg()]},
                 "tools": {t: self.cell(t, per[t], lines) for t in tools}}
        if not self.a.keep and size > 1_000_000:
            path.unlink(missing_ok=True)  # 4M logs are ~0.5 GB each
        return block

    def startup(self, runs: int) -> dict[str, Any]:
        small = log_file(self.out / "logs", "default", 1000, self.a.seed)
        run.count_lines(small)
        cmds = {"logdiag": [*self.ld, "analyze", str(small), "--format", "json"],
                "import_lark": [PY, "-c", "import lark"]}
        walls: dict[str, list[float]] = {k: [] for k in cmds}
        err = None
        for _ in range(runs):
            for k, cmd in cmds.items():  # paired and alternating
                is_ld = k == "logdiag"
                m = run.measure(cmd, cpus=self.one, stdout_path=None,
                                stderr_path=self.scratch / f"startup-{k}.err", timeout=120,
                                cwd=self.ld_cwd if is_ld else REPO,
                                env=self.ld_env if is_ld else self.env)
                why = run._failed(m) if is_ld else None
                if why:
                    err = why
                    continue
                walls[k].append(m["wall_s"])
        med = {k: statistics.median(v) if v else None for k, v in walls.items()}
        ratio = _ratio(med["logdiag"], med["import_lark"])
        return {"median_s": med, "all_s": {k: [round(x, 4) for x in v] for k, v in walls.items()},
                "ratio": ratio, "goal": f"<= {STARTUP_GOAL}",
                "status": _status(ratio, "<=", STARTUP_GOAL), "error": err}


# -- report ----------------------------------------------------------------------------------

def _f(x: Any, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


def render(res: dict[str, Any]) -> str:
    L: list[str] = []
    m = res["machine"]
    L.append(f"## Scaling — {m['cpu']} ({m['cpus_allowed']} CPUs allowed), Python "
             f"{res['versions']['python']}, logdiag at {res['logdiag']['commit']} "
             f"({res['logdiag']['logparse_file']}); runs per cell: {res['repeat']} (median)")
    L.append("")
    L.append("| profile | lines | MB | read / line-loop floor s | reference s | analyze 1 core s "
             "(× ref) | analyze 2 procs s (speed-up) | check s (× analyze) | report s (× analyze) "
             "| peak RSS MiB 1 core / 2 procs | load |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for prof, sizes in res["profiles"].items():
        for size in sorted(sizes["runs"], key=int):
            b = sizes["runs"][size]
            t = b["tools"]

            def w(k: str, t: dict[str, Any] = t) -> float | None:
                return _wall(t.get(k))

            def cellw(k: str, base: float | None = None, inv: bool = False,
                      t: dict[str, Any] = t) -> str:
                c = t.get(k)
                if c is None:
                    return "—"
                if not c.get("ok"):
                    return f"FAILED ({c.get('error')})"
                s = _f(c["wall_s"])
                if base is not None:
                    r = _ratio(base, c["wall_s"]) if inv else _ratio(c["wall_s"], base)
                    s += f" ({_f(r)}×)"
                return s

            j1 = w("analyze-j1")
            rss = "/".join(_f(t[k]["peak_rss_mib"], ".0f") if t.get(k, {}).get("ok") else "—"
                           for k in ("analyze-j1", "analyze-j2"))
            L.append(
                f"| {prof} | {b['lines']:,} | {b['bytes'] / 1e6:.1f} | "
                f"{_f(w('floor-read'))} / {_f(w('floor-lines'))} | {cellw('reference')} | "
                f"{cellw('analyze-j1', w('reference'))} | {cellw('analyze-j2', j1, inv=True)} | "
                f"{cellw('check', j1)} | {cellw('report', j1)} | {rss} | "
                f"{b['loadavg']['before'][0]:.1f} |")
    L.append("")
    L.append("Fitted exponents b (wall ≈ a·lines^b; peak RSS ≈ a·lines^b), least squares on "
             "log-log over the sizes above; in brackets the slope between the two largest sizes "
             "(with three or more sizes):")
    L.append("")
    tools = [t for t in TOOLS if not t.startswith("floor")]
    L.append("| profile | " + " | ".join(f"{t} wall" for t in tools)
             + " | reference CPU | analyze-j1 CPU | analyze-j1 RSS |")
    L.append("|---|" + "---:|" * (len(tools) + 3))

    def exp(e: dict[str, Any], key: str = "wall") -> str:
        top = e.get(f"{key}_top")
        return _f(e.get(key)) + (f" ({top:.2f})" if top is not None else "")

    for prof, sizes in res["profiles"].items():
        e = sizes["exponents"]
        L.append(f"| {prof} | " + " | ".join(exp(e.get(t, {})) for t in tools)
                 + f" | {exp(e.get('reference', {}), 'cpu')} | {exp(e.get('analyze-j1', {}), 'cpu')}"
                 f" | {_f(e.get('analyze-j1', {}).get('rss'))} |")
    L.append("")
    L.append("Targets (issue 10), judged on wall time; in brackets the CPU-time ratio:")
    L.append("")
    L.append("| profile | " + " | ".join(f"{TARGETS[k][0]} {TARGETS[k][1]} {TARGETS[k][2]:g}"
                                         for k in TARGETS) + " |")
    L.append("|---|" + "---|" * len(TARGETS))
    for prof, sizes in res["profiles"].items():
        tg = sizes["targets"]
        at = tg["one_core_ratio"]["at_lines"]
        label = prof if at == TARGET_SIZE else f"{prof} (at {at:,} lines)"
        cpu = sizes.get("cpu_ratios") or {}

        def mark(k: str, tg: dict[str, Any] = tg, cpu: dict[str, Any] = cpu) -> str:
            st = tg[k]["status"]
            text = f"{_f(tg[k]['value'])} {'✓' if st == 'met' else ('✗' if st == 'MISSED' else '')}"
            return text + (f" (CPU {_f(cpu[k])})" if cpu.get(k) is not None else "")

        L.append(f"| {label} | " + " | ".join(mark(k) for k in TARGETS) + " |")
    L.append("")
    L.append("CPU time (user+sys) at the largest size, s: " + "; ".join(
        f"{prof} " + ", ".join(
            f"{k} {_f(c['cpu_s'], '.1f')}" for k, c in sizes["runs"][max(sizes["runs"], key=int)]
            ["tools"].items() if c.get("ok") and not k.startswith("floor"))
        for prof, sizes in res["profiles"].items()))
    st = res.get("startup")
    if st:
        L.append("")
        L.append(f"Start-up (1,000-line log, {len(st['all_s']['logdiag'])} alternating runs, "
                 f"median): logdiag {_f(st['median_s']['logdiag'], '.3f')} s, `import lark` "
                 f"{_f(st['median_s']['import_lark'], '.3f')} s → {_f(st['ratio'])}× "
                 f"(goal {st['goal']}: {st['status']})")
    L.append("")
    L.append("Distance from the floor at the largest size (wall / line-loop wall; wall / read "
             "wall):")
    L.append("")
    for prof, sizes in res["profiles"].items():
        size = max(sizes["runs"], key=int)
        t = sizes["runs"][size]["tools"]
        loop, read = _wall(t.get("floor-lines")), _wall(t.get("floor-read"))
        parts = [f"{k} {_f(_ratio(_wall(t.get(k)), loop), '.0f')}× / "
                 f"{_f(_ratio(_wall(t.get(k)), read), '.0f')}×"
                 for k in tools if t.get(k, {}).get("ok")]
        L.append(f"- {prof} ({int(size):,} lines): " + "; ".join(parts))
    contended = [c["cpu_per_wall"] for sizes in res["profiles"].values()
                 for b in sizes["runs"].values() for k, c in b["tools"].items()
                 if c.get("ok") and k != "analyze-j2"]
    low = [x for x in contended if x < 0.85]
    if low:
        L.append("")
        L.append(f"Contention: {len(low)} of {len(contended)} one-core runs got less than 0.85 s "
                 f"of CPU per wall second on their pinned core (lowest {min(low):.2f}); their wall "
                 "times are inflated; the CPU times above are steadier.")
    failed = [w_ for w_ in res["warnings"] if "failed" in w_]
    if failed:
        L.append("")
        L.append("Failures: " + "; ".join(failed))
    return "\n".join(L)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Before/after table of analyze --jobs 1 for the profile/size cells both runs have: wall and
    CPU seconds, the paired ratio to the reference of the same run, peak RSS."""
    head = (f"| profile | lines | before ({before['logdiag']['commit']}) wall s / CPU s / × ref "
            f"(CPU) / RSS MiB | after ({after['logdiag']['commit']}) wall s / CPU s / × ref (CPU) "
            "/ RSS MiB | CPU speed-up |")
    L = [head, "|---|---:|---|---|---:|"]
    for prof, a_ in after["profiles"].items():
        b_ = before["profiles"].get(prof)
        if not b_:
            continue
        for size in sorted(set(a_["runs"]) & set(b_["runs"]), key=int):
            cells = []
            cpus = []
            for res in (b_, a_):
                t = res["runs"][size]["tools"]
                j, r = t.get("analyze-j1"), t.get("reference")
                if not (j and j.get("ok")):
                    cells.append("—")
                    cpus.append(None)
                    continue
                ratio = _ratio(j["cpu_s"], r["cpu_s"]) if r and r.get("ok") else None
                cells.append(f"{j['wall_s']:.1f} / {j['cpu_s']:.1f} / {_f(ratio)} / "
                             f"{j['peak_rss_mib']:.0f}")
                cpus.append(j["cpu_s"])
            lines = a_["runs"][size]["lines"]
            L.append(f"| {prof} | {lines:,} | {cells[0]} | {cells[1]} | "
                     f"{_f(_ratio(cpus[0], cpus[1]))}× |")
    return "\n".join(L)


# -- main ------------------------------------------------------------------------------------

def git_commit(root: Path) -> str:
    p = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True, check=False)
    return p.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scaling",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--profiles", default="serving-heavy,failure-heavy",
                    help=f"comma list or 'all' ({', '.join(PROFILES)})")
    ap.add_argument("--sizes", default=None, help="comma list of line counts "
                    f"(default {','.join(map(str, FULL_SIZES))}; --quick: "
                    f"{','.join(map(str, QUICK_SIZES))})")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list of " + ", ".join(TOOLS))
    ap.add_argument("--repeat", type=int, default=1, help="rounds per size (median wall)")
    ap.add_argument("--startup-runs", type=int, default=None, help="default 9; --quick 2")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small sizes: checks the harness")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cpu", type=int, default=None,
                    help="the core of the one-core runs (default: the first allowed)")
    ap.add_argument("--timeout", type=float, default=2400.0, help="per child process, seconds")
    ap.add_argument("--logdiag-root", default=None,
                    help="time the logdiag of another checkout (cwd, PYTHONPATH, own cache)")
    ap.add_argument("--logdiag-cmd", default=None,
                    help="command prefix for logdiag (default: '<this python> -m logparse')")
    ap.add_argument("--out", default="benchmarks/out")
    ap.add_argument("--json", default=None, help="result file (default OUT/scaling.json)")
    ap.add_argument("--keep", action="store_true", help="keep the >1M-line logs")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--render", metavar="JSON", default=None,
                    help="only print the Markdown of an earlier run's JSON")
    ap.add_argument("--merge", metavar="JSON", action="append", default=[],
                    help="with --render: add the profiles/sizes of more JSON files (fits and "
                         "targets are recomputed over the union)")
    ap.add_argument("--compare", metavar="JSON", action="append", default=[],
                    help="with --render: also print a before/after table against these results "
                         "(the tree before a change; several files are merged)")
    a = ap.parse_args(argv)
    if a.render:
        res = json.loads(Path(a.render).read_text())
        for extra in a.merge:
            more = json.loads(Path(extra).read_text())
            for prof, v in more["profiles"].items():
                res["profiles"].setdefault(prof, {"runs": {}})["runs"].update(v["runs"])
            res["warnings"] += more.get("warnings", [])
            if more.get("startup") and not res.get("startup"):
                res["startup"] = more["startup"]
            if more["logdiag"]["commit"] != res["logdiag"]["commit"]:
                res["logdiag"]["commit"] += f" + {more['logdiag']['commit']}"
        for v in res["profiles"].values():
            v["exponents"] = fits(v["runs"])
            v["targets"] = evaluate(v["runs"], v["exponents"])
            v["cpu_ratios"] = cpu_ratios(v["runs"])
        print(render(res))
        if a.compare:
            before = json.loads(Path(a.compare[0]).read_text())
            for extra in a.compare[1:]:
                more = json.loads(Path(extra).read_text())
                for prof, v in more["profiles"].items():
                    before["profiles"].setdefault(prof, {"runs": {}})["runs"].update(v["runs"])
            print()
            print(compare(before, res))
        return 0

    names = list(PROFILES) if a.profiles == "all" else [p for p in a.profiles.split(",") if p]
    for n in names:
        if n not in PROFILES:
            ap.error(f"unknown profile {n!r}")
    sizes = ([int(s) for s in a.sizes.split(",")] if a.sizes
             else list(QUICK_SIZES if a.quick else FULL_SIZES))
    tools = [t for t in a.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t!r}")
    out = Path(a.out)
    if not out.is_absolute():
        out = REPO / out
    (out / "logs").mkdir(parents=True, exist_ok=True)

    def say(*x: object) -> None:
        if not a.quiet:
            print(*x, file=sys.stderr, flush=True)

    cpus_allowed = len(os.sched_getaffinity(0))
    r = Runner(a, out)
    root = Path(a.logdiag_root).resolve() if a.logdiag_root else REPO
    res: dict[str, Any] = {
        "machine": {"cpu": run.cpu_model(), "cpus_allowed": cpus_allowed,
                    "kernel": os.uname().release},
        "versions": run.versions(),
        "logdiag": {"root": str(root), "commit": git_commit(root), "cmd": r.ld,
                    "logparse_file": r.logparse_file()},
        "reference_commit": git_commit(REPO),
        "repeat": a.repeat, "sizes": sizes, "tools": tools, "quick": a.quick,
        "started_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "profiles": {}, "warnings": [],
    }
    if any(t in LOGDIAG_TOOLS for t in tools):
        r.warm()
    for prof in names:
        runs: dict[str, Any] = {}
        for size in sizes:
            say(f"{prof} {size:,} lines ...")
            runs[str(size)] = r.size_block(prof, size, tools, say)
            for tool, c in runs[str(size)]["tools"].items():
                if c.get("ok") and tool != "analyze-j2" and c["cpu_per_wall"] < 0.85:
                    res["warnings"].append(
                        f"{prof} {size:,} {tool}: CPU/wall {c['cpu_per_wall']:.2f} on its pinned "
                        "core (contended)")
                if not c.get("ok"):
                    res["warnings"].append(f"{prof} {size:,} {tool} failed: {c.get('error')}")
        exps = fits(runs)
        res["profiles"][prof] = {"runs": runs, "exponents": exps, "targets": evaluate(runs, exps),
                                 "cpu_ratios": cpu_ratios(runs)}
    if not a.no_startup and any(t in LOGDIAG_TOOLS for t in tools):
        say("start-up ...")
        res["startup"] = r.startup(a.startup_runs or (2 if a.quick else 9))
    res["finished_utc"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    text = render(res)
    print(text)
    dest = Path(a.json) if a.json else out / "scaling.json"
    dest.write_text(json.dumps(res, indent=2, default=str) + "\n")
    say(f"wrote {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
