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

`--tests` also reads test folders (`sglang/test/`: the helpers CI runs print their own lines, which
reach the CI logs pasted into issues). `--native` also reads the C/C++ sources and headers a wheel
ships as text (`.h/.cuh/.cu/.cpp/…`, JIT-compiled at run time) for their printf/fprintf/std::cerr
text; `--native-under PREFIX` (repeatable) takes native files only from those folders (flashinfer's
`flashinfer/data/include/`, `…/csrc/`, not its vendored cutlass and spdlog), and may name folders
outside the package's (an sdist's top-level `include/`).

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
from dataclasses import dataclass, field
from pathlib import Path

LOG_METHODS = {"info", "warning", "warn", "error", "debug", "critical", "exception", "fatal",
               "info_once", "warning_once", "debug_once", "error_once", "print_info_once",
               "print_warning_once", "log_info_on_rank0", "print_info_on_rank0", "print",
               # transformers' `logger.warning_advice`, torch's `warn_once` helpers
               "warning_advice", "warn_once"}
HOLE = "\x00"  # a formatted value while building; written as `{}`
PARAM = "\x03"  # in a wrapper's frame: where the text its caller passed goes
MIN_LITERAL_ALNUM = 10
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[sdiufrgexXcEGoa%]")
# A `str.format` field: `{}`, `{0}`, `{name}`, `{name!r:>{width}}` (one level of nested spec).
_FIELD = re.compile(r"\{([^{}!:]*)(?:![rsa])?(?::(?:[^{}]|\{[^{}]*\})*)?\}")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colour codes: the reader strips them from lines
# Where a stream's `write` prints to a log: `sys.stderr.write(…)`, `sys.stdout.write(…)`, `tqdm.write(…)`.
_STREAM_OWNERS = ("stderr", "stdout", "tqdm")

Subst = dict[str, str] | None  # a wrapper's parameter name -> PARAM, while reading the wrapper


def _walk(node: ast.AST) -> list[ast.AST]:
    """`ast.walk(node)` as a list, kept on the node: a file's tree and each function are walked by
    several readers (messages, aliases, imports, wrappers); one walk each is a fifth of the time."""
    nodes = node.__dict__.get("_walked")
    if nodes is None:
        nodes = node.__dict__["_walked"] = list(ast.walk(node))
    return nodes


def _value(node: ast.AST, subst: Subst) -> str:
    """A formatted value: the wrapper's parameter (its caller's text), else a hole."""
    if subst and isinstance(node, ast.Name) and node.id in subst:
        return subst[node.id]
    return HOLE


def _percent(text: str, values: list[str]) -> str:
    """`%`-formatting: each conversion takes the next value (a hole when there is none left)."""
    it = iter(values)

    def fill(m: re.Match[str]) -> str:
        return "%" if m.group(0) == "%%" else next(it, HOLE)

    return _PERCENT.sub(fill, text)


def _format(base: str, call: ast.Call, subst: Subst) -> str:
    """`str.format`: `{}`/`{0}`/`{name}` take the call's positional or keyword values; `{{ }}` stay braces."""
    positional = [_value(a, subst) for a in call.args]
    named = {k.arg: _value(k.value, subst) for k in call.keywords if k.arg}
    auto = iter(range(len(positional)))

    def fill(m: re.Match[str]) -> str:
        field = m.group(1).split(".", 1)[0].split("[", 1)[0]
        if field == "":
            i = next(auto, None)
            return positional[i] if i is not None else HOLE
        if field.isdigit():
            return positional[int(field)] if int(field) < len(positional) else HOLE
        return named.get(field, HOLE)

    raw = base.replace("{{", "\x01").replace("}}", "\x02")
    return _FIELD.sub(fill, raw).replace("\x01", "{").replace("\x02", "}")


