"""Rules of the 'distributed' family (see shared/diagnoses.md): NCCL collective timeouts and errors,
custom all-reduce availability, and failures that a rank reports about its peers. One module per
rule; importing the package registers them."""

from __future__ import annotations

from logparse.rules.distributed import custom_allreduce, nccl_error, nccl_timeout, other_rank  # noqa: F401
from logparse.rules.distributed.custom_allreduce import PCIE_NCCL_HINT

__all__ = ["PCIE_NCCL_HINT"]
