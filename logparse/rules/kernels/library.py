"""kernel-library-mismatch: a compiled kernel library that does not load with this torch, CUDA,
driver or OS — including sgl-kernel's multi-line `common_ops` load report — or is another build
than the one this SGLang imports names from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from logparse.model.events import Event, Severity, Traceback
from logparse.model.findings import Finding
from logparse.model.text import mask_numbers, short
from logparse.rules.context import RuleContext
from logparse.rules.errors import Found, find_message
from logparse.rules.frames import echo_after, traceback_after
from logparse.rules.registry import rule

# The messages of a library that does not load, most telling first (a load report's cause is the
# first of these among its detail lines).
LOAD_FAILURES = ("kernel-undefined-symbol", "shared-object-missing", "glibc-version-missing", "cuda-driver-too-old",
                 "cuda-ptx-toolchain", "kernel-common-ops-missing", "kernel-package-version", "kernel-name-missing")
REPORT = "kernel-common-ops-missing"
# sgl-kernel's report (load_utils.py) is ~20 lines: locations, GPU info, advice, one line per attempt.
REPORT_SPAN = 40
# What an ImportError raised with the report as its message ends with: the message starts on the
# next line, so the exception line itself is empty.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "OSError"})
TORCH_NAMESPACES = frozenset({"c10", "at", "torch", "caffe2"})
# Libraries the NVIDIA driver installs (not the CUDA toolkit or a wheel): missing means no visible driver.
DRIVER_LIBRARIES = ("libcuda.so", "libnvidia-ml.so")
# Libraries of the CUDA toolkit and NVIDIA's runtime wheels (cudart, cublas, nvrtc, cudnn, nccl, nvshmem…):
# a missing one means wheels built for another CUDA; any other missing library is the OS image's.
CUDA_LIBRARIES = ("libcu", "libnv", "libnccl", "libcudnn", "libnpp", "libcufft", "libcurand", "libcusparse")


def is_driver_symbol(name: str) -> bool:
    """A CUDA driver API entry point (cuGreenCtxStreamCreate, cuTensorMapEncodeTiled): `cu` + a capital."""
    return len(name) > 2 and name.startswith("cu") and name[2].isupper()


def is_torch_symbol(name: str) -> bool:
    """A mangled C++ symbol in torch's namespaces (`_ZN3c10…`, `_ZNK2at…`, `_ZN5torch…`)."""
    if "c10" in name or "torch" in name:
        return True
    if not name.startswith("_Z"):
        return False
    rest = name[2:]
    while rest[:1] in ("N", "K", "L"):
        rest = rest[1:]
    digits = ""
    while rest[:1].isdigit() and len(digits) < 3:  # an identifier's length: a few digits at most
        digits, rest = digits + rest[0], rest[1:]
    return bool(digits) and rest[: int(digits)] in TORCH_NAMESPACES


def library_of(ctx: RuleContext, texts: list[str]) -> str:
    for text in texts:
        found = ctx.match("kernel-library-name", text)
        if found and found.get("library"):
            lib = str(found["library"]).lower().replace("-", "_")
            return "sgl_kernel" if lib == "common_ops" else lib
    return "the kernel library"