def _pieces(node: ast.AST, subst: Subst = None) -> str | None:
    """The message text of an expression with HOLE for what is computed; None if not a string.
    With `subst`, a wrapper's parameter becomes PARAM wherever it is formatted in whole."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if subst and isinstance(node, ast.Name) and node.id in subst:
        return subst[node.id]
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)  # also `{x=}`'s `x=`: Python's parser keeps it as literal text
            elif (isinstance(v, ast.FormattedValue) and v.conversion in (-1, ord("s"))
                  and v.format_spec is None):
                out.append(_value(v.value, subst))
            else:
                out.append(HOLE)
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left, subst), _pieces(node.right, subst)
        if left is None and right is None:
            return None
        return (left if left is not None else HOLE) + (right if right is not None else HOLE)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _pieces(node.left, subst)
        if left is None:
            return None
        right = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        return _percent(left, [_value(v, subst) for v in right])
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"):
        base = _pieces(node.func.value, subst)
        if base is None:
            return None
        return _format(base, node, subst)
    return None


def _assigned(tree: ast.AST) -> dict[tuple[int, str], list[str]]:
    """Strings assigned to a plain name inside each function (`msg = f"…"` then `logger.error(msg)`),
    keyed by (the function's line, name)."""
    out: dict[tuple[int, str], list[str]] = {}
    for fn in _walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in _walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                text = _pieces(node.value)
                if text is not None:
                    out.setdefault((fn.lineno, node.targets[0].id), []).append(text)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                text = _pieces(node.value)
                if text is not None:  # msg += "…": its own line of the message, usually
                    out.setdefault((fn.lineno, node.target.id), []).append(text)
    return out


def _printer(node: ast.AST) -> str | None:
    """What printing callable an expression names: "print", "log" (a logger's method), or None.
    `print`, `logger.info`, `functools.partial(print, …)`, and either branch of
    `print if tp_rank == 0 else lambda *args, **kwargs: None` (bench_latency's `rank_print`)."""
    if isinstance(node, ast.Name) and node.id == "print":
        return "print"
    if isinstance(node, ast.Attribute) and node.attr in LOG_METHODS and node.attr != "print":
        owner = ast.unparse(node.value).lower()
        return "log" if "log" in owner else None
    if isinstance(node, ast.IfExp):
        return _printer(node.body) or _printer(node.orelse)
    if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).split(".")[-1] == "partial":
        return _printer(node.args[0])
    return None


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Names a file binds to a printing callable (`rank_print = print if … else …`, a parameter's
    default `rank_print=print`), with what they print like."""
    out: dict[str, str] = {}
    for node in _walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            kind = _printer(node.value)
            if kind:
                out[node.targets[0].id] = kind
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg, default in [*zip((a.posonlyargs + a.args)[::-1], a.defaults[::-1]),
                                 *zip(a.kwonlyargs, a.kw_defaults)]:
                kind = _printer(default) if default is not None else None
                if kind:
                    out[arg.arg] = kind
    return out


def _call_kind(node: ast.Call, aliases: dict[str, str]) -> tuple[str, int] | None:
    """How a call prints: ("print" | "log" | "write", index of its message argument), or None.
    A logger's `info/warning/…` (the owner's name says log), `logger.log(level, msg)`, `print`,
    a stream's `write`, or a name the file binds to one of these."""
    f = node.func
    if isinstance(f, ast.Name):
        if f.id == "print":
            return ("print", 0)
        if f.id in aliases:
            return (aliases[f.id], 0)
        return ("log", 0) if f.id in LOG_METHODS else None
    if not isinstance(f, ast.Attribute):
        return None
    if f.attr == "print":
        return ("print", 0)
    owner = ast.unparse(f.value).lower()
    if f.attr == "write":
        return ("write", 0) if owner.endswith(_STREAM_OWNERS) else None
    if f.attr == "log":
        return ("log", 1) if "log" in owner else None
    if f.attr in LOG_METHODS:
        return ("log", 0) if "log" in owner or "warnings" in owner else None
    return None


def _sep(node: ast.Call) -> str:
    """`print`'s separator: its `sep=` when that is a string literal, else a space."""
    for k in node.keywords:
        if k.arg == "sep" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return k.value.value
    return " "


