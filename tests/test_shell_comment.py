"""A pasted command's shell comment is not part of the command: bash ends the command at a `#` that
starts a word outside quotes; a `#` inside a word or quotes is the word's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from logparse.engine.core import analyze
from logparse.grammar.transform.startup import shell_split, strip_shell_comment


@pytest.mark.parametrize(("text", "words"), [
    ("--disable-cuda-graph # for faster test", ("--disable-cuda-graph",)),
    ('--x a#b --y "c # d"', ("--x", "a#b", "--y", "c # d")),
    ("--x 'a # b' # c", ("--x", "a # b")),
    ("--base-url http://h:30000/#frag", ("--base-url", "http://h:30000/#frag")),
    ("--x a\\ #b # c", ("--x", "a #b")),
    ("# a whole comment", ()),
])
def test_comment_is_cut_as_bash_cuts_it(text: str, words: tuple[str, ...]) -> None:
    assert shell_split(text) == words


def test_no_hash_is_untouched() -> None:
    assert strip_shell_comment("--tp 8 --port 30000") == "--tp 8 --port 30000"


def test_a_commented_flag_line_of_a_pasted_launch(tmp_path: Path) -> None:
    # sgl-project/sglang#11879 (dev/n-011), the launch as pasted
    log = tmp_path / "run.log"
    log.write_text("python -m sglang.launch_server \\\n  --model Qwen/Qwen3-4B-Instruct-2507 \\\n"
                   "  --mem-fraction 0.7 \\\n  --disable-cuda-graph # for faster test\n")
    config = analyze(str(log)).views.run_config()
    assert config.get("disable_cuda_graph") is True
    assert not any("faster" in str(v) for v in config.values())
