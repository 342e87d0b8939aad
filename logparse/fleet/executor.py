"""`map_files` / `imap_files`: the entry points; pick the backend, keep every file accounted for."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from logparse.fleet.target import DaskTarget, parse_target
from logparse.fleet.task import FileFailure, FilesFailed

R = TypeVar("R")
Done = Callable[[int], None]  # called with a file's index as each file finishes
STDIN = "-"  # read by this process: no worker (local or remote) can take our stdin over


def map_files(fn: Callable[[str], R], paths: Sequence[str], *, dask: str | DaskTarget | None = None,
              jobs: int = 1, on_done: Done | None = None,
              on_failure: Callable[[FileFailure], R] | None = None) -> list[R]:
    """`[fn(p) for p in paths]`, in input order, on `jobs` local processes or a Dask cluster.

    `fn` must be picklable (a top-level function or a `functools.partial` of one). A bad input
    (`InputError`) stops a local run at once, as a sequential loop would; on Dask every file
    runs and the failures come back together as `FilesFailed`, in input order, never dropped
    (or each becomes `on_failure(failure)` in its slot)."""
    slots: dict[int, R] = {}
    for k, result in imap_files(fn, paths, dask=dask, jobs=jobs, on_failure=on_failure):
        slots[k] = result
        if on_done is not None:
            on_done(k)
    return [slots[k] for k in range(len(paths))]


def imap_files(fn: Callable[[str], R], paths: Sequence[str], *,
               dask: str | DaskTarget | None = None, jobs: int = 1,
               on_failure: Callable[[FileFailure], R] | None = None) -> Iterator[tuple[int, R]]:
    """`(index, fn(path))` as files finish (completion order on a pool or a cluster), so a
    consumer can write results in input order while later files still run."""
    away = [k for k, p in enumerate(paths) if p != STDIN]
    if dask is not None:
        target = parse_target(dask) if isinstance(dask, str) else dask
        yield from _on_dask(fn, paths, away, target, on_failure)
    elif jobs > 1 and len(away) > 1:
        for j, result in _pool_imap(fn, [paths[k] for k in away], jobs):
            yield away[j], result
    else:
        for k in away:
            yield k, fn(paths[k])
    for k, path in enumerate(paths):
        if path == STDIN:
            yield k, fn(path)


def _on_dask(fn: Callable[[str], R], paths: Sequence[str], away: list[int], target: DaskTarget,
             on_failure: Callable[[FileFailure], R] | None) -> Iterator[tuple[int, R]]:
    from logparse.fleet.cluster import dask_imap

    failures: list[tuple[int, FileFailure]] = []
    for j, result in dask_imap(fn, [paths[k] for k in away], target):
        if not isinstance(result, FileFailure):
            yield away[j], result
        elif on_failure is not None:
            yield away[j], on_failure(result)
        else:
            failures.append((away[j], result))
    if failures:
        raise FilesFailed([f for _, f in sorted(failures, key=lambda item: item[0])])


def check_dask(value: str) -> DaskTarget:
    """The `--dask` value as a target, checked before any work: `TargetError` (a bad value) or
    `FleetUnavailable` (no dask extra) are `InputError`s, one line and exit 2."""
    target = parse_target(value)
    require_dask()
    return target


def require_dask() -> None:
    """One line (exit 2) when `--dask` is given without the dask extra; imports `distributed`."""
    from logparse.fleet.cluster import require_dask as require

    require()


def _pool_imap(fn: Callable[[str], R], paths: Sequence[str], jobs: int) -> Iterator[tuple[int, R]]:
    # Imported here: concurrent.futures brings multiprocessing and socket, which a run in one
    # process never needs.
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures = {pool.submit(fn, path): k for k, path in enumerate(paths)}
        try:
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        except BaseException:
            # The first failure (or a consumer that stops) ends the run: drop the queued files.
            pool.shutdown(wait=False, cancel_futures=True)
            raise
