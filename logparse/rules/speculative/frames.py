"""Speculative-decoding source files as traceback frames name them (plain name comparisons): the
draft workers and their graph runners, and any file of the speculative package."""

from __future__ import annotations

# The draft side of speculative decoding across releases (0.4.x–0.5.23): EAGLE v1/v2 workers,
# standalone / n-gram / MTP / DFLASH workers, multi-layer EAGLE, the draft CUDA-graph runners.
DRAFT_WORKER_FILES = frozenset({
    "eagle_worker.py", "eagle_worker_v2.py", "standalone_worker.py", "standalone_worker_v2.py", "ngram_worker.py",
    "eagle_draft_cuda_graph_runner.py", "eagle_draft_extend_cuda_graph_runner.py",
})
DRAFT_WORKER_PREFIXES = ("multi_layer_eagle", "draft_", "dflash", "mtp_worker")
# Parts of a file name that place a frame in speculative decoding (draft models, EAGLE heads, spec utils).
SPECULATIVE_NAME_PARTS = ("eagle", "draft", "spec_utils", "speculative")
# Scheduler functions that run batches: a traceback through them happened while serving.
RUNTIME_FUNCS = frozenset({"forward_batch_generation", "event_loop_normal", "event_loop_overlap", "run_batch"})
# Spec-v2 draft/verify steps, innermost first in a finding's message.
V2_STEP_FUNCS = ("_draft_extend_for_decode", "forward_batch_generation", "draft", "verify")


def is_draft_worker_file(name: str) -> bool:
    """Whether a frame's file name is one of the draft workers or draft graph runners."""
    if name in DRAFT_WORKER_FILES:
        return True
    return name.endswith(".py") and name.startswith(DRAFT_WORKER_PREFIXES)


def is_speculative_file(name: str) -> bool:
    """Whether a frame's file name belongs to speculative decoding (draft models included)."""
    low = name.lower()
    return any(part in low for part in SPECULATIVE_NAME_PARTS)