def mismatch_remedy(code: str, fields: dict[str, Any], lib: str) -> tuple[str, dict[str, Any]]:
    """The remedy and data for the most telling load failure (`code` with its catalog fields)."""
    data: dict[str, Any] = {"library": lib}
    symbol = fields.get("symbol")
    if code == "kernel-undefined-symbol" and symbol:
        name = str(symbol)
        data["symbol"] = name
        if is_driver_symbol(name):
            data["cause"] = "driver-api"
            return (f"`{name}` is a CUDA driver API call the installed NVIDIA driver does not provide: the {lib} wheel "
                    "was built for a newer CUDA than this driver supports — upgrade the NVIDIA driver, or install the "
                    f"{lib} build for your CUDA version (`pip install {lib.replace('_', '-')}` matching torch's CUDA, "
                    "see `python -c 'import torch; print(torch.version.cuda)'`)"), data
        if is_torch_symbol(name):
            data["cause"] = "torch-abi"
            return (f"the {lib} binary was built against another torch version (the missing symbol is a torch C++ "
                    f"symbol): reinstall the {lib} build that matches the installed torch (the versions pinned by "
                    "your sglang release, e.g. `pip install --force-reinstall sglang[all]==<your version>`)"), data
        data["cause"] = "abi"
        return (f"the {lib} binary does not match the libraries it links against: install matching versions of "
                f"sgl-kernel / flashinfer / torch / CUDA (the ones pinned by your sglang release)"), data
    if code == "cuda-driver-too-old":
        data["cause"] = "driver-too-old"
        return ("the NVIDIA driver is older than the CUDA runtime of torch / the kernel wheels: upgrade the driver "
                "or install wheels built for an older CUDA"), data
    if code == "kernel-package-version" and fields.get("pkg"):
        pkg, required = str(fields["pkg"]), fields.get("required")
        data.update(cause="package-version", package=pkg, required_version=required,
                    installed_version=fields.get("installed"))
        want = f"{pkg}>={required}" if required else pkg
        return (f"SGLang's start-up check needs {want}: `pip install -U \"{want}\"` (the version pinned by your "
                "sglang release), then restart"), data
    if code == "kernel-name-missing" and fields.get("name"):
        # The library loaded, but it is not the build this SGLang was written against.
        pkg = str(fields.get("package") or lib)
        data.update(library=pkg, cause="missing-name", missing_name=fields["name"],
                    module=fields.get("module") or pkg)
        partial = str(fields.get("location") or "") == "unknown location"
        if partial:
            data["namespace_package"] = True
        where = (f" (`{pkg}` imported as a bare directory, '(unknown location)': a partial install or a folder of "
                 "that name on the path shadows it)") if partial else ""
        return (f"the installed {pkg} has no `{fields['name']}`, which this SGLang imports from "
                f"`{data['module']}`{where}: install the {pkg} build your sglang release pins (reinstalling "
                "sglang with its extras, `pip install --force-reinstall \"sglang[all]==<your version>\"`, pulls "
                "matching kernel wheels; in a container, use the image built for that sglang)"), data
    if code == "cuda-ptx-toolchain":
        data["cause"] = "ptx-toolchain"
        return ("kernels were JIT-compiled by a newer CUDA toolchain than the driver supports: upgrade the driver "
                "or use a toolkit that matches it (CUDA_HOME)"), data
    if code == "glibc-version-missing" and fields.get("glibc"):
        data["cause"] = "glibc"
        return (f"the binary needs {fields['glibc']}, which this OS image lacks: use a newer base image or a wheel "
                "built for it"), data
    if code == "shared-object-missing" and str(fields.get("lib", "")).startswith(DRIVER_LIBRARIES):
        data["cause"] = "driver-not-visible"
        data["missing"] = fields["lib"]
        return (f"`{fields['lib']}` comes with the NVIDIA driver, and the loader cannot find it: in a container, run it "
                "with the NVIDIA runtime (`--gpus all` / `--runtime nvidia`); otherwise add the driver's library "
                "directory (e.g. `/usr/local/cuda/compat` or `/usr/lib/x86_64-linux-gnu`) to `LD_LIBRARY_PATH`"), data
    if code == "shared-object-missing" and fields.get("lib") and not str(fields["lib"]).startswith(CUDA_LIBRARIES):
        data["cause"] = "missing-system-library"
        data["missing"] = fields["lib"]
        return (f"{lib} links against `{fields['lib']}`, an operating-system library this image lacks: install the "
                "distribution package that provides it in the image (or add its directory to `LD_LIBRARY_PATH`); "
                "the kernel wheels themselves are not the problem"), data
    if code == "shared-object-missing" and fields.get("lib"):
        data["cause"] = "missing-library"
        data["missing"] = fields["lib"]
        return (f"{lib} links against `{fields['lib']}`, which the loader cannot find: install the package that "
                "provides it for the CUDA version of your wheels (or add its directory to `LD_LIBRARY_PATH`), or "
                "install sgl-kernel / torch builds for the CUDA you have"), data
    data["cause"] = "load-failure"
    return (f"{lib} could not be loaded: reinstall sgl-kernel / torch / CUDA in matching versions "
            "(the ones pinned by your sglang release)"), data


def _what(hit: Found) -> str:
    if hit.code == "kernel-name-missing" and hit.fields.get("name"):
        return f"cannot import name '{hit.fields['name']}' from '{hit.fields.get('module')}'"
    if hit.code == "kernel-undefined-symbol" and hit.fields.get("symbol"):
        return f"undefined symbol: {hit.fields['symbol']}"
    if hit.code == REPORT:
        return "Could not load any common_ops library"
    # The loader's report lists each import attempt as a `- Type: message` bullet.
    return hit.text.strip().removeprefix("- ")


