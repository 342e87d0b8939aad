"""The `check` configuration: `[tool.logdiag]` in the nearest pyproject.toml (or a `--config` file), validated.

```toml
[tool.logdiag]
select = ["memory", "SPEC"]          # rule names, codes, code prefixes or families ("ALL" = every rule)
ignore = ["deprecated-entrypoint"]
fail-on = "warning"                  # error | warning | info | never
baseline = "ci/logdiag-baseline.json"   # relative to this file

[tool.logdiag.severity]              # per-rule severity overrides (name or code)
kv-cache-saturated = "error"

[tool.logdiag.thresholds.spec-low-acceptance]   # per-rule thresholds of the metric rules
min_accept_len = 1.8
```

A `logdiag.toml` holds the same keys at its top level, or the same `[tool.logdiag]` table as a
pyproject.toml (either, not both). Discovery
walks from the working directory upward, stopping at the repository root (`.git`) or the home
directory (with neither above, only the working directory counts), and takes the first
`logdiag.toml`, or the first `pyproject.toml` that has a `[tool.logdiag]` table. Every problem is a `ConfigError` whose
message names the file and the bad key; the CLI turns it into exit code 2.
"""

from __future__ import annotations

import ast
import inspect
import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from logparse.model.events import SEVERITY_ORDER, Severity

__all__ = [
    "FAIL_ON",
    "Config",
    "ConfigError",
    "find_config",
    "load_config",
    "severity_rank",
    "split_selectors",
    "threshold_keys",
    "validate_selectors",
]

FAIL_ON = ("error", "warning", "info", "never")
SEVERITIES = tuple(str(s) for s in Severity)  # most severe first (model.events.SEVERITY_ORDER)
# Higher = more severe, for the --fail-on threshold; derived from the one severity order.
_RANK = {str(s): len(SEVERITY_ORDER) - 1 - i for s, i in SEVERITY_ORDER.items()}
TOP_KEYS = ("baseline", "fail-on", "ignore", "select", "severity", "thresholds")
_CODE_PREFIX = re.compile(r"^[A-Za-z]+\d*$")


class ConfigError(Exception):
    """Invalid configuration or selector: str() is one line naming the file and the bad key."""


def severity_rank(severity: str | Severity) -> int:
    """error 2 > warning 1 > info 0."""
    return _RANK[str(severity)]


def fails(severity: str | Severity, fail_on: str) -> bool:
    """Whether a finding of this severity is at or above the --fail-on level."""
    return fail_on != "never" and severity_rank(severity) >= _RANK[fail_on]


def split_selectors(values: Iterable[str]) -> list[str]:
    """Repeatable options that also take comma lists: ('a,b', 'c') → ['a', 'b', 'c']."""
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def _rules() -> list[Any]:
    from logparse.rules import all_rules

    return all_rules()


def _lookup(key: str) -> Any:
    from logparse.rules import lookup

    return lookup(key)


def _families() -> tuple[str, ...]:
    from logparse.rules.registry import FAMILIES

    return FAMILIES


def selector_matches(selector: str, name: str, code: str, family: str) -> bool:
    """A selector is a rule name, a code, a code prefix ('MEM', 'MEM00'), a family or 'ALL'."""
    s = selector.strip()
    if s.upper() == "ALL" or s == name or s == family or s.upper() == code.upper():
        return True
    return bool(_CODE_PREFIX.match(s)) and code.upper().startswith(s.upper())


def validate_selectors(selectors: Iterable[str], where: str) -> None:
    """Every selector must name something that exists (else ConfigError naming it)."""
    rules = _rules()
    for s in selectors:
        if s.upper() == "ALL" or s in _families():
            continue
        if any(selector_matches(s, r.name, r.code, r.family) for r in rules):
            continue
        raise ConfigError(f"{where}: unknown rule, code or family '{s}' (see: logdiag rules)")


