"""What `--dask` names: a cluster started for the call (`local`, `local:N`) or a running scheduler."""

from __future__ import annotations

import re
from dataclasses import dataclass

from logparse.io.readreport import InputError

DEFAULT_LOCAL_WORKERS = 2
MAX_LOCAL_WORKERS = 64
# Schemes a Dask scheduler listens on; `host:port` alone means tcp, as `dask worker` reads it.
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")
_HOST_PORT = re.compile(r"^\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}$")


# The --dask option's help, the same for every command that takes it.
DASK_HELP = ("Run the files on Dask: a scheduler address (tcp://host:8786) or local[:N] (a "
             "cluster of N workers on this machine, default 2). Needs: pip install 'logdiag[dask]'.")


class TargetError(InputError, ValueError):
    """A `--dask` value that names no cluster; its str() is one line for the user (exit 2)."""


@dataclass(frozen=True)
class DaskTarget:
    """`address` is a running scheduler; without one, `workers` local worker processes."""

    address: str | None = None
    workers: int = DEFAULT_LOCAL_WORKERS

    @property
    def local(self) -> bool:
        return self.address is None

    def describe(self) -> str:
        if self.address is None:
            return f"local:{self.workers}"
        return self.address


def parse_target(spec: str) -> DaskTarget:
    """`local`, `local:N`, `tcp://host:port` (or another scheduler scheme), `host:port`."""
    value = spec.strip()
    if value == "local":
        return DaskTarget(workers=DEFAULT_LOCAL_WORKERS)
    if value.startswith("local:"):
        count = value[len("local:"):]
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise TargetError(f"--dask {spec}: local:N takes a worker count from 1 to "
                              f"{MAX_LOCAL_WORKERS}")
        return DaskTarget(workers=int(count))
    if "://" in value:
        scheme, _, rest = value.partition("://")
        if scheme not in SCHEMES or not rest:
            raise TargetError(f"--dask {spec}: not a scheduler address (expected "
                              f"{'|'.join(SCHEMES)}://host:port)")
        return DaskTarget(address=value)
    if _HOST_PORT.match(value):
        return DaskTarget(address=f"tcp://{value}")
    raise TargetError(f"--dask {spec}: expected local, local:N or a scheduler address such as "
                      "tcp://host:8786")
