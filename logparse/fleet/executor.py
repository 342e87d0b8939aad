"""`map_files`: the one entry point; picks the backend and keeps results in input order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TypeVar

from logparse.fleet.target import DaskTarget, parse_target
from logparse.fleet.task import FileFailure, FilesFailed

R = TypeVar("R")
Done = Callable[[int], None]  # called with a file's index as each file finishes


def map_files(fn: Callable[[str], R], paths: Sequence[str], *, dask: str | DaskTarget | None = None,
              jobs: int = 1, on_done: Done | None = None) -> list[R]:
    """`[fn(p) for p in paths]`, in input order, on `jobs` local processes or a Dask cluster.

    `fn` must be picklable (a top-level function or a `functools.partial` of one). A bad input
    (`InputError`) stops a local run at once, as a sequential loop would; on Dask every file
    runs and the failures come back together as `FilesFailed`, in input order, never dropped."""
    done = on_done or (lambda _k: None)
    if dask is not None:
        from logparse.fleet.cluster import dask_map

        target = parse_target(dask) if isinstance(dask, str) else dask
        results = dask_map(fn, paths, target, done)
        failures = [r for r in results if isinstance(r, FileFailure)]
        if failures:
            raise FilesFailed(failures)
        return results  # type: ignore[return-value]
    if jobs <= 1 or len(paths) <= 1:
        out: list[R] = []
        for k, path in enumerate(paths):
            out.append(fn(path))
            done(k)
        return out
    return _pool_map(fn, paths, jobs, done)


def require_dask() -> None:
    """One line (exit 2) when `--dask` is given without the dask extra; imports `distributed`."""
    from logparse.fleet.cluster import require_dask as require

    require()


def _pool_map(fn: Callable[[str], R], paths: Sequence[str], jobs: int, done: Done) -> list[R]:
    slots: list[R | None] = [None] * len(paths)
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures = {pool.submit(fn, path): k for k, path in enumerate(paths)}
        try:
            for fut in as_completed(futures):
                k = futures[fut]
                slots[k] = fut.result()
                done(k)
        except BaseException:
            # The first failure ends the run: do not wait for the files still queued.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return slots  # type: ignore[return-value]