def _call_texts(node: ast.Call, kind: str, index: int, subst: Subst = None,
                named: list[str] | None = None) -> list[str]:
    """The texts a printing call prints (several when its message is a name assigned several ways)."""
    args = node.args
    if kind == "print":
        sep = _sep(node)
        parts = [None if isinstance(a, ast.Starred) else _pieces(a, subst) for a in args]
        firsts = [parts[0]] if parts and parts[0] is not None else (named or [None])
        out = []
        for first in firsts:
            row = [first, *parts[1:]]
            if any(p is not None for p in row):
                out.append(sep.join(p if p is not None else HOLE for p in row))
        return out
    if len(args) <= index or isinstance(args[index], ast.Starred):
        return []
    text = _pieces(args[index], subst)
    texts = [text] if text is not None else (named or [])
    if kind == "log" and len(args) > index + 1:
        # logger.info("Registering %d cuda graph addresses", n): logging applies the `%` itself.
        rest = [HOLE if isinstance(a, ast.Starred) else _value(a, subst) for a in args[index + 1:]]
        texts = [_percent(t, rest) for t in texts]
    return texts


def _messages(tree: ast.AST, more: bool, assigned_too: bool = False,
              aliases: dict[str, str] | None = None) -> Iterator[str]:
    assigned = _assigned(tree) if more or assigned_too else {}
    aliases = _aliases(tree) if aliases is None else aliases
    owner_fn: dict[int, int] = {}
    for fn in _walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in _walk(fn):
                owner_fn[id(node)] = fn.lineno  # innermost wins: inner functions are walked later
    for node in _walk(tree):
        if more and isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            # An exception's message: printed after `XError: `, and often logged or echoed alone.
            text = _pieces(node.exc.args[0])
            if text is not None:
                yield text
            continue
        if not isinstance(node, ast.Call) or not node.args:
            continue
        how = _call_kind(node, aliases)
        if how is None:
            continue
        kind, index = how
        named = None
        if len(node.args) > index and isinstance(node.args[index], ast.Name):
            named = assigned.get((owner_fn.get(id(node), -1), node.args[index].id), [])
        yield from _call_texts(node, kind, index, named=named)


# --- Wrappers: functions that print what their caller passes (`print_warning_once(msg)`,
# `rank0_log(msg)`, `log_info_on_rank0(logger, msg)`, `def rank0_print(*args): print(*args)`).
# A call of one is a message like a logging call's; the wrapper may add text around it
# (`logger.info(f"[rank0] {msg}")`). Wrappers are found in every file of the package (they are
# imported across modules) and resolved once every file is read.

# A definition: ("fn", its module, its name), or ("method", its module, "Class.name").
Key = tuple[str, str, str]
# A call's callee as the calling file names it, the same shape: a module may re-export a function,
# a class inherit a method (`self.log_info(…)` of a stage whose base class defines log_info).
Ref = tuple[str, str, str]
Name = tuple[str, str]  # (module, name)
_MAX_DEPTH = 4  # wrappers of wrappers, re-exports of re-exports: deeper is not seen in practice
_MAX_BASES = 10  # a class's ancestors looked at for an inherited method


