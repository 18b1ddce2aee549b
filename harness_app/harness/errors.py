"""Errors that point at the field that is wrong.

The console shows every problem next to the field that caused it, so errors carry a *path*
(``skills[2].name``, ``tools[0].input_schema.properties.x``, ``hooks[0].condition``) and a
message that says what was wrong and what is allowed. Validation collects all problems at once
instead of stopping at the first, so an operator can fix a whole edit in one pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One problem at one place. ``path`` uses ``a[0].b.c`` notation; "" means the whole."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class HarnessValidationError(Exception):
    """A harness (or its serialised form) was rejected; ``errors`` lists every reason."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        self.errors: list[FieldError] = list(errors)
        super().__init__(self._summary())

    def _summary(self) -> str:
        if not self.errors:
            return "invalid harness"
        if len(self.errors) == 1:
            return str(self.errors[0])
        lines = [f"{len(self.errors)} problems:"]
        lines.extend(f"- {error}" for error in self.errors)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self._summary()


class ArchiveError(HarnessValidationError):
    """A harness archive was rejected before its content was looked at (unsafe or malformed).

    ``FieldError.path`` is the archive member name ("" for the archive as a whole).
    """


def join_path(base: str, *parts: str | int) -> str:
    """Extend ``base`` with keys (``.key``) and indices (``[i]``): ``join_path("a", 0, "b")``."""
    path = base
    for part in parts:
        if isinstance(part, int):
            path = f"{path}[{part}]"
        elif path and not part.startswith("["):
            path = f"{path}.{part}"
        else:
            path = f"{path}{part}"
    return path


def prefixed(errors: Iterable[FieldError], prefix: str) -> list[FieldError]:
    """Re-root errors found in a sub-document under ``prefix``."""
    return [FieldError(join_path(prefix, e.path) if e.path else prefix, e.message) for e in errors]
