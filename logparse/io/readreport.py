"""What reading one source reports: `ReadReport` (repairs, counters, damage) and `InputError` (fatal)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logparse.io.wrappers import Wrapper

__all__ = ["MAX_FLAGGED", "InputError", "Line", "ReadReport", "os_message"]

# Noteworthy lines kept per read (and per merged read: the first ones in file order, so the list
# is the same whatever --jobs is); the counters carry the totals.
MAX_FLAGGED = 200


class InputError(Exception):
    """Bad input: its str() is one clear line for the user, e.g. 'cannot read run.log: Permission denied'."""



def os_message(path: str, err: OSError) -> str:
    """'cannot read PATH: reason' for an OSError."""
    reason = err.strerror or type(err).__name__
    return f"cannot read {path}: {reason}"


@dataclass(slots=True)
class ReadReport:
    """What reading one source found and repaired. Filled while `read_lines` iterates."""

    path: str
    physical_lines: int = 0
    lines: int = 0
    bytes_read: int = 0
    bad_utf8: int = 0
    nul_bytes: int = 0
    crlf: int = 0
    cr_segments: int = 0
    glued_splits: int = 0
    ansi_stripped: int = 0
    wrapped: int = 0
    long_lines: int = 0
    # Numeric fields the grammar expected but could not use (inf, nan, 400 digits…): the line is
    # kept, the field left out (logparse.model.numbers); counted by the pipeline.
    damaged_numbers: int = 0
    flagged: list[tuple[int, str]] = field(default_factory=list)
    missing_final_newline: bool = False
    damaged: str | None = None

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly copy (tuples become lists)."""
        return {
            "path": self.path,
            "physical_lines": self.physical_lines,
            "lines": self.lines,
            "bytes_read": self.bytes_read,
            "bad_utf8": self.bad_utf8,
            "nul_bytes": self.nul_bytes,
            "crlf": self.crlf,
            "cr_segments": self.cr_segments,
            "glued_splits": self.glued_splits,
            "ansi_stripped": self.ansi_stripped,
            "wrapped": self.wrapped,
            "long_lines": self.long_lines,
            "damaged_numbers": self.damaged_numbers,
            "flagged": [[no, reason] for no, reason in self.flagged],
            "missing_final_newline": self.missing_final_newline,
            "damaged": self.damaged,
        }

    def flag(self, line_no: int, reason: str) -> None:
        """Record a noteworthy line; the list is capped, the counters carry the totals."""
        if len(self.flagged) < MAX_FLAGGED:
            self.flagged.append((line_no, reason))

    def merge(self, other: ReadReport) -> None:
        """Add the report of the next byte range of the same file (ranges merged in file order)."""
        # By type, so a counter added later merges without touching this method.
        for name in self.__slots__:  # type: ignore[attr-defined]
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "path":
                continue
            if isinstance(mine, bool):
                setattr(self, name, mine or theirs)
            elif isinstance(mine, int):
                setattr(self, name, mine + theirs)
            elif isinstance(mine, list):
                mine.extend(theirs[: max(0, MAX_FLAGGED - len(mine))])
            elif mine is None and theirs is not None:
                setattr(self, name, theirs)  # damage: the first range's note wins


Line = tuple[int, str, Wrapper | None]
