"""What `--dask` names: a cluster started for the call (`local`, `local:N`) or a running scheduler."""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_LOCAL_WORKERS = 2
MAX_LOCAL_WORKERS = 64
# Schemes a Dask scheduler listens on; `host:port` alone means tcp, as `dask worker` reads it.
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")
_HOST_PORT = re.compile(r"^\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}$")


class TargetError(ValueError):
    """A `--dask` value that names no cluster; its str() is one line for the user."""


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
