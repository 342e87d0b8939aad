"""The Dask backend: files as tasks on a running scheduler or on a `LocalCluster` started for the
call (loopback, one process and one thread per worker, no dashboard). Imports `distributed`."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from logparse.fleet.target import DaskTarget
from logparse.fleet.task import FileFailure, TaskContext, run_task
from logparse.io.readreport import InputError

# A task that raises is resubmitted this often (a transient error); a task whose worker *died*
# is rescheduled by the scheduler itself, up to `distributed.scheduler.allowed-failures` times.
RETRIES = 2
ALLOWED_FAILURES = 3
CONNECT_TIMEOUT = "10s"
# A cluster started for the call runs only our tasks: the worker's stack profiler (a sample
# every 10 ms, taking the GIL from the task thread), the GIL monitor and 20 ms event-loop ticks
# cost throughput and buy nothing logdiag shows (measured: a worker's CPU per file -12 %, the
# calling process -25 %). The nannies hand this configuration to the workers they spawn.
LOCAL_CONFIG = {
    "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
}
EXTRA_HINT = "--dask needs the dask extra: pip install 'logdiag[dask]'"


class FleetUnavailable(InputError):
    """`distributed` is not installed, or the scheduler cannot be reached (exit 2, one line)."""


def require_dask() -> None:
    """Raise `FleetUnavailable` (one line, exit 2) when the dask extra is not installed."""
    _distributed()


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise FleetUnavailable(EXTRA_HINT) from None
    return distributed


@contextmanager
def _client(target: DaskTarget) -> Iterator[Any]:
    distributed = _distributed()
    import dask

    # The cluster's own chatter (a worker restarted, a closing comm) is not our output.
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if target.address is not None:
        try:
            client = distributed.Client(target.address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as err:
            raise FleetUnavailable(f"cannot connect to the Dask scheduler {target.address}: "
                                   f"{err}") from None
        with client:
            yield client
        return
    with dask.config.set(LOCAL_CONFIG):
        cluster = distributed.LocalCluster(
            n_workers=target.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            # No dashboard; the scheduler's HTTP endpoint (health, metrics) exists anyway: on a
            # free loopback port, not on 8787 of every interface.
            dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL)
    with cluster, distributed.Client(cluster) as client:
        yield client


def dask_imap(fn: Callable[[str], Any], paths: Sequence[str],
              target: DaskTarget) -> Iterator[tuple[int, Any]]:
    """Every file as one task; `(index, result or FileFailure)` as tasks finish. A result is
    released on the cluster as soon as it is fetched (the caller holds what it keeps)."""
    if not paths:
        return
    distributed = _distributed()
    context = TaskContext.here()
    call = uuid.uuid4().hex[:12]  # unique keys: two calls on one scheduler never share results
    with _client(target) as client:
        futures = [client.submit(run_task, fn, path, context, key=f"logdiag-{call}-{k}",
                                 retries=RETRIES, pure=False)
                   for k, path in enumerate(paths)]
        index = {fut.key: k for k, fut in enumerate(futures)}
        finished = distributed.as_completed(futures)
        del futures  # as_completed holds each future until it is yielded
        for fut in finished:
            k = index[fut.key]
            result = _result(fut, paths[k], distributed)
            fut.release()
            yield k, result


def _result(fut: Any, path: str, distributed: Any) -> Any:
    if fut.status != "error":
        return fut.result()
    err = fut.exception()
    if isinstance(err, distributed.KilledWorker):
        # The file killed every worker that tried it (out of memory?): a failure of that file.
        return FileFailure(path=path, message=f"cannot read {path}: its Dask worker died on "
                                              "every attempt (out of memory?)")
    raise err