@dataclass
class Wrappers:
    """What the files read so far say about wrappers, and the calls that may reach one.
    A wrapper is known by its module and name: two modules' `_log(msg)` are different functions
    (cute_dsl_ptxas's `_log` prints `[ptxas] {msg}`, the dumper's its own text)."""

    # key -> (index of the forwarded parameter at the call site, or -1 for `*args`; frame; kind)
    found: dict[Key, set[tuple[int, str, str]]] = field(default_factory=dict)
    # (wrapper key, its parameter index, callee, the callee's argument index, frame)
    pending: set[tuple[Key, int, Ref, int, str]] = field(default_factory=set)
    # callee -> calls: each positional argument's text (None: not a string); print's separator
    calls: dict[Ref, set[tuple[tuple[str | None, ...], str]]] = field(default_factory=dict)
    # (module, name) a module imports from the package -> where from: `from .common import rank0_log`
    # in `sglang/srt/utils/__init__.py` makes `sglang.srt.utils.rank0_log` that function
    reexports: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)
    # module -> the modules it star-imports from the package (`from .common import *`)
    stars: dict[str, set[str]] = field(default_factory=dict)
    # class -> its bases as its file names them ((module, name), maybe a re-export)
    bases: dict[Name, set[Name]] = field(default_factory=dict)
    # every method defined (module, "Class.name"): a class's own method hides its bases'
    methods: set[Name] = field(default_factory=set)

    def _defined(self, module: str, name: str, where: set[Name] | dict[Name, object]) -> set[Name]:
        """Where a name a module holds is defined (in `where`): the module itself, or what it
        re-exports under that name, maybe through a star import."""
        out: set[Name] = set()
        todo = [(module, name, 0)]
        seen: set[Name] = set()
        while todo:
            mod, n, depth = todo.pop()
            if (mod, n) in seen:
                continue
            seen.add((mod, n))
            if (mod, n) in where:
                out.add((mod, n))
            if depth < _MAX_DEPTH:
                todo += [(m, x, depth + 1) for m, x in self.reexports.get((mod, n), ())]
                todo += [(m, n, depth + 1) for m in self.stars.get(mod, ())]
        return out

    def targets(self, ref: Ref) -> set[Key]:
        """The definitions a callee may be: a function (maybe re-exported), or the method of the
        calling class or of the nearest ancestor that defines it."""
        kind, module, name = ref
        if kind == "fn":
            return {("fn", m, n) for m, n in self._defined(module, name, self._found_fns())}
        cls, method = name.rsplit(".", 1)
        out: set[Key] = set()
        todo, seen = [(module, cls)], set()
        while todo and len(seen) < _MAX_BASES:
            mod, c = todo.pop(0)
            if (mod, c) in seen:
                continue
            seen.add((mod, c))
            own = (mod, f"{c}.{method}")
            if own in self.methods:
                if ("method", *own) in self.found:
                    out.add(("method", *own))
                continue  # defined here: its bases' method of that name is not the one called
            for base in self.bases.get((mod, c), ()):
                todo += sorted(self._defined(*base, self.bases))
        return out

    def _found_fns(self) -> set[Name]:
        if len(self.found) != getattr(self, "_fns_of", -1):
            self._fns = {(m, n) for kind, m, n in self.found if kind == "fn"}
            self._fns_of = len(self.found)
        return self._fns

    def resolve(self) -> Iterator[str]:
        """The messages of every call of a wrapper (a wrapper of a wrapper too)."""
        for _ in range(_MAX_DEPTH):
            grew = False
            for key, i, callee, j, frame in self.pending:
                for target in self.targets(callee):
                    for index, inner, kind in list(self.found.get(target, ())):
                        if index == j:
                            entry = (i, inner.replace(PARAM, frame), kind)
                            if entry not in self.found.setdefault(key, set()):
                                self.found[key].add(entry)
                                grew = True
            if not grew:
                break
        for callee, calls in self.calls.items():
            for target in self.targets(callee):
                yield from _wrapped(self.found[target], calls)


def _wrapped(entries: set[tuple[int, str, str]], calls: set[tuple[tuple[str | None, ...], str]]) -> Iterator[str]:
    """The messages a wrapper prints for its callers' arguments."""
    # A frame that says something itself (`get_bool_env_var({}) encountered unrecognized
    # value={}`) is a template already, read from the wrapper's own call with a hole for the
    # parameter: it matches every caller's text. Only a frame that is little more than the
    # parameter (`{}`, `[rank0] {}`) needs each caller's message.
    entries = {e for e in entries if _alnum(e[1]) < MIN_LITERAL_ALNUM}
    for args, sep in calls if entries else ():
        for index, frame, kind in entries:
            if index < 0:  # forwards *args: printed as that kind prints its arguments
                if kind == "print":
                    text = sep.join(a if a is not None else HOLE for a in args)
                elif args and args[0] is not None:
                    text = _percent(args[0], [HOLE] * (len(args) - 1))
                else:
                    continue
            elif index < len(args) and args[index] is not None:
                text = args[index]
                if kind == "log" and len(args) > index + 1:
                    # `log_info_on_rank0(logger, "Loaded %d layers", n)`: the logger applies the `%`
                    text = _percent(text, [HOLE] * (len(args) - index - 1))
            else:
                continue
            yield frame.replace(PARAM, text)


def _alnum(text: str) -> int:
    """Letters and digits outside the holes and the parameter: how much a template says."""
    return len(re.sub(r"[^A-Za-z0-9]", "", text))


