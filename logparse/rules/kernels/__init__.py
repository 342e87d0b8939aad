"""Rules of the 'kernels' family (see shared/diagnoses.md): a kernel built for another GPU architecture
(arch), a kernel library that does not match torch / CUDA / the driver (library), and GPU kernel faults
that no more specific rule explains (fault). Importing the package registers them."""

from __future__ import annotations

from logparse.rules.kernels import arch, fault, library  # noqa: F401 — imported for their registrations
