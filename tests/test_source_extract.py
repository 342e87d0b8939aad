"""grammars/source-messages/extract.py: the templates it reads from small synthetic packages, one
construct each (a wrapper resolved across files, a name bound to `print`, `logger.log`, a stream's
`write`, `print`'s later arguments and `sep`, `str.format` fields, test folders, C/C++ printf and
std::cerr), and the guards: a wrapper is its own module's (two modules' `_log` are not one), and a
message that is only values gives no template."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from logparse.grammar.resources import grammar_dir

EXTRACT_PY = grammar_dir() / "source-messages" / "extract.py"


@pytest.fixture(scope="module")
def extract() -> ModuleType:
    spec = importlib.util.spec_from_file_location("source_extract", EXTRACT_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def templates(extract: ModuleType, tmp_path: Path, files: dict[str, str], package: str = "sglang",
              **options: object) -> set[str]:
    """The templates extract.py writes for a wheel holding `files` (path -> source)."""
    wheel = tmp_path / f"{package}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, src in files.items():
            z.writestr(name, src)
    out = tmp_path / "out.txt"
    stdout = sys.stdout
    with out.open("w") as fh:
        sys.stdout = fh
        try:
            extract.main([str(wheel)], package=package, **options)
        finally:
            sys.stdout = stdout
    lines = out.read_text().splitlines()
    assert lines[1] == f"# From: {wheel.name}"
    return {line for line in lines if not line.startswith("# ")}


def test_wrapper_is_resolved_across_files_and_reexports(extract: ModuleType, tmp_path: Path) -> None:
    # sglang's rank0_log / log_info_on_rank0 live in srt/utils/common.py, re-exported by the
    # package's __init__ (`from .common import *`); callers import them from sglang.srt.utils.
    files = {
        "sglang/srt/utils/__init__.py": "from .common import *\n",
        "sglang/srt/utils/common.py": (
            "import logging\nlogger = logging.getLogger(__name__)\n"
            "def rank0_log(msg: str):\n"
            "    if get_rank() == 0:\n"
            "        logger.info(msg)\n"
            "def log_info_on_rank0(logger, msg):\n"
            "    if get_rank() == 0:\n"
            "        logger.info(msg)\n"
        ),
        "sglang/srt/model_executor/cuda_graph_runner.py": (
            "from sglang.srt.utils import log_info_on_rank0, rank0_log\n"
            "def capture(bs, mem):\n"
            "    log_info_on_rank0(logger, f'Capture cuda graph bs {bs}')\n"
            "    rank0_log(f'Capture cuda graph end. Time elapsed: {t:.2f} s. mem usage={mem:.2f} GB.')\n"
            "    log_info_on_rank0(logger, 'Registering %d cuda graph addresses', n)\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert {"Capture cuda graph bs {}", "Capture cuda graph end. Time elapsed: {} s. mem usage={} GB.",
            "Registering {} cuda graph addresses"} <= got


def test_wrapper_frame_is_its_own_modules(extract: ModuleType, tmp_path: Path) -> None:
    # Two modules define `_log(msg)`: cute_dsl_ptxas prints `[ptxas] {msg}`, the dumper its text
    # alone. The dumper's messages must not get the ptxas frame (nor the other way round).
    files = {
        "sglang/kernels/cute_dsl_ptxas.py": (
            "import sys\n"
            "def _log(msg):\n"
            "    print(f'[ptxas] {msg}', file=sys.stderr)\n"
            "def load():\n"
            "    _log(f'Loaded kernel from {path}')\n"
        ),
        "sglang/srt/debug_utils/dumper.py": (
            "def _log(msg: str) -> None:\n"
            "    print(msg, flush=True)\n"
            "def init_group(role):\n"
            "    _log(f'[Grafter] init group: role={role.value} rank={rank}')\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert {"[ptxas] Loaded kernel from {}", "[Grafter] init group: role={} rank={}"} <= got
    assert not any(t.startswith("[ptxas] [Grafter]") for t in got)
    assert "Loaded kernel from {}" not in got


def test_method_wrapper_is_inherited(extract: ModuleType, tmp_path: Path) -> None:
    # multimodal_gen's stages: the base class's `log_info(msg)` logs `[{stage}] {msg}`; subclasses
    # in other files call `self.log_info(…)`. A class that defines its own log_info is not the base's.
    files = {
        "sglang/gen/stages/base.py": (
            "class PipelineStage(ABC):\n"
            "    def log_info(self, msg, *args):\n"
            "        logger.info(f'[{self.__class__.__name__}] {msg}', *args)\n"
        ),
        "sglang/gen/stages/__init__.py": "from sglang.gen.stages.base import PipelineStage\n",
        "sglang/gen/stages/denoising.py": (
            "from sglang.gen.stages import PipelineStage\n"
            "class DenoisingStage(PipelineStage):\n"
            "    pass\n"
            "class CosmosDenoisingStage(DenoisingStage):\n"
            "    def forward(self, batch):\n"
            "        self.log_info('Moving transformer to GPU for inference')\n"
            "        self.log_info('Starting denoising with %d steps', n)\n"
        ),
        "sglang/gen/other.py": (
            "class Quiet:\n"
            "    def log_info(self, msg):\n"
            "        pass\n"
            "    def run(self):\n"
            "        self.log_info('Not printed by anything at all')\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert got == {"[{}] Moving transformer to GPU for inference", "[{}] Starting denoising with {} steps"}


def test_name_bound_to_print(extract: ModuleType, tmp_path: Path) -> None:
    # bench_latency: `rank_print = print if tp_rank == 0 else lambda *args, **kwargs: None`
    files = {
        "sglang/bench_latency.py": (
            "def latency_test(tp_rank):\n"
            "    rank_print = print if tp_rank == 0 else lambda *args, **kwargs: None\n"
            "    rank_print(f'Decode.  latency: {latency:6.5f} s, throughput: {throughput:9.2f} token/s')\n"
            "    rank_print(latency, throughput)\n"  # only values: no template
            "def correctness(rank_print=print):\n"
            "    rank_print(f'prefill logits (first half): {logits}')\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert got == {"Decode.  latency: {} s, throughput: {} token/s", "prefill logits (first half): {}"}


def test_logger_log_and_stream_write(extract: ModuleType, tmp_path: Path) -> None:
    files = {
        "sglang/srt/server.py": (
            "import logging, sys\n"
            "from tqdm import tqdm\n"
            "def run(err):\n"
            "    logger.log(logging.WARNING, 'Scheduler hit an exception: %s', err)\n"
            "    sys.stderr.write(f'Waiting for the server at {url} to be ready\\n')\n"
            "    tqdm.write(f'Finished warmup of {n} requests')\n"
            "    fh.write(f'not a log: {x} written to some file')\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert got == {"Scheduler hit an exception: {}", "Waiting for the server at {} to be ready",
                   "Finished warmup of {} requests"}


def test_print_arguments_and_sep(extract: ModuleType, tmp_path: Path) -> None:
    files = {
        "sglang/bench_serving.py": (
            "def report(n, tput):\n"
            "    print('Successful requests:', n, 'of', total)\n"
            "    print('Output token throughput', tput, 'tok/s', sep=': ')\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert got == {"Successful requests: {} of {}", "Output token throughput: {}: tok/s"}


def test_format_fields(extract: ModuleType, tmp_path: Path) -> None:
    # Named and numbered fields, a nested format spec, and a wrapper whose frame formats its
    # parameter by name: each field is a hole, the parameter the caller's text.
    files = {
        "sglang/srt/utils.py": (
            "def tp_log(msg, rank=0):\n"
            "    logger.info('[TP{rank}] {msg}'.format(rank=rank, msg=msg))\n"
            "def report(t, w):\n"
            "    logger.info('Throughput: {tput:>{width}.2f} token/s'.format(tput=t, width=w))\n"
            "    logger.info('Loaded {0} of {1} shards in {2!r}'.format(a, b, c))\n"
            "    tp_log('Load weight end. type=%s' % name)\n"
        ),
    }
    got = templates(extract, tmp_path, files)
    assert {"Throughput: {} token/s", "Loaded {} of {} shards in {}", "[TP{}] Load weight end. type={}"} <= got
    assert not any("width" in t or "tput" in t for t in got)


def test_test_folders_only_with_tests(extract: ModuleType, tmp_path: Path) -> None:
    files = {"sglang/test/test_utils.py": "def popen(url):\n    print(f'Waiting for server to launch at {url}')\n"}
    assert templates(extract, tmp_path, files) == set()
    assert templates(extract, tmp_path, files, tests=True) == {"Waiting for server to launch at {}"}


def test_native_printf_and_cerr(extract: ModuleType, tmp_path: Path) -> None:
    # cute's TMA descriptor dump (a std::cerr chain whose literals start with "\n", one line each),
    # printf/fprintf with PRIu64 between literals, a macro's continued lines; comments are not read.
    # Lines of only values or too few letters (`format 9`) give no template: the guard.
    header = (
        "#pragma once\n"
        "// printf(\"a comment is not a message %d\\n\", x);\n"
        "inline void dump(const void* desc, int fmt, int dim) {\n"
        "    std::cerr << \"TMA Desc Addr:   \" << desc\n"
        "              << \"\\nformat         \" << fmt\n"
        "              << \"\\ngmem_address   \" << addr\n"
        "              << \"\\nelementStrides \" << strides << std::endl;\n"
        "    printf(\"globalDim (%\" PRIu64 \", %\" PRIu64 \") of tensor map\\n\", dims[0], dims[1]);\n"
        "    fprintf(stderr, \"Failed to launch kernel with %d threads\\n\", n);\n"
        "    printf(\"%d, %d\\n\", a, b);\n"
        "    std::cout << a << \" x \" << b << std::endl;\n"
        "}\n"
        "#define CHECK(r) do { if (r != CUDA_SUCCESS) { \\\n"
        "    std::cerr << \"Error: Failed to initialize the TMA descriptor \" << r << std::endl; \\\n"
        "} } while (0)\n"
    )
    files = {"deep_gemm/include/cute/atom/copy_traits.hpp": header}
    assert templates(extract, tmp_path, files, package="deep_gemm") == set()
    got = templates(extract, tmp_path, files, package="deep_gemm", native=True)
    assert got == {"TMA Desc Addr:   {}", "gmem_address   {}", "elementStrides {}",
                   "globalDim ({}, {}) of tensor map", "Failed to launch kernel with {} threads",
                   "Error: Failed to initialize the TMA descriptor {}"}


def test_native_under_limits_native_files_only(extract: ModuleType, tmp_path: Path) -> None:
    # flashinfer's wheel ships its own headers (data/include) beside vendored cutlass: only the
    # folders named are read for native text; the package's Python files are read as always.
    files = {
        "flashinfer/jit/core.py": "def build(name):\n    logger.info(f'Loading JIT ops: {name}')\n",
        "flashinfer/data/include/flashinfer/utils.cuh": 'void f() { printf("Unsupported head_dim: %d\\n", d); }\n',
        "flashinfer/data/cutlass/include/cute/util/print.hpp": 'void g() { printf("cute debug layout of %d modes\\n", n); }\n',
    }
    got = templates(extract, tmp_path, files, package="flashinfer", native=True,
                    native_under=("flashinfer/data/include/",))
    assert got == {"Loading JIT ops: {}", "Unsupported head_dim: {}"}