@cache
def _module_thresholds(module_name: str) -> dict[tuple[str | None, int, int], dict[str, Any]]:
    """Scan a rule module for `ctx.threshold(<rule>, "<key>", <default>)` calls.

    Returns {(rule name or None, first line, last line of the enclosing function): {key: default}};
    a None rule name means "the rule whose function encloses the call" (the rule name was a
    variable)."""
    import importlib

    out: dict[tuple[str | None, int, int], dict[str, Any]] = {}
    try:
        source = inspect.getsource(importlib.import_module(module_name))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError, ImportError):
        return out
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if not ((isinstance(fn, ast.Attribute) and fn.attr == "threshold")
                or (isinstance(fn, ast.Name) and fn.id == "threshold")):
            continue
        args: list[ast.expr | None] = list(node.args[:3])
        args += [None] * (3 - len(args))
        for kw in node.keywords:
            if kw.arg in ("rule_name", "rule"):
                args[0] = kw.value
            elif kw.arg == "key":
                args[1] = kw.value
            elif kw.arg == "default":
                args[2] = kw.value
        rule_arg, key_arg, default_arg = args
        if not (isinstance(key_arg, ast.Constant) and isinstance(key_arg.value, str)):
            continue
        try:
            default = ast.literal_eval(default_arg) if default_arg is not None else None
        except ValueError:
            default = None
        if isinstance(rule_arg, ast.Constant) and isinstance(rule_arg.value, str):
            slot: tuple[str | None, int, int] = (rule_arg.value, 0, 0)
        else:
            enclosing = [f for f in funcs if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
            if not enclosing:
                continue
            outer = min(enclosing, key=lambda f: f.lineno)  # the module-level function: the rule
            start = min([outer.lineno] + [d.lineno for d in outer.decorator_list])
            slot = (None, start, outer.end_lineno or outer.lineno)
        out.setdefault(slot, {})[key_arg.value] = default
    return out


def threshold_keys(rule: Any) -> dict[str, Any]:
    """The configurable thresholds of a rule and their defaults.

    A rule may declare them (`rule.thresholds`, a mapping); otherwise they are read from the
    `ctx.threshold(...)` calls in the rule's module that name it (or sit inside its function)."""
    declared = getattr(rule, "thresholds", None)
    if isinstance(declared, Mapping):
        return dict(declared)
    fn = getattr(rule, "fn", None)
    module = getattr(fn, "__module__", None)
    if not module:
        return {}
    code = getattr(fn, "__code__", None)
    first = code.co_firstlineno if code is not None else -1  # the first decorator's line
    found: dict[str, Any] = {}
    for (name, a, b), keys in _module_thresholds(module).items():
        if name == rule.name or (name is None and a <= first <= b):
            found.update(keys)
    return found


@dataclass
class Config:
    """What `check` reads from configuration; CLI options are merged in by the command."""

    select: list[str] = field(default_factory=list)  # empty: every rule
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None  # None: the command's default
    severity: dict[str, Severity] = field(default_factory=dict)  # rule name → severity
    thresholds: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule name → {key: value}
    baseline: str | None = None  # resolved against the config file's directory
    source: str | None = None  # the file it came from

    def selects(self, name: str, code: str, family: str) -> bool:
        """Whether a rule (or a finding of it) is in scope after select / ignore; ignore wins."""
        if self.select and not any(selector_matches(s, name, code, family) for s in self.select):
            return False
        return not any(selector_matches(s, name, code, family) for s in self.ignore)

    def severity_for(self, name: str, code: str, default: Severity | str) -> Severity:
        """The severity override of a rule, else its own."""
        if name in self.severity:
            return self.severity[name]
        for key, sev in self.severity.items():
            if key.upper() == code.upper():
                return sev
        return Severity(str(default))


# A configuration is a few hundred bytes; reading is bounded (a wrong path such as /dev/zero
# must be an error, not gigabytes of memory).
MAX_CONFIG_BYTES = 1 << 20


def _read_toml(p: Path) -> dict[str, Any]:
    """Parse a TOML file; every problem (unreadable, too large, invalid, nested too deeply,
    an integer over Python's digit limit) is a ConfigError naming the file."""
    try:
        with p.open("rb") as f:
            if stat.S_ISCHR(os.fstat(f.fileno()).st_mode):
                raise ConfigError(f"cannot read configuration {p}: a character device, not a file")
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"cannot read configuration {p}: No such file or directory") from None
    except IsADirectoryError:
        raise ConfigError(f"cannot read configuration {p}: Is a directory") from None
    except OSError as err:
        raise ConfigError(f"cannot read configuration {p}: {err.strerror or err}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"invalid configuration in {p}: larger than {MAX_CONFIG_BYTES >> 20} MiB")
    import tomllib  # here, not at import: `check` without a configuration file never parses TOML

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ConfigError(f"invalid configuration in {p}: not UTF-8 ({err.reason})") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"invalid configuration in {p}: not valid TOML ({err})") from None
    except RecursionError:
        raise ConfigError(f"invalid configuration in {p}: nested too deeply") from None
    except ValueError as err:  # e.g. an integer of thousands of digits
        raise ConfigError(f"invalid configuration in {p}: {err}") from None


