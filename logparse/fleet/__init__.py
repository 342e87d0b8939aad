"""Fleet scale: one per-file function over many files, in this process, a process pool or a Dask
cluster, with the results always in input order (so every output is rendered locally, the same
bytes whichever backend ran the files).

`distributed` is imported only by `logparse.fleet.cluster`, and only when `--dask` is given."""

from logparse.fleet.executor import check_dask, imap_files, map_files, require_dask
from logparse.fleet.target import DASK_HELP, DaskTarget, TargetError, parse_target
from logparse.fleet.task import CRASH_ONCE_ENV, FileFailure, FilesFailed

__all__ = [
    "CRASH_ONCE_ENV",
    "DASK_HELP",
    "DaskTarget",
    "FileFailure",
    "FilesFailed",
    "TargetError",
    "check_dask",
    "imap_files",
    "map_files",
    "parse_target",
    "require_dask",
]
