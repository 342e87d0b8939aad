"""Extract the log-message templates a Python package's source prints (a maintainer's tool, not run by logdiag).

    python grammars/source-messages/extract.py sglang-0.1.20-py3-none-any.whl … > grammars/source-messages/sglang.txt
    python grammars/source-messages/extract.py --package torch --skip torch/testing/ torch-2.4.0-….whl … > torch.txt

`--package NAME` reads the files under `NAME/` of each wheel (default `sglang`; a dash in the name
becomes `_`, as in the wheel's folder), `--under PREFIX` (repeatable) narrows that to some folders,
`--skip PREFIX` (repeatable) leaves folders out (a library's test helpers, sub-projects SGLang never
runs). The libraries' files (torch.txt, transformers.txt, …) are built this way from wheels fetched
with `pip download --no-deps`; their headers name the wheels. A wheel is read as a zip (its `.py`
files only): nothing is installed or imported.

Reads the Python files of one or more SGLang wheels (or source trees), finds every logging call
(`logger.info/warning/error/debug/critical/exception(…)`, their `_once` variants), `print(…)`,
`warnings.warn(…)`, and writes each message's template, one per line: literal text, with `{}` for
every formatted value (`%s`, `{x}`, `{:.2f}`, a concatenated variable). A message that holds
newlines gives one template per line. Templates whose literal part is too short to say anything
(`{}`, `{}: {}`) are dropped. Output is sorted and de-duplicated; a header names the releases read.
Only facts about SGLang's output are kept (the text it prints), no code.

`--assigned` also takes strings assigned to a name that a logging call then prints in the same
function (`message = "Uvicorn running on %s://%s:%d …"; logger.info(message, …)`): the libraries'
files are built with it (uvicorn and transformers log that way).

`--more` also takes `raise X(…)` messages and strings assigned to a name that a logging call then
prints. The shipped file is built without it: on the corpus it recognized no further line, and it
triples the templates (and the time to load them on a log's first unparsed line).
"""

from __future__ import annotations

import ast
import re
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

LOG_METHODS = {"info", "warning", "warn", "error", "debug", "critical", "exception", "fatal",
               "info_once", "warning_once", "debug_once", "error_once", "print_info_once",
               "print_warning_once", "log_info_on_rank0", "print_info_on_rank0", "print",
               # transformers' `logger.warning_advice`, torch's `warn_once` helpers
               "warning_advice", "warn_once"}
HOLE = "\x00"  # a formatted value while building; written as `{}`
MIN_LITERAL_ALNUM = 10
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[sdifrgexXcEGo%]")
_BRACES = re.compile(r"\{[^{}]*\}")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colour codes: the reader strips them from lines