def module_of(name: str, folder: str) -> tuple[str, bool]:
    """A source file's module (`sglang/srt/utils/common.py` -> `sglang.srt.utils.common`) and
    whether it is a package's `__init__`; a source tree's path is read from its package folder on."""
    parts = re.sub(r"\.py$", "", name).replace("\\", "/").split("/")
    if folder in parts:
        parts = parts[parts.index(folder):]
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


@dataclass(frozen=True)
class _Scope:
    """The names a file can call a wrapper by: its own functions, and functions and modules it
    imports from the package itself (`from sglang.srt.utils import rank0_log`, `from . import utils`)."""

    module: str
    local: frozenset[str]
    imported: dict[str, tuple[str, str]]  # name in the file -> (the module it is from, its own name)
    modules: dict[str, str]  # module aliases: `utils` of `utils.rank0_log(…)` -> `sglang.srt.utils`
    stars: frozenset[str]  # modules the file star-imports from the package
    package: str

    @classmethod
    def of(cls, tree: ast.AST, package: str, module: str, is_package: bool) -> _Scope:
        local = {fn.name for owner, fn in _functions(tree) if owner is None}
        imported: dict[str, tuple[str, str]] = {}
        modules: dict[str, str] = {}
        stars: set[str] = set()
        here = module.split(".") if is_package else module.split(".")[:-1]  # what `.` means
        for node in _walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == package):
                base = here[:len(here) - (node.level - 1)] if node.level else []
                source = ".".join(base + (node.module.split(".") if node.module else []))
                for a in node.names:
                    if a.name == "*":
                        stars.add(source)
                        continue
                    imported[a.asname or a.name] = (source, a.name)
                    modules[a.asname or a.name] = f"{source}.{a.name}"  # `from sglang.srt import utils`
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == package and a.asname:
                        modules[a.asname] = a.name
        return cls(module, frozenset(local), imported, modules, frozenset(stars), package)

    def name(self, node: ast.AST) -> Name | None:
        """Where a name the file uses comes from (a base class, a function): (module, name)."""
        if isinstance(node, ast.Name):
            if node.id in self.imported:
                return self.imported[node.id]
            return (self.module, node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            return (self.modules[node.value.id], node.attr)
        return None

    def callee(self, node: ast.Call, cls: str | None) -> Ref | None:
        """Which wrapper a call may be: a function the file defines or imports from the package, a
        method of its own class `cls` or its bases (`self.rank_print(…)`), a function of a package
        module (`utils.f(…)`)."""
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in self.local:
                return ("fn", self.module, f.id)
            if f.id in self.imported:
                return ("fn", *self.imported[f.id])
            return None
        if not isinstance(f, ast.Attribute):
            return None
        if isinstance(f.value, ast.Name):
            if f.value.id in ("self", "cls"):
                return ("method", self.module, f"{cls}.{f.attr}") if cls else None
            return ("fn", self.modules[f.value.id], f.attr) if f.value.id in self.modules else None
        owner = ast.unparse(f.value)
        return ("fn", owner, f.attr) if owner.split(".")[0] == self.package else None


def _functions(tree: ast.AST) -> Iterator[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a file with the class it is a method of (None: a function)."""
    for node in _walk(tree):
        body = node.body if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) else []
        for fn in body:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node.name if isinstance(node, ast.ClassDef) else None, fn


def _classes_of(tree: ast.AST) -> dict[int, str]:
    """Each node's innermost enclosing class (by the node's id): whose `self` a call means."""
    owner: dict[int, str] = {}
    for cls in _walk(tree):
        if isinstance(cls, ast.ClassDef):
            for node in _walk(cls):
                owner[id(node)] = cls.name  # innermost wins: inner classes are walked later
    return owner


def _forwards_varargs(node: ast.Call, index: int, vararg: str | None) -> bool:
    """Whether a printing call's message argument is the function's own `*args` (`print(*args)`)."""
    arg = node.args[index] if len(node.args) > index else None
    return (vararg is not None and isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name)
            and arg.value.id == vararg)


def read_wrappers(tree: ast.AST, into: Wrappers, package: str, name: str,
                  aliases: dict[str, str] | None = None) -> None:
    """Record the file's wrappers (functions whose parameter reaches a printing call, maybe through
    another wrapper) and every call that passes a string to a function it may be, for `Wrappers.resolve`.
    `name` is the file's path in the wheel (its module)."""
    aliases = _aliases(tree) if aliases is None else aliases
    scope = _Scope.of(tree, package, *module_of(name, package))
    for alias, (source, fn_name) in scope.imported.items():
        into.reexports.setdefault((scope.module, alias), set()).add((source, fn_name))
    if scope.stars:
        into.stars.setdefault(scope.module, set()).update(scope.stars)
    owner = _classes_of(tree)
    for node in _walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = into.bases.setdefault((scope.module, node.name), set())
            bases.update(b for b in map(scope.name, node.bases) if b is not None)
    for cls, fn in _functions(tree):
        key: Key = ("fn", scope.module, fn.name) if cls is None else ("method", scope.module, f"{cls}.{fn.name}")
        if cls is not None:
            into.methods.add(key[1:])
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if cls is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        vararg = fn.args.vararg.arg if fn.args.vararg else None
        for node in _walk(fn):
            if not isinstance(node, ast.Call):
                continue
            how = _call_kind(node, aliases)
            if how is not None and _forwards_varargs(node, how[1], vararg):
                into.found.setdefault(key, set()).add((-1, PARAM, how[0]))
                continue
            callee = scope.callee(node, owner.get(id(node))) if how is None else None
            if how is None and callee is None:
                continue
            for i, param in enumerate(params):
                subst = {param: PARAM}
                if how is not None:
                    for text in _call_texts(node, how[0], how[1], subst):
                        if PARAM in text:
                            into.found.setdefault(key, set()).add((i, text, how[0]))
                    continue
                for j, arg in enumerate(node.args):
                    text = _pieces(arg, subst)
                    if text is not None and PARAM in text and callee is not None:
                        into.pending.add((key, i, callee, j, text))
    for node in _walk(tree):
        if isinstance(node, ast.Call) and node.args:
            callee = scope.callee(node, owner.get(id(node)))
            if callee is not None:
                args = tuple(None if isinstance(a, ast.Starred) else _pieces(a) for a in node.args)
                if any(a is not None for a in args):
                    into.calls.setdefault(callee, set()).add((args, _sep(node)))


