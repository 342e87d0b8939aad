"""Python's resource tracker is a process of its own; its traceback on teardown (`KeyError` on a
shared-memory name another process left behind) is that helper's, not a server process's crash.
A spawned child's traceback (outermost `multiprocessing/process.py … _bootstrap`) still is one."""

from __future__ import annotations

from pathlib import Path

from logparse.engine.core import analyze

# sgl-project/sglang#7227 (dev/o-017), verbatim
PLAIN = """[2025-06-23 15:40:21] Received sigquit from a child process. It usually means the child failed.
/usr/lib/python3.10/multiprocessing/resource_tracker.py:104: UserWarning: resource_tracker: process died unexpectedly, relaunching.  Some resources might leak.
  warnings.warn('resource_tracker: process died unexpectedly, '
Traceback (most recent call last):
  File "/usr/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main
    cache[rtype].remove(name)
KeyError: '/mp-ngeoznov'
"""
# a Ray-wrapped one from a public RL-training report (vLLM's HTTP server actor), verbatim lines
RAY = """(vLLMHttpServer pid=52671) Traceback (most recent call last):
(vLLMHttpServer pid=52671)   File "/home/vm/miniconda3/envs/kernel-rl/lib/python3.10/multiprocessing/resource_tracker.py", line 209, in main
(vLLMHttpServer pid=52671)     cache[rtype].remove(name)
(vLLMHttpServer pid=52671) KeyError: '/psm_790b75f7'
"""
CHILD = """Traceback (most recent call last):
  File "/usr/lib/python3.10/multiprocessing/process.py", line 314, in _bootstrap
    self.run()
  File "/usr/lib/python3.10/multiprocessing/process.py", line 108, in run
    self._target(*self._args, **self._kwargs)
KeyError: 'model.layers.0.mlp.experts.w13_weight'
"""


def _names(tmp_path: Path, text: str) -> set[str]:
    log = tmp_path / "run.log"
    log.write_text(text)
    return {f.name for f in analyze(str(log)).findings}


def test_the_resource_trackers_teardown_is_no_crash(tmp_path: Path) -> None:
    assert "scheduler-crash" not in _names(tmp_path, PLAIN)
    assert "scheduler-crash" not in _names(tmp_path, RAY)


def test_a_spawned_childs_traceback_is_still_a_crash(tmp_path: Path) -> None:
    assert "scheduler-crash" in _names(tmp_path, CHILD)
