"""The command line's start-up runs without the cyclic garbage collector.

Start-up allocates some 100,000 objects that live as long as the process (modules, classes,
functions, compiled patterns), and CPython's collector walks the young ones every 700 allocations:
~60 collections that find almost nothing in a short `logdiag analyze`, and the interpreter's final
collection walks them all once more. So the collector is paused while the CLI starts, and switched
back on as soon as the work could make it matter:

- inputs of 8 MiB or more in total, stdin, or a compressed input (its decompressed size is not
  known) switch it on before any line is read: a long run gets the collector as usual, and so do
  the worker processes a parallel run forks (the same 8 MiB line below which work stays in one
  process, cli/options.py);
- a command that does not read its inputs through `cli/options.py` gets it back before it runs
  (`follow` reads for as long as the log grows);
- the command's end gives it back in every case; only a process's first command is paused (a
  test process runs many in-process: from the second on they run as usual).

Switching it back on first freezes (`gc.freeze`) what was allocated while it was off: otherwise
the next allocation would walk all of it at once. A short run leaves little garbage behind
without the collector: a 50,000-line log (~7.5 MiB) ends ~1 MB larger. Only public `gc`
functions are used; when something else turned the collector off, it stays off.
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Sequence

# Below this much input the collector stays off for the whole run (cli/options.py _POOL_MIN_BYTES).
SMALL_INPUT_BYTES = 8 * 1024 * 1024

_paused = False
_commands = 0  # commands run in this process (`command_done`)
_input_bytes = 0  # the inputs announced so far (`compare` resolves its paths one by one)
_threshold_before: tuple[int, ...] | None = None  # what `freeze_for_exit` raised, for `command_done`


def pause_gc() -> None:
    """Switch the collector off, unless it is off already (then `resume_gc` leaves it off)."""
    global _paused, _input_bytes
    if gc.isenabled():
        gc.disable()
        _paused = True
        _input_bytes = 0


def resume_gc() -> None:
    """Switch the collector back on if `pause_gc` switched it off."""
    global _paused
    if _paused:
        _paused = False
        # Everything allocated while paused is start-up state that lives as long as the process:
        # frozen, the first collection after this does not walk it all at once (~15 ms).
        gc.freeze()
        gc.enable()


def command_starts() -> None:
    """A command starts. The first one in a process (the CLI runs one) starts paused; from the
    second on (tests, an embedding program run several in one process) the collector is left on
    and what the first one froze goes back into it, so that no run's garbage is kept for good."""
    global _commands
    _commands += 1
    if _commands == 1:
        pause_gc()
    elif _commands == 2:
        gc.unfreeze()


def command_done() -> None:
    """A command has ended: the collector is back on. A process that ran one command (the CLI)
    keeps what was frozen: the interpreter's final collection skips it (~10 ms less at exit)."""
    global _threshold_before
    resume_gc()
    if _threshold_before is not None:
        from logparse.engine.gcpace import YOUNG_THRESHOLD

        if gc.get_threshold()[0] == YOUNG_THRESHOLD:  # unless someone changed it meanwhile
            gc.set_threshold(*_threshold_before)
        _threshold_before = None


def freeze_for_exit() -> None:
    """The process's only command (the CLI) has its results: what is alive now lives until exit.
    Frozen, the rendering's collections and the interpreter's final one do not walk it, and the
    rendering runs with the analysis's young threshold (`engine/gcpace.py`): at 1M lines of the
    corpus profile two full collections while rendering and one at exit walked ~1.8M event and
    finding objects, ~1,900 young ones ran, ~2.5 s in all (now ~1.3 s). A process that runs more
    commands freezes nothing here (its second command unfreezes the first one's start-up,
    `command_starts`)."""
    if _commands == 1 and gc.isenabled():
        from logparse.engine.gcpace import YOUNG_THRESHOLD

        global _threshold_before
        gc.freeze()
        if gc.get_threshold()[0] < YOUNG_THRESHOLD:
            _threshold_before = gc.get_threshold()
            gc.set_threshold(YOUNG_THRESHOLD, *_threshold_before[1:])


def gc_paused() -> bool:
    return _paused


def inputs_known(files: Sequence[str]) -> None:
    """Inputs are known: keep the collector off only for a short run, i.e. plain files of less
    than SMALL_INPUT_BYTES in total (with the inputs announced before)."""
    if _paused and not _small_plain_files(files):
        resume_gc()


def _small_plain_files(files: Sequence[str]) -> bool:
    global _input_bytes
    from logparse.io.gunzip import GZIP_MAGIC

    for path in files:
        if path == "-":
            return False
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return False  # a FIFO, `<(…)` or a device: reading its magic here would eat its first bytes
            _input_bytes += st.st_size
            with open(path, "rb") as fh:
                if fh.read(len(GZIP_MAGIC)) == GZIP_MAGIC:
                    return False
        except OSError:
            return False  # the reader reports it; nothing is gained by guessing
        if _input_bytes >= SMALL_INPUT_BYTES:
            return False
    return True