def _raiser(ctx: RuleContext, line: int) -> Traceback | None:
    """The traceback that raised a load report printed from `line` on: it ends right before, with an
    import error whose own line is empty (the message is the report)."""
    for tb in ctx.log.of(Traceback):
        end = tb.end_line or tb.line
        if line - 2 <= end < line and tb.exc_type in IMPORT_ERRORS and not tb.message.strip() \
                and tb.line not in ctx.claimed:
            return tb
        if tb.line > line:
            break
    return None


def _report_end(ctx: RuleContext, line: int) -> int:
    """The last line a load report starting at `line` can hold: before the next traceback."""
    end = line + REPORT_SPAN
    for tb in ctx.log.of(Traceback):
        if line < tb.line <= end:
            return tb.line - 1
    return end


def _groups(ctx: RuleContext, hits: list[Found]) -> list[tuple[Found, list[Found], Traceback | None]]:
    """(the hit that names the failure, every hit of the same failure, the traceback that raised it)."""
    out: list[tuple[Found, list[Found], Traceback | None]] = []
    used: set[int] = set()
    for report in (h for h in hits if h.code == REPORT and h.traceback is None):
        if id(report) in used:
            continue
        end = _report_end(ctx, report.line)
        details = [h for h in hits if h.traceback is None and report.line < h.line <= end and id(h) not in used]
        used.add(id(report))
        used.update(id(h) for h in details)
        cause = min(details, key=lambda h: LOAD_FAILURES.index(h.code), default=report)
        out.append((cause, [report, *details], _raiser(ctx, report.line)))
    keyed: dict[str, int] = {}
    for hit in hits:
        if id(hit) in used:
            continue
        key = f"{hit.code}|{mask_numbers(_what(hit))}"
        if key in keyed:
            out[keyed[key]][1].append(hit)
            continue
        keyed[key] = len(out)
        out.append((hit, [hit], None))
    out.sort(key=lambda g: g[1][0].line)
    return out


@rule(code="KRN002", name="kernel-library-mismatch", family="kernels", severity=Severity.ERROR,
      needs=("tracebacks", "events"), stage="startup")
def kernel_library_mismatch(ctx: RuleContext) -> Iterator[Finding]:
    """A compiled kernel library does not match torch, CUDA or the driver it runs with.

    **What it means**
    Importing `sgl_kernel`, FlashInfer or another torch extension failed: `undefined symbol: …` in its
    shared object, `[sgl_kernel] CRITICAL: Could not load any common_ops library!` (with the import
    attempts listed below it), the driver is too old for the CUDA the wheel was built with, or the
    library loads but lacks a name this SGLang imports (`ImportError: cannot import name 'X' from
    'aiter'`: another build of it, or only a leftover directory of that name).

    **Why it matters**
    Nothing that needs the library can run; this is an installation problem, not a GPU or model
    problem (it is not an unsupported architecture).

    **Example**
    ```
    ImportError: /opt/conda/lib/python3.10/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate
    ```

    **Fix**
    Install matching versions of sgl-kernel / torch / CUDA (the ones your sglang release pins); a
    missing `cu…` driver symbol means the NVIDIA driver is older than the wheel's CUDA: upgrade it.
    """
    for cause, group, raiser in _groups(ctx, find_message(ctx, LOAD_FAILURES)):
        # the message names the library, else the frames that imported it do
        lib = library_of(ctx, [h.text for h in group]
                         + [ctx.traceback_text(h.traceback) for h in group if h.traceback is not None])
        remedy, data = mismatch_remedy(cause.code, cause.fields, lib)
        what = _what(cause)
        message = (f"{data['library']} is not the build this SGLang imports: {short(what, 160)}"
                   if data["cause"] == "missing-name" else f"{data['library']} failed to load: {short(what, 160)}")
        if "symbol" in data:
            message += f" — {'a CUDA driver API symbol' if data['cause'] == 'driver-api' else 'an ABI mismatch'}"
        if raiser is not None:
            message += f" (the {raiser.exc_type} above carries this report as its message)"
        events: list[Event] = [h.event for h in group]
        if raiser is not None:
            events.insert(0, raiser)
        first = group[0]
        after = echo_after(ctx, first.traceback) if first.traceback is not None else \
            traceback_after(ctx, group[-1].line, 3, first.rank)
        if after is not None and after.line not in ctx.claimed:
            events.append(after)
        yield ctx.finding("kernel-library-mismatch", message, remedy, events=events, data=data,
                          fingerprint=f"kernel-library-mismatch|{data.get('symbol') or mask_numbers(what)}")
