"""The checking machinery of the exercises page: what an exercise and its parts are, how a
typed answer is judged, and the number formats the worked solutions share.

Pure Python: no Streamlit here, so the page stays thin and the catalogue is testable.
"""

from __future__ import annotations

from klrl_app import fmt

import math
from dataclasses import dataclass
from collections.abc import Callable, Sequence

CORRECT = "correct"
NOT_YET = "not yet"


# --------------------------------------------------------------------------- the structures


@dataclass(frozen=True)
class Trap:
    """A likely wrong answer and the hint that fits it."""

    value: Callable[[], float]
    hint: str


@dataclass(frozen=True)
class Part:
    label: str  # starts with the exercise number, e.g. "12.4 · ..."
    answer: Callable[[], float]  # computed by klrl_core on every call
    digits: int  # decimals the reader is asked for
    hint: str  # the step most likely missed; never the number
    tol: float | None = None  # accepted distance; default half a unit in the last digit
    traps: tuple[Trap, ...] = ()
    unit: str = ""

    @property
    def tolerance(self) -> float:
        return 0.5 * 10.0**-self.digits if self.tol is None else self.tol

    def shown(self, value: float | None = None) -> str:
        """A value (the answer by default) written to the digits asked for."""
        x = self.answer() if value is None else value
        text = f"{x:.{self.digits}f}"
        return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


@dataclass(frozen=True)
class Exercise:
    id: str  # "12.1"
    source: str  # which chapter of which book
    title: str
    statement: str  # markdown, in this app's words
    parts: tuple[Part, ...]
    solution: Callable[[], str]  # markdown; every number from klrl_core
    link: str  # page path and query of the live view, e.g. "tilt?beta=1"
    illustrates: str = ""  # for the Chapter 28 instances: what this instance shows
    link_note: str = ""  # what to look at (or do) on the linked page, when the
    # link alone cannot show the whole instance


def check(part: Part, value) -> tuple[str, str]:
    """("correct", "") when ``value`` is within the part's tolerance of the answer, otherwise
    ("not yet", hint): the hint of a recognised wrong answer, a sign hint, or the part's hint."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return NOT_YET, "Type a number first."
    if not math.isfinite(x):
        return NOT_YET, "Type a finite number."
    answer = part.answer()
    tol = part.tolerance * (1.0 + 1e-9)  # a value on the edge of the band counts
    if abs(x - answer) <= tol:
        return CORRECT, ""
    for trap in part.traps:
        if abs(x - trap.value()) <= tol:
            return NOT_YET, trap.hint
    if abs(answer) > 2 * tol and abs(x + answer) <= tol:
        return NOT_YET, "The size is right; check the sign."
    return NOT_YET, part.hint


def find(exercises: Sequence[Exercise], exercise_id: str) -> Exercise:
    for ex in exercises:
        if ex.id == exercise_id:
            return ex
    raise KeyError(f"no exercise {exercise_id!r}")


def parts_of(exercises: Sequence[Exercise]) -> list[tuple[Exercise, Part]]:
    return [(ex, p) for ex in exercises for p in ex.parts]


# ------------------------------------------------------------------- shared by both chapters

KAPPA_LIMIT = 10_000.0  # the largest kappa the pages allow: beta -> 0 in practice


def _f(x, digits: int = 3) -> str:
    """A number for a worked solution: ``digits`` fixed decimals (klrl_app.fmt's rules)."""
    return fmt.fixed(x, digits)


def _vec(xs, digits: int = 3) -> str:
    return "(" + ", ".join(_f(x, digits) for x in xs) + ")"
