"""The CLI's one command freezes its results before rendering (`cli/startup.freeze_for_exit`).

At 1M lines of the corpus profile the rendering's full collections and the interpreter's final one
walked every event and finding again (~2.5 s). In a fresh process running `analyze` on a long
log (collector on: 8 MiB or more), the analysis is frozen when rendering starts, rendering runs
with the analysis's young threshold, and the threshold is put back when the command ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_CHILD = r"""
import gc, json, sys
from logparse.engine.gcpace import YOUNG_THRESHOLD
import logparse.render.json as rj

seen = {}
original = rj.render if hasattr(rj, "render") else None

def spy(name):
    inner = getattr(rj, name)
    def wrapped(*a, **k):
        seen.setdefault("frozen", gc.get_freeze_count())
        seen.setdefault("threshold", gc.get_threshold()[0])
        return inner(*a, **k)
    setattr(rj, name, wrapped)

for name in ("render", "write"):
    if hasattr(rj, name):
        spy(name)
before = gc.get_threshold()
from logparse.cli.main import main
try:
    main(["analyze", sys.argv[1], "--format", "json", "--jobs", "1"])
except SystemExit:
    pass
seen["after"] = list(gc.get_threshold())
seen["before"] = list(before)
print(json.dumps(seen), file=sys.stderr)
"""


def test_analysis_is_frozen_while_rendering(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    one = b"".join(
        (data if data.endswith(b"\n") else data + b"\n")
        for data in (f.read_bytes() for f in sorted((repo / "fixtures" / "corpus" / "shared-dev").glob("*.log")))
    )
    log = tmp_path / "long.log"
    log.write_bytes(one * (9 * 1024 * 1024 // len(one) + 1))  # above the CLI's 8 MiB short-run line
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(log)], capture_output=True, text=True,
                          env=env, cwd=repo, timeout=600, check=False)
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    # The events and findings of ~60k lines are frozen: far more than start-up's state.
    assert seen["frozen"] > 100_000, seen
    from logparse.engine.gcpace import YOUNG_THRESHOLD

    assert seen["threshold"] == YOUNG_THRESHOLD, seen
    assert seen["after"] == seen["before"], seen  # put back when the command ends