def _templates(text: str) -> Iterator[str]:
    for line in _ANSI.sub("", text).split("\n"):
        line = line.strip()
        line = re.sub(HOLE + "+", HOLE, line)
        literal = re.sub(r"[^A-Za-z0-9]", "", line.replace(HOLE, ""))
        if len(literal) >= MIN_LITERAL_ALNUM:
            yield line.replace("{", "{{").replace("}", "}}").replace(HOLE, "{}")


PY_SUFFIXES = (".py",)
# C/C++ sources and headers a wheel ships as text (JIT-compiled at run time: deep_gemm's and
# flashinfer's include/ folders); their printf / std::cerr output reaches the server's log.
NATIVE_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".cpp", ".cc", ".inl")


def _sources(path: Path, under: tuple[str, ...] = ("sglang/",),
             suffixes: tuple[str, ...] = PY_SUFFIXES) -> Iterator[tuple[str, str]]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.endswith(suffixes) and name.startswith(under):
                    yield name, z.read(name).decode("utf-8", "replace")
    elif path.name.endswith(".tar.gz"):
        # An sdist (a release with no wheel on the index): `name-1.0/flashinfer/…`; its top folder
        # is dropped so that the same prefixes select the same files.
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                name = member.name.split("/", 1)[-1]
                if member.isfile() and name.endswith(suffixes) and name.startswith(under):
                    fh = tar.extractfile(member)
                    if fh is not None:
                        yield name, fh.read().decode("utf-8", "replace")
    else:
        for p in sorted(path.rglob("*")):
            if p.is_file() and p.name.endswith(suffixes):
                yield str(p), p.read_text("utf-8", "replace")


