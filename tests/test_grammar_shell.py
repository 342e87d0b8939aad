"""Pasted shell sessions (grammars/shell.lark + logparse/grammar/transform/shell.py +
logparse/parsing/commands.py): one real line per shape → (event class, fields), fast path ≡ LALR,
near-misses, commands assembled from several lines per stream, tracebacks that end at a prompt."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from logparse.grammar.build import get_parser
from logparse.model.events import (
    CommandContinuation,
    Event,
    LaunchCommand,
    PythonReplInput,
    ShellCommand,
    ShellExport,
    ShellPrompt,
    Traceback,
    TracebackSource,
    Unparsed,
)
from logparse.parsing.commands import CommandAssembler
from logparse.parsing.pipeline import parse_file
from tests.conftest import FIXTURES, write_log


@pytest.fixture(scope="module")
def parser() -> Any:
    return get_parser(strict=True)


# (line, event class, the fields that matter)
CASES: list[tuple[str, type, dict[str, Any]]] = [
    # ------------------------------------------------------------------ prompts
    ("root@abc123:/workspace#", ShellPrompt, {"prompt": "root@abc123:/workspace#"}),
    ("root@abc123:/workspace# ", ShellPrompt, {"prompt": "root@abc123:/workspace#"}),
    ("(venv) $", ShellPrompt, {"prompt": "(venv) $"}),
    ("[root@gpu-node-3 sglang]#", ShellPrompt, {"prompt": "[root@gpu-node-3 sglang]#"}),
    ("bash-5.1#", ShellPrompt, {"prompt": "bash-5.1#"}),
    # ------------------------------------------------------------------ launches after a prompt
    # verbatim from sgl-project/sglang#1275
    (
        (
            "(sglang) aluo@titan:~/sglang$ python -m sglang.launch_server --model-path "
            "/scratch3/data/Meta-Llama-3.1-8B-Instruct/ --enable-torch-compile --disable-radix-cache"
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {},
            "flags": {
                "--model-path": "/scratch3/data/Meta-Llama-3.1-8B-Instruct/",
                "--enable-torch-compile": True,
                "--disable-radix-cache": True,
            },
            "text": "python -m sglang.launch_server --model-path /scratch3/data/Meta-Llama-3.1-8B-Instruct/ "
            "--enable-torch-compile --disable-radix-cache",
        },
    ),
    # verbatim from sgl-project/sglang#8081 (the path was wrapped there)
    (
        (
            "$ python3 -m sglang.launch_server --trust-remote-code --model-path "
            "/home/jobuser/.cache/huggingface/hub/models--google--gemma-3n-E2B-it/snapshots/5e092ebca197cdcd8d8"
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "flags": {
                "--trust-remote-code": True,
                "--model-path": "/home/jobuser/.cache/huggingface/hub/models--google--gemma-3n-E2B-it/snapshots/"
                "5e092ebca197cdcd8d8",
            },
        },
    ),
    (
        (
            "root@7f3c2a9d1b4e:/sgl-workspace# SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path m "
            "--speculative-algorithm EAGLE --speculative-eagle-topk 4 --tp 8 \\"
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"SGLANG_ENABLE_SPEC_V2": "1"},
            "flags": {
                "--model-path": "m",
                "--speculative-algorithm": "EAGLE",
                "--speculative-eagle-topk": 4,
                "--tp": 8,
            },
        },
    ),
    (
        "(base) user@host:~$ sglang serve --model-path Qwen/Qwen3-8B --port 30000",
        LaunchCommand,
        {"program": "sglang serve", "flags": {"--model-path": "Qwen/Qwen3-8B", "--port": 30000}},
    ),
    (
        "$ python -m sglang.bench_serving --backend sglang --num-prompts 200 --request-rate 8",
        LaunchCommand,
        {
            "program": "sglang.bench_serving",
            "flags": {"--backend": "sglang", "--num-prompts": 200, "--request-rate": 8},
        },
    ),
    # ------------------------------------------------------------------ wrapped launches
    (
        (
            "docker run --gpus all --shm-size 32g -p 30000:30000 -v ~/.cache/huggingface:/root/.cache/huggingface "
            '--env "HF_TOKEN=<secret>" -e SGLANG_ENABLE_SPEC_V2=1 --ipc=host lmsysorg/sglang:latest '
            "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 30000"
        ),
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"HF_TOKEN": "<secret>", "SGLANG_ENABLE_SPEC_V2": "1"},
            "flags": {
                "--model-path": "meta-llama/Llama-3.1-8B-Instruct",
                "--host": "0.0.0.0",
                "--port": 30000,
            },
        },
    ),
    (
        "root@node0:~# NCCL_DEBUG=INFO torchrun --nproc_per_node 8 --nnodes 2 -m sglang.launch_server --model-path m --tp 16",
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"NCCL_DEBUG": "INFO"},
            "flags": {"--model-path": "m", "--tp": 16},
        },
    ),
    (
        "kubectl exec -it sglang-0 -- python3 -m sglang.launch_server --model-path m --tp 8",
        LaunchCommand,
        {"program": "sglang.launch_server", "flags": {"--model-path": "m", "--tp": 8}},
    ),
    (
        "$ ssh gpu-node-2 SGLANG_HOST_IP=10.0.0.2 python3 -m sglang.launch_server --model-path m --node-rank 1",
        LaunchCommand,
        {
            "program": "sglang.launch_server",
            "env": {"SGLANG_HOST_IP": "10.0.0.2"},
            "flags": {"--model-path": "m", "--node-rank": 1},
        },
    ),
    (
        "python -m torch.distributed.run --nproc-per-node 2 -m sglang.bench_one_batch --model-path m --batch-size 8",
        LaunchCommand,
        {"program": "sglang.bench_one_batch", "flags": {"--model-path": "m", "--batch-size": 8}},
    ),
    # ------------------------------------------------------------------ exports
    (
        "root@7f3c2a9d1b4e:/sgl-workspace# export SGLANG_ENABLE_SPEC_V2=1",
        ShellExport,
        {"name": "SGLANG_ENABLE_SPEC_V2", "value": "1", "env": {"SGLANG_ENABLE_SPEC_V2": "1"}},
    ),
    (
        "export NCCL_IB_HCA='mlx5_0,mlx5_1' NCCL_DEBUG=INFO HF_HOME=\"/data/hf cache\"",
        ShellExport,
        {
            "name": "NCCL_IB_HCA",
            "value": "mlx5_0,mlx5_1",
            "env": {
                "NCCL_IB_HCA": "mlx5_0,mlx5_1",
                "NCCL_DEBUG": "INFO",
                "HF_HOME": "/data/hf cache",
            },
        },
    ),
    # ------------------------------------------------------------------ other commands
    (
        "root@abc123:/workspace# nvidia-smi",
        ShellCommand,
        {"text": "nvidia-smi", "program": "nvidia-smi", "prompt": "root@abc123:/workspace#"},
    ),
    (
        '(venv) $ pip install "sglang[all]>=0.5.9"',
        ShellCommand,
        {"text": 'pip install "sglang[all]>=0.5.9"', "program": "pip", "prompt": "(venv) $"},
    ),
    (
        "cd /sgl-workspace/sglang",
        ShellCommand,
        {"text": "cd /sgl-workspace/sglang", "program": "cd"},
    ),
    ("ls -la /models", ShellCommand, {"text": "ls -la /models", "program": "ls"}),
    (
        "root@node0:~# CUDA_VISIBLE_DEVICES=0 sudo python train.py --lr 3",
        ShellCommand,
        {"text": "CUDA_VISIBLE_DEVICES=0 sudo python train.py --lr 3", "program": "python"},
    ),
    (
        "curl http://localhost:30000/generate -H 'Content-Type: application/json' -d '{\"text\": \"Hello\"}'",
        ShellCommand,
        {"program": "curl"},
    ),
    # verbatim from sgl-project/sglang#3855: the image's own entrypoint, no SGLang program to read
    (
        (
            "docker run --privileged --gpus all   -it --rm  --shm-size 32g     -p 30000:30000     "
            '-v ~/.cache/huggingface:/root/.cache/huggingface     --env "HF_TOKEN=xxxx"     --ipc=host     '
            "lmsysorg/sglang:dev     --host 0.0.0.0 --port 30000"
        ),
        ShellCommand,
        {"program": "docker"},
    ),
    # ------------------------------------------------------------------ continuation lines
    (
        ">     --speculative-eagle-topk 4 \\",
        CommandContinuation,
        {"text": "--speculative-eagle-topk 4 \\"},
    ),
    ("> --tp 8", CommandContinuation, {"text": "--tp 8"}),
    (
        "    -v ~/.cache/huggingface:/root/.cache/huggingface \\",
        CommandContinuation,
        {"text": "-v ~/.cache/huggingface:/root/.cache/huggingface \\"},
    ),
    (
        "    lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m",
        CommandContinuation,
        {"text": "lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m"},
    ),
    # verbatim from sgl-project/sglang#24843 (indented flag lines stay the startup family's)
    (
        "      --model-path /mnt/raid/models/DeepSeek-V3-0324 \\",
        LaunchCommand,
        {"program": "", "flags": {"--model-path": "/mnt/raid/models/DeepSeek-V3-0324"}},
    ),
    # ------------------------------------------------------------------ the Python REPL
    (">>> import sglang as sgl", PythonReplInput, {"code": "import sglang as sgl"}),
]


@pytest.mark.parametrize(("line", "cls", "fields"), CASES, ids=[c[0][:60] for c in CASES])
def test_shell_line(parser: Any, line: str, cls: type, fields: dict[str, Any]) -> None:
    env, got_cls, got = parser.parse(line)
    assert got_cls is cls, (got_cls, got)
    assert env is None  # shell lines carry no log envelope
    for name, value in fields.items():
        assert got[name] == value, (name, got)
    assert parser.parse(line) == parser.parse_lalr(line)
    assert parser.fast.parse(line) is not None  # every shell rule is flat: no LALR fallback
    cls(**got)


NEAR_MISSES = [
    # the entrypoint warning's example line is not a command (corpus dev-016)
    "  Example: sglang serve --model-path <model> [options]",
    "$python ./sgl-kernel/tests/test_per_token_quant_fp8.py",  # no blank after `$`
    "# python3 -m sglang.launch_server --model-path m",  # a comment, not a root prompt
    ">>>",
    "[2026-02-11 10:14:02] Load weight begin. avail mem=78.61 GB",
    "    server_args = prepare_server_args(sys.argv[1:])",  # traceback source
    "user@example.com wrote:",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_misses_are_not_shell_commands(parser: Any, line: str) -> None:
    _env, cls, _kw = parser.parse(line)
    assert cls not in (
        ShellPrompt,
        ShellCommand,
        ShellExport,
        CommandContinuation,
        LaunchCommand,
    ), cls
    assert parser.parse(line) == parser.parse_lalr(line)


# ---------------------------------------------------------------------------------- a whole session

SESSION = """\
root@a1b2c3d4e5f6:/workspace# cd /workspace/sglang
root@a1b2c3d4e5f6:/workspace# export SGLANG_ENABLE_SPEC_V2=1
root@a1b2c3d4e5f6:/workspace# export NCCL_DEBUG=WARN HF_HOME="/data/hf"
root@a1b2c3d4e5f6:/workspace# CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server \\
>     --model-path Qwen/Qwen3-8B \\
>     --tp 2 \\
>     --mem-fraction-static 0.95 \\
>     --cuda-graph-bs 1 2 4 8 \\
>     --host 0.0.0.0 --port 30000
[2026-02-11 11:02:10] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=2, mem_fraction_static=0.95, port=30000)
[2026-02-11 11:02:16 TP0] Init torch distributed begin.
[2026-02-11 11:02:16 TP1] Init torch distributed begin.
[2026-02-11 11:02:17 TP0] Init torch distributed ends. elapsed=0.93 s, mem usage=0.41 GB
[2026-02-11 11:02:17 TP1] Init torch distributed ends. elapsed=0.95 s, mem usage=0.41 GB
[2026-02-11 11:02:17 TP0] Load weight begin. avail mem=78.12 GB
[2026-02-11 11:02:17 TP1] Load weight begin. avail mem=78.12 GB
Loading safetensors checkpoint shards:   0% Completed | 0/5 [00:00<?, ?it/s]
Loading safetensors checkpoint shards: 100% Completed | 5/5 [00:04<00:00,  1.21it/s]
[2026-02-11 11:02:22 TP0] Load weight end. elapsed=4.71 s, type=Qwen3ForCausalLM, avail mem=70.31 GB, mem usage=7.81 GB.
[2026-02-11 11:02:22 TP1] Load weight end. elapsed=4.69 s, type=Qwen3ForCausalLM, avail mem=70.31 GB, mem usage=7.81 GB.
[2026-02-11 11:02:22 TP0] Using KV cache dtype: torch.bfloat16
[2026-02-11 11:02:23 TP0] KV Cache is allocated. #tokens: 912384, K size: 62.65 GB, V size: 62.65 GB
[2026-02-11 11:02:23 TP0] Memory pool end. avail mem=3.12 GB
[2026-02-11 11:02:23 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=3.05 GB
[2026-02-11 11:02:23 TP0] Capture cuda graph bs [1, 2, 4, 8]
[2026-02-11 11:02:24 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2912, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 412, in capture
    self.capture_one_batch_size(bs, forward)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.
root@a1b2c3d4e5f6:/workspace# nvidia-smi --query-gpu=memory.used --format=csv,noheader
root@a1b2c3d4e5f6:/workspace# python3 -m sglang.launch_server \\
  --model-path Qwen/Qwen3-8B \\
  --tp 2 \\
  --mem-fraction-static 0.85
[2026-02-11 11:05:40] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=2, mem_fraction_static=0.85, port=30000)
[2026-02-11 11:05:46 TP0] Init torch distributed begin.
[2026-02-11 11:05:46 TP1] Init torch distributed begin.
root@a1b2c3d4e5f6:/workspace#
"""


def _session(tmp_path: Path) -> Any:
    return parse_file(write_log(tmp_path, SESSION, "session.log"))


def test_session_is_fully_recognised(tmp_path: Path) -> None:
    log = _session(tmp_path)
    assert log.coverage.total == len(SESSION.splitlines()) == 40
    assert log.coverage.unparsed == 0, log.coverage.top(5)


def test_session_yields_one_launch_per_command_with_env_and_flags(tmp_path: Path) -> None:
    launches = _session(tmp_path).of(LaunchCommand)
    assert [(e.line, e.end_line) for e in launches] == [(4, 9), (33, 36)]
    first, second = launches
    assert first.program == "sglang.launch_server"
    assert first.env == {"CUDA_VISIBLE_DEVICES": "0,1"}  # inline; exports are ShellExport events
    assert first.flags == {
        "--model-path": "Qwen/Qwen3-8B",
        "--tp": 2,
        "--mem-fraction-static": 0.95,
        "--cuda-graph-bs": [1, 2, 4, 8],
        "--host": "0.0.0.0",
        "--port": 30000,
    }
    assert first.text.startswith(
        "CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path"
    )
    assert "\\" not in first.text and ">" not in first.text
    assert second.flags == {
        "--model-path": "Qwen/Qwen3-8B",
        "--tp": 2,
        "--mem-fraction-static": 0.85,
    }


def test_session_exports_one_event_per_variable(tmp_path: Path) -> None:
    exports = _session(tmp_path).of(ShellExport)
    assert [(e.line, e.name, e.value) for e in exports] == [
        (2, "SGLANG_ENABLE_SPEC_V2", "1"),
        (3, "NCCL_DEBUG", "WARN"),
        (3, "HF_HOME", "/data/hf"),
    ]


def test_traceback_message_stops_at_the_prompt(tmp_path: Path) -> None:
    log = _session(tmp_path)
    (tb,) = log.of(Traceback)
    assert tb.exc_type == "torch.OutOfMemoryError"
    assert tb.message.startswith("CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert "root@" not in tb.message and "nvidia-smi" not in tb.message
    assert tb.end_line == 31  # the exception line; line 32 is the next prompt
    assert [(e.line, e.program) for e in log.of(ShellCommand)] == [(1, "cd"), (32, "nvidia-smi")]
    assert [e.line for e in log.of(ShellPrompt)] == [40]


def test_a_multi_line_message_still_ends_at_the_prompt(tmp_path: Path) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py", line 724, in __post_init__\n'
        "    self._handle_gpu_memory_settings()\n"
        "ValueError: Invalid configuration.\n"
        "Possible solutions: lower --mem-fraction-static\n"
        "(base) user@host:~$ echo done\n"
        "(base) user@host:~$\n"
    )
    log = parse_file(write_log(tmp_path, text))
    (tb,) = log.of(Traceback)
    assert tb.message == "Invalid configuration.\nPossible solutions: lower --mem-fraction-static"
    assert log.of(ShellPrompt)[0].line == 7


def test_the_fixture_holds_two_attempts_and_their_exports() -> None:
    log = parse_file(str(FIXTURES / "logs" / "pasted-shell-session.log"))
    assert log.coverage.unparsed == 0, log.coverage.top(5)
    servers = [e for e in log.of(LaunchCommand) if e.program == "sglang.launch_server"]
    assert [e.flags["--speculative-eagle-topk"] for e in servers] == [4, 1]
    assert all(e.end_line > e.line for e in servers)
    assert {e.name: e.value for e in log.of(ShellExport)}["SGLANG_ENABLE_SPEC_V2"] == "1"
    (tb,) = log.of(Traceback)
    assert tb.message == "Spec v2 currently only supports topk = 1 for speculative decoding."


# ---------------------------------------------------------------------------------- the assembler


def _feed(lines: list[tuple[str, str]], tmp_path: Path) -> Any:
    """Parse lines given as (stream, text) through the grammar and the assembler directly."""
    parser = get_parser()
    asm = CommandAssembler()
    out: list[Event] = []
    absorbed: list[int] = []
    for no, (stream, text) in enumerate(lines, start=1):
        _env, cls, kw = parser.parse(text)
        event = None if cls is Unparsed else cls(line=no, end_line=no, **kw)
        emitted, took = asm.feed(stream, no, event, text)
        out.extend(emitted)
        if took:
            absorbed.append(no)
    out.extend(asm.finish())
    return out, absorbed


def test_docker_command_over_several_lines_is_one_launch(tmp_path: Path) -> None:
    events, absorbed = _feed(
        [
            ("", "docker run --gpus all \\"),
            ("", "    --shm-size 32g \\"),
            ("", "    -e HF_TOKEN=<secret> \\"),
            ("", "    -p 30000:30000 \\"),
            ("", "    lmsysorg/sglang:latest \\"),
            (
                "",
                "    python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 1",
            ),
        ],
        tmp_path,
    )
    (cmd,) = events
    assert isinstance(cmd, LaunchCommand)
    assert (cmd.line, cmd.end_line, cmd.program) == (1, 6, "sglang.launch_server")
    assert cmd.env == {"HF_TOKEN": "<secret>"}
    assert cmd.flags == {"--model-path": "meta-llama/Llama-3.1-8B-Instruct", "--tp": 1}
    assert absorbed == [2, 3, 4, 5, 6]


def test_lines_the_grammar_does_not_know_continue_after_a_backslash(tmp_path: Path) -> None:
    events, absorbed = _feed(
        [("", "docker run --rm \\"), ("", "nvcr.io/sglang:x \\"), ("", "")], tmp_path
    )
    (cmd,) = events
    assert isinstance(cmd, ShellCommand)
    assert (cmd.end_line, cmd.text) == (2, "docker run --rm nvcr.io/sglang:x")
    assert absorbed == [2]


def test_indented_flags_without_backslashes_join_the_launch(tmp_path: Path) -> None:
    events, _ = _feed(
        [
            ("", "python -m sglang.launch_server"),
            ("", "  --model-path m"),
            ("", "  --tp 4"),
            ("", "nvidia-smi"),
        ],
        tmp_path,
    )
    assert [type(e) for e in events] == [LaunchCommand, ShellCommand]
    assert (events[0].end_line, events[0].flags) == (3, {"--model-path": "m", "--tp": 4})


def test_streams_never_mix(tmp_path: Path) -> None:
    events, absorbed = _feed(
        [
            ("node0", "python -m sglang.launch_server \\"),
            ("node1", "  --tp 8"),
            ("node0", "  --tp 2"),
        ],
        tmp_path,
    )
    launches = sorted(events, key=lambda e: e.line)
    assert [(e.line, e.end_line, e.program, e.flags) for e in launches] == [
        (1, 3, "sglang.launch_server", {"--tp": 2}),
        (2, 2, "", {"--tp": 8}),  # the other stream's flags stay a headless continuation
    ]
    assert absorbed == [3]


def test_headless_continuation_lines_keep_what_they_hold(tmp_path: Path) -> None:
    events, _ = _feed(
        [
            ("", ">   --speculative-num-steps 3 \\"),
            ("", ">   --speculative-eagle-topk 1"),
            ("", ""),
            ("", "    lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m"),
        ],
        tmp_path,
    )
    first, second = events
    assert isinstance(first, CommandContinuation)
    assert (first.end_line, first.text) == (
        2,
        "--speculative-num-steps 3 --speculative-eagle-topk 1",
    )
    assert isinstance(second, LaunchCommand) and second.program == "sglang.launch_server"


def test_a_traceback_source_line_after_a_backslash_is_the_command(tmp_path: Path) -> None:
    parser = get_parser()
    assert (
        parser.parse("    lmsysorg/sglang:v0.5.9")[1] is TracebackSource
    )  # on its own, indented text
    events, absorbed = _feed(
        [("", "docker run -it \\"), ("", "    lmsysorg/sglang:v0.5.9")], tmp_path
    )
    (cmd,) = events
    assert (cmd.end_line, cmd.text) == (2, "docker run -it lmsysorg/sglang:v0.5.9")
    assert absorbed == [2]


def test_assembled_events_are_real_records(tmp_path: Path) -> None:
    log = _session(tmp_path)
    for e in log.of(LaunchCommand, ShellExport):
        assert dataclasses.replace(e) == e
        assert e.as_dict()["kind"] in ("launch_command", "shell_export")