def search_dirs(start: str | os.PathLike[str] | None = None) -> list[Path]:
    """The directories discovery looks in: from `start` (default: the working directory) up to
    and including the repository root (a directory with `.git`) or the home directory. With
    neither above it (e.g. under /tmp), only `start` itself: a `logdiag.toml` that someone left
    in a shared ancestor must not silently change the gate."""
    here = Path(start or os.getcwd()).resolve()
    try:
        home: Path | None = Path.home().resolve()
    except (RuntimeError, KeyError, OSError):
        home = None
    out: list[Path] = []
    for d in (here, *here.parents):
        out.append(d)
        if d == home or (d / ".git").exists():
            return out
    return [here]


def find_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The first logdiag.toml, or pyproject.toml with [tool.logdiag], in `search_dirs(start)`."""
    for d in search_dirs(start):
        own = d / "logdiag.toml"
        if own.is_file():
            return own
        py = d / "pyproject.toml"
        if py.is_file():
            try:
                doc = _read_toml(py)
            except ConfigError:
                continue  # an unrelated broken pyproject is not ours to complain about
            if isinstance(doc.get("tool"), dict) and "logdiag" in doc["tool"]:
                return py
    return None


def _str_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return split_selectors([value])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return split_selectors(value)


def _rule_name(key: str, where: str) -> str:
    r = _lookup(key)
    if r is None:
        raise ConfigError(f"{where}: unknown rule '{key}' (see: logdiag rules)")
    return str(r.name)


def parse_config(table: Mapping[str, Any], source: str, prefix: str) -> Config:
    """Validate one `[tool.logdiag]` table (or a logdiag.toml document) into a Config."""
    cfg = Config(source=source)

    def key_of(*parts: str) -> str:
        return ".".join(p for p in (prefix, *parts) if p)

    def bad(msg: str) -> ConfigError:
        return ConfigError(f"invalid configuration in {source}: {msg}")

    if not isinstance(table, Mapping):
        raise bad(f"'{prefix}' must be a table")
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-")
        where = key_of(raw_key)
        if key not in TOP_KEYS:
            raise bad(f"unknown key '{where}' (expected one of: {', '.join(TOP_KEYS)})")
        try:
            if key in ("select", "ignore"):
                items = _str_list(value, f"'{where}'")
                validate_selectors(items, f"'{where}'")
                setattr(cfg, key, items)
            elif key == "fail-on":
                if value not in FAIL_ON:
                    raise ConfigError(f"'{where}' must be one of {', '.join(FAIL_ON)}, not {value!r}")
                cfg.fail_on = value
            elif key == "baseline":
                if not isinstance(value, str) or not value:
                    raise ConfigError(f"'{where}' must be a file path (a string)")
                cfg.baseline = str(Path(source).parent / value) if not os.path.isabs(value) else value
            elif key == "severity":
                if not isinstance(value, Mapping):
                    raise ConfigError(f"'{where}' must be a table of rule = \"error\" | \"warning\" | \"info\"")
                for rkey, sev in value.items():
                    rwhere = f"'{key_of(raw_key, rkey)}'"
                    name = _rule_name(rkey, rwhere)
                    if sev not in SEVERITIES:
                        raise ConfigError(f"{rwhere} must be one of {', '.join(SEVERITIES)}, not {sev!r}")
                    cfg.severity[name] = Severity(sev)
            elif key == "thresholds":
                if not isinstance(value, Mapping):
                    raise ConfigError(f"'{where}' must be a table of [{where}.<rule>] tables")
                for rkey, keys in value.items():
                    rwhere = key_of(raw_key, rkey)
                    name = _rule_name(rkey, f"'{rwhere}'")
                    if not isinstance(keys, Mapping):
                        raise ConfigError(f"'{rwhere}' must be a table of threshold = value")
                    known = threshold_keys(_lookup(name))
                    for tkey, tval in keys.items():
                        twhere = f"'{key_of(raw_key, rkey, tkey)}'"
                        if tkey not in known:
                            takes = ", ".join(sorted(known)) or "no thresholds"
                            raise ConfigError(f"unknown threshold {twhere} ({name} takes: {takes})")
                        _check_type(tval, known[tkey], twhere)
                        cfg.thresholds.setdefault(name, {})[tkey] = tval
        except ConfigError as err:
            msg = str(err)
            raise (err if msg.startswith("invalid configuration") else bad(msg)) from None
    return cfg


# Numeric thresholds must be finite and not negative (every threshold is a count, a duration, a
# length or a share); shares (defaults in (0, 1)) stay within [0, 1]; counts are integers.
_MAX_THRESHOLD = 1e12


def _check_type(value: Any, default: Any, where: str) -> None:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        want = "true or false"
    elif isinstance(default, (int, float)):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        want = "a number"
        if ok:
            _check_number(value, default, where)
    elif isinstance(default, str):
        ok = isinstance(value, str)
        want = "a string"
    else:
        ok = isinstance(value, (int, float, str, bool, list))
        want = "a number, string, boolean or list"
    if not ok:
        raise ConfigError(f"{where} must be {want}, not {value!r}")


def _check_number(value: float, default: float, where: str) -> None:
    # int vs float comparison is exact (no overflow for a 4,000-digit integer); nan fails isfinite.
    if abs(value) > _MAX_THRESHOLD or (isinstance(value, float) and not math.isfinite(value)):
        raise ConfigError(f"{where} must be a finite number, not {value!r}")
    if value < 0 <= default:
        raise ConfigError(f"{where} must be 0 or more, not {value!r}")
    if isinstance(default, int) and not isinstance(value, int) and not float(value).is_integer():
        raise ConfigError(f"{where} must be a whole number, not {value!r}")
    if isinstance(default, float) and 0 < default < 1 and value > 1:
        raise ConfigError(f"{where} is a share: it must be between 0 and 1, not {value!r}")


def load_config(path: str | os.PathLike[str] | None = None, *, cwd: str | os.PathLike[str] | None = None) -> Config:
    """Read `--config FILE` (a pyproject.toml or a logdiag.toml), else the discovered file,
    else the defaults. Raises ConfigError."""
    if path is None:
        found = find_config(cwd)
        if found is None:
            return Config()
        path = found
    p = Path(path)
    doc = _read_toml(p)
    if p.name == "pyproject.toml":
        tool = doc.get("tool", {})
        table = tool.get("logdiag") if isinstance(tool, dict) else None
        if table is None:
            return Config(source=str(p))  # an explicit pyproject without our table: the defaults
        return parse_config(table, str(p), "tool.logdiag")
    # A logdiag.toml takes the keys at its top level, or the README's [tool.logdiag] table (the
    # same text as in a pyproject.toml, copied over); not both, which would leave it unclear
    # which one counts.
    tool = doc.get("tool")
    if isinstance(tool, dict) and "logdiag" in tool:
        others = sorted(k for k in doc if k != "tool") + sorted(f"tool.{k}" for k in tool if k != "logdiag")
        if others:
            raise ConfigError(f"invalid configuration in {p}: [tool.logdiag] and top-level keys "
                              f"together ({', '.join(others)}); use one of them")
        return parse_config(tool["logdiag"], str(p), "tool.logdiag")
    return parse_config(doc, str(p), "")