# --- Native sources: what C/C++ code prints with printf/fprintf and iostreams.
# A small lexer, not a compiler: comments are dropped, string literals read with their escapes,
# and a print statement's literal text kept with HOLE for every value (`%d`, `<< x`, a macro).
_C_TOKEN = re.compile(
    r'//[^\n]*|/\*.*?\*/'  # comments
    r'|(?:u8|[uUL])?"(?:\\.|[^"\\\n])*"'  # a string literal
    r"|'(?:\\.|[^'\\\n])+'"  # a character literal
    r"|<<|::|[A-Za-z_]\w*|\d[\w.]*|\S", re.S)
_C_PERCENT = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|j|z|t|L|q)?[diouxXeEfFgGaAcspn%]")
_C_ESCAPES = {"n": "\n", "t": "\t", "r": "", '"': '"', "'": "'", "\\": "\\", "0": "", "a": "", "e": "\x1b"}
_C_PRINTF = {"printf", "fprintf", "dprintf", "std::printf", "std::fprintf"}  # (fprintf's stream first)
_C_STREAMS = {"std::cerr", "std::cout", "std::clog", "cerr", "cout", "clog"}
_C_NEWLINE = {"std::endl", "endl", "'\\n'", "std::flush"}


def _c_unescape(m: re.Match[str]) -> str:
    e = m.group(1)
    if e[0] in "01234567" or (e[0] == "x" and len(e) > 1):
        return ""  # a byte given by number: a colour code's ESC, a NUL; not text a line shows
    return _C_ESCAPES.get(e, e)


