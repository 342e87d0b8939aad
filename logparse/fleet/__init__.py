"""Fleet scale: one per-file function over many files, in this process, a process pool or a Dask
cluster, with the results always in input order (so every output is rendered locally, the same
bytes whichever backend ran the files).

`distributed` is imported only by `logparse.fleet.cluster`, and only when `--dask` is given."""

from logparse.fleet.executor import map_files, require_dask
from logparse.fleet.target import DaskTarget, TargetError, parse_target
from logparse.fleet.task import CRASH_ONCE_ENV, FileFailure, FilesFailed

__all__ = [
    "CRASH_ONCE_ENV",
    "DaskTarget",
    "FileFailure",
    "FilesFailed",
    "TargetError",
    "map_files",
    "parse_target",
    "require_dask",
]
