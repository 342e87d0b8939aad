"""Transformer callbacks for grammars/shell.lark: pasted shell sessions (prompts, exports, commands).

The SGLang part of a command (program, inline `VAR=value` prefixes, `--flag value` pairs with typed
values) is read by the startup family's `_parse_command`, the one command-line reader; this module
adds what surrounds it in a pasted session: the prompt, `export` lines, and launch wrappers
(`docker run … image python3 -m sglang…`, `torchrun … -m sglang…`, `env A=1 …`), whose `-e`/`--env`
assignments join the command's environment. `parse_command` is also what
logparse/parsing/commands.py uses to read a command assembled from several physical lines.
"""

from __future__ import annotations

import shlex
from typing import Any

from logparse.grammar.transform.startup import _parse_command, shell_split
from logparse.model.events import (
    CommandContinuation,
    LaunchCommand,
    PythonReplInput,
    ShellCommand,
    ShellExport,
    ShellPrompt,
)
from logparse.model.lazyre import lazy_compile

Children = list[Any]
Result = tuple[type, dict[str, Any]]

_NAME = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Wrapper options whose value is the next word (so that the value is not taken for the image).
_DOCKER_ENV_OPTS = ("-e", "--env")


def words_of(text: str) -> list[str]:
    """Shell words of a command line (quotes removed); a cut line with an open quote is split on
    blanks instead of failing."""
    words = shell_split(text)
    return list(words) if words is not None else text.split()


def _assignment(word: str) -> tuple[str, str] | None:
    name, eq, value = word.partition("=")
    if eq and _NAME.fullmatch(name):
        return name, value
    return None


def _program_start(words: list[str]) -> tuple[int, int] | None:
    """(index where the SGLang invocation starts, index of its first argument) inside a wrapped
    command: `python[X] -m sglang.x`, a bare `-m sglang.x` (torchrun) or `sglang serve`."""
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word == "-m" and nxt.startswith("sglang.") and (i == 0 or "python" not in words[i - 1]):
            return i, i + 2
        python = word.rsplit("/", 1)[-1].startswith("python")
        if python and nxt == "-m" and i + 2 < len(words) and words[i + 2].startswith("sglang."):
            return i, i + 3
        if word == "sglang" and nxt == "serve":
            return i, i + 2
    return None


def parse_command(text: str) -> dict[str, Any] | None:
    """A command line without its prompt → LaunchCommand fields (program, env, flags, text), or None
    when it does not run SGLang. Direct launches go to `_parse_command` as they are; wrapped ones
    are cut at the SGLang program, and the wrapper's assignments (`VAR=1 torchrun …`, `env A=1 …`,
    docker's `-e A=1` / `--env A=1` / `--env=A=1`) become the environment."""
    body = text.strip().removesuffix("\\").rstrip()
    direct = _parse_command(body)
    if direct["program"].startswith("sglang"):  # not `python -m torch.distributed.run … -m sglang…`
        direct["text"] = text
        return direct
    words = words_of(body)
    found = _program_start(words)
    if found is None:
        return None
    start, first_arg = found
    env: dict[str, str] = {}
    i = 0
    while i < start:
        word = words[i]
        pair = _assignment(word)
        if word in _DOCKER_ENV_OPTS and i + 1 < start:
            pair = _assignment(words[i + 1])
            i += 1
        elif word.startswith("--env="):
            pair = _assignment(word[len("--env=") :])
        if pair is not None:
            env[pair[0]] = pair[1]
        i += 1
    program = "sglang serve" if words[start] == "sglang" else words[first_arg - 1]
    inner = _parse_command(shlex.join(["python", "-m", "sglang.x", *words[first_arg:]]))
    return {
        "program": program,
        "env": {**env, **inner["env"]},
        "flags": inner["flags"],
        "text": text,
    }


def parse_exports(text: str) -> dict[str, str]:
    """`export [-opts] A=1 B="x y"` → {'A': '1', 'B': 'x y'} (words that are not assignments, such
    as `export PATH`, are left out)."""
    env: dict[str, str] = {}
    for word in words_of(text)[1:]:
        pair = _assignment(word)
        if pair is not None:
            env[pair[0]] = pair[1]
    return env


_PROGRAM_SKIP = frozenset({"sudo", "nohup", "time", "exec", "env"})


def program_of(command: str) -> str:
    """The program a shell command runs: its first word after `VAR=value` prefixes and `sudo`,
    `nohup`, `time`, `exec`, `env` ('CUDA_VISIBLE_DEVICES=0 python train.py' → 'python')."""
    for word in words_of(command.strip().removesuffix("\\")):
        if word not in _PROGRAM_SKIP and _assignment(word) is None:
            return word
    return ""


def _split_prompt(children: Children) -> tuple[str, str]:
    """(prompt, rest of the line) from a rule's tokens: the first token when it is SHELL_PROMPT."""
    if children and getattr(children[0], "type", "") == "SHELL_PROMPT":
        return str(children[0]).strip(), "".join(str(c) for c in children[1:])
    return "", "".join(str(c) for c in children)


class ShellCallbacks:
    def launch_command(self, children: Children) -> Result:
        """`python -m sglang.launch_server …` (startup family), after a prompt, or wrapped."""
        _prompt, rest = _split_prompt(children)
        # A flag-only continuation line (LAUNCH_CONT) has no program: the startup reader's flags.
        fields = parse_command(rest) or _parse_command(rest)
        fields["text"] = rest  # as typed, without the prompt
        return LaunchCommand, fields

    def shell_export(self, children: Children) -> Result:
        _prompt, rest = _split_prompt(children)
        env = parse_exports(rest)
        name, value = next(iter(env.items()), ("", ""))
        return ShellExport, {"name": name, "value": value, "env": env}

    def shell_command(self, children: Children) -> Result:
        prompt, rest = _split_prompt(children)
        rest = rest.strip()
        return ShellCommand, {"text": rest, "program": program_of(rest), "prompt": prompt}

    def shell_prompt(self, children: Children) -> Result:
        return ShellPrompt, {"prompt": str(children[0]).strip()}

    def command_continuation(self, children: Children) -> Result:
        return CommandContinuation, {"text": str(children[0]).removeprefix(">").strip()}

    def python_repl_input(self, children: Children) -> Result:
        return PythonReplInput, {"code": str(children[0])[4:]}