def _c_string(literal: str) -> str:
    """A C string literal's text, its escapes applied."""
    body = literal[literal.index('"') + 1:-1]
    return re.sub(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", _c_unescape, body)


def _c_tokens(src: str) -> list[str]:
    toks = []
    for m in _C_TOKEN.finditer(src.replace("\\\n", " ")):  # a macro's line continuations
        t = m.group(0)
        if not t.startswith(("//", "/*")):
            toks.append(t)
    return toks


def _c_qualified(toks: list[str], i: int) -> tuple[str, int]:
    """`std::cerr` from its three tokens; the name and the index after it."""
    name = toks[i]
    while i + 2 < len(toks) and toks[i + 1] == "::" and re.match(r"[A-Za-z_]", toks[i + 2]):
        name += "::" + toks[i + 2]
        i += 2
    return name, i + 1


def _c_args(toks: list[str], i: int) -> tuple[list[list[str]], int]:
    """The arguments of a call whose `(` is at `i`: each a token list; the index after `)`."""
    args: list[list[str]] = [[]]
    depth = 0
    while i < len(toks):
        t = toks[i]
        if t in "([{":
            depth += 1
            if depth > 1:
                args[-1].append(t)
        elif t in ")]}":
            depth -= 1
            if depth == 0:
                return args, i + 1
            args[-1].append(t)
        elif t == "," and depth == 1:
            args.append([])
        elif t == ";" and depth <= 1:
            break  # unbalanced: a macro fragment
        else:
            args[-1].append(t)
        i += 1
    return args, i


# <inttypes.h>'s conversion macros between a format's literals: `"%" PRIu64` is `%llu`.
_C_PRI = re.compile(r"(?:PRI|SCN)([diouxX])(?:8|16|32|64|LEAST\d+|FAST\d+|MAX|PTR)")


def _c_text(expr: list[str], printf: bool) -> str:
    """The printed text of an argument: its string literals (adjacent ones joined), HOLE for the rest."""
    out = []
    for t in expr:
        pri = _C_PRI.fullmatch(t) if printf else None
        if t.startswith(('"', 'u8"', 'u"', 'U"', 'L"')):
            out.append(_c_string(t))
        elif pri:
            out.append("ll" + pri.group(1))  # completes the `%` its literal ends with
        elif not out or out[-1] != HOLE:
            out.append(HOLE)  # a value, or another macro between literals
    text = "".join(out)
    return _C_PERCENT.sub(lambda m: "%" if m.group(0) == "%%" else HOLE, text) if printf else text


def _native_messages(src: str) -> Iterator[str]:
    toks = _c_tokens(src)
    i = 0
    while i < len(toks):
        if not re.match(r"[A-Za-z_]", toks[i]):
            i += 1
            continue
        name, j = _c_qualified(toks, i)
        if name in _C_PRINTF and j < len(toks) and toks[j] == "(":
            args, i = _c_args(toks, j)
            fmt = args[1] if name.endswith(("fprintf", "dprintf")) and len(args) > 1 else args[0]
            if fmt and fmt[0].startswith('"'):  # a literal format (not a variable's)
                yield _c_text(fmt, printf=True)
            continue
        if name in _C_STREAMS and j < len(toks) and toks[j] == "<<":
            parts: list[str] = []
            piece: list[str] = []
            depth = 0
            j += 1
            while j < len(toks) and not (toks[j] == ";" and depth == 0):
                t = toks[j]
                depth += t in "([{"
                depth -= t in ")]}"
                if t == "<<" and depth == 0:
                    parts.append(" ".join(piece))
                    piece = []
                else:
                    piece.append(t)
                j += 1
            parts.append(" ".join(piece))
            text = []
            for part in parts:
                if part in _C_NEWLINE:
                    text.append("\n")
                elif re.fullmatch(r'(?:(?:u8|[uUL])?"(?:\\.|[^"\\])*"\s*)+', part):
                    text.append(_c_text(_c_tokens(part), printf=False))
                elif not text or text[-1] != HOLE:
                    text.append(HOLE)
            yield "".join(text)
            i = j
            continue
        i = j
    return


def main(paths: list[str], more: bool = False, package: str = "sglang", under: tuple[str, ...] = (),
         skip: tuple[str, ...] = (), assigned: bool = False, tests: bool = False, native: bool = False,
         native_under: tuple[str, ...] = ()) -> None:
    folder = package.replace("-", "_")
    prefixes = under or (folder + "/",)
    out: set[str] = set()
    read: set[tuple[str, int]] = set()
    wrappers = Wrappers()
    for arg in paths:
        suffixes = PY_SUFFIXES + NATIVE_SUFFIXES if native else PY_SUFFIXES
        for _name, src in _sources(Path(arg), prefixes + native_under, suffixes):
            is_native = _name.endswith(NATIVE_SUFFIXES)
            if is_native and native_under and not _name.startswith(native_under):
                continue
            if not is_native and not _name.startswith(prefixes) and Path(arg).suffix in (".whl", ".gz"):
                continue  # a Python file of a --native-under folder: not the package's
            if not tests and ("/test/" in _name or "/tests/" in _name):
                continue  # test helpers print for their own runs, not for a server's log
            if skip and _name.startswith(skip):
                continue
            if (_name, hash(src)) in read:
                continue  # the same file in another release: its messages are in already
            read.add((_name, hash(src)))  # (a file moved elsewhere is another module's: read again)
            if is_native:
                for msg in _native_messages(src):
                    out.update(_templates(msg))
                continue
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            aliases = _aliases(tree)
            for msg in _messages(tree, more, assigned, aliases):
                out.update(_templates(msg))
            read_wrappers(tree, wrappers, folder, _name, aliases)
    for msg in wrappers.resolve():
        out.update(_templates(msg))
    what = "SGLang" if folder == "sglang" else package
    print(f"# {what} log-message templates (grammars/source-messages/extract.py); `{{}}` = a formatted value.")
    print("# From: " + ", ".join(Path(p).name for p in paths))
    for t in sorted(out):
        print(t)


def _options(args: list[str]) -> tuple[list[str], dict[str, object]]:
    paths: list[str] = []
    opts: dict[str, object] = {"more": False, "package": "sglang", "under": (), "skip": (), "assigned": False,
                               "tests": False, "native": False, "native_under": ()}
    it = iter(args)
    for a in it:
        if a in ("--more", "--assigned", "--tests", "--native"):
            opts[a[2:]] = True
        elif a == "--package":
            opts["package"] = next(it)
        elif a in ("--under", "--skip", "--native-under"):
            key = a[2:].replace("-", "_")
            opts[key] = (*opts[key], next(it))  # type: ignore[misc]
        else:
            paths.append(a)
    return paths, opts


if __name__ == "__main__":
    _paths, _opts = _options(sys.argv[1:])
    main(_paths, **_opts)  # type: ignore[arg-type]