def _pieces(node: ast.AST) -> str | None:
    """The message text of an expression with HOLE for what is computed; None if not a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            else:
                out.append(HOLE)
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left), _pieces(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else HOLE) + (right if right is not None else HOLE)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _pieces(node.left)
        if left is None:
            return None
        return _PERCENT.sub(lambda m: "%" if m.group(0) == "%%" else HOLE, left)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"):
        base = _pieces(node.func.value)
        if base is None:
            return None
        return _BRACES.sub(HOLE, base.replace("{{", "\x01").replace("}}", "\x02")).replace("\x01", "{").replace("\x02", "}")
    return None


def _assigned(tree: ast.AST) -> dict[tuple[int, str], list[str]]:
    """Strings assigned to a plain name inside each function (`msg = f"…"` then `logger.error(msg)`),
    keyed by (the function's line, name)."""
    out: dict[tuple[int, str], list[str]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                text = _pieces(node.value)
                if text is not None:
                    out.setdefault((fn.lineno, node.targets[0].id), []).append(text)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                text = _pieces(node.value)
                if text is not None:  # msg += "…": its own line of the message, usually
                    out.setdefault((fn.lineno, node.target.id), []).append(text)
    return out


def _messages(tree: ast.AST, more: bool, assigned_too: bool = False) -> Iterator[str]:
    assigned = _assigned(tree) if more or assigned_too else {}
    owner_fn: dict[int, int] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                owner_fn[id(node)] = fn.lineno  # innermost wins: inner functions are walked later
    for node in ast.walk(tree):
        if more and isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            # An exception's message: printed after `XError: `, and often logged or echoed alone.
            text = _pieces(node.exc.args[0])
            if text is not None:
                yield text
            continue
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in LOG_METHODS:
            continue
        if isinstance(f, ast.Attribute) and name != "print":
            owner = ast.unparse(f.value).lower()
            if "log" not in owner and "warnings" not in owner:
                continue
        text = _pieces(node.args[0])
        if text is not None:
            texts = [text]
        elif isinstance(node.args[0], ast.Name):
            texts = assigned.get((owner_fn.get(id(node), -1), node.args[0].id), [])
        else:
            continue
        for text in texts:
            if name == "print" and len(node.args) > 1:
                text = " ".join([text] + [HOLE] * (len(node.args) - 1))
            elif name != "print" and len(node.args) > 1:
                # logger.info("Registering %d cuda graph addresses", n): logging applies the `%` itself.
                text = _PERCENT.sub(lambda m: "%" if m.group(0) == "%%" else HOLE, text)
            yield text


def _templates(text: str) -> Iterator[str]:
    for line in _ANSI.sub("", text).split("\n"):
        line = line.strip()
        line = re.sub(HOLE + "+", HOLE, line)
        literal = re.sub(r"[^A-Za-z0-9]", "", line.replace(HOLE, ""))
        if len(literal) >= MIN_LITERAL_ALNUM:
            yield line.replace("{", "{{").replace("}", "}}").replace(HOLE, "{}")


def _sources(path: Path, under: tuple[str, ...] = ("sglang/",)) -> Iterator[tuple[str, str]]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.endswith(".py") and name.startswith(under):
                    yield name, z.read(name).decode("utf-8", "replace")
    elif path.name.endswith(".tar.gz"):
        # An sdist (a release with no wheel on the index): `name-1.0/flashinfer/…`; its top folder
        # is dropped so that the same prefixes select the same files.
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                name = member.name.split("/", 1)[-1]
                if member.isfile() and name.endswith(".py") and name.startswith(under):
                    fh = tar.extractfile(member)
                    if fh is not None:
                        yield name, fh.read().decode("utf-8", "replace")
    else:
        for p in sorted(path.rglob("*.py")):
            yield str(p), p.read_text("utf-8", "replace")


def main(paths: list[str], more: bool = False, package: str = "sglang", under: tuple[str, ...] = (),
         skip: tuple[str, ...] = (), assigned: bool = False) -> None:
    folder = package.replace("-", "_")
    prefixes = under or (folder + "/",)
    out: set[str] = set()
    read: set[int] = set()
    for arg in paths:
        for _name, src in _sources(Path(arg), prefixes):
            if "/test/" in _name or "/tests/" in _name or (skip and _name.startswith(skip)):
                continue  # test helpers print for their own runs, not for a server's log
            if hash(src) in read:
                continue  # the same file in another release: its messages are in already
            read.add(hash(src))
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            for msg in _messages(tree, more, assigned):
                out.update(_templates(msg))
    what = "SGLang" if folder == "sglang" else package
    print(f"# {what} log-message templates (grammars/source-messages/extract.py); `{{}}` = a formatted value.")
    print("# From: " + ", ".join(Path(p).name for p in paths))
    for t in sorted(out):
        print(t)


def _options(args: list[str]) -> tuple[list[str], dict[str, object]]:
    paths: list[str] = []
    opts: dict[str, object] = {"more": False, "package": "sglang", "under": (), "skip": (), "assigned": False}
    it = iter(args)
    for a in it:
        if a in ("--more", "--assigned"):
            opts[a[2:]] = True
        elif a == "--package":
            opts["package"] = next(it)
        elif a in ("--under", "--skip"):
            key = a[2:]
            opts[key] = (*opts[key], next(it))  # type: ignore[misc]
        else:
            paths.append(a)
    return paths, opts


if __name__ == "__main__":
    _paths, _opts = _options(sys.argv[1:])
    main(_paths, **_opts)  # type: ignore[arg-type]
