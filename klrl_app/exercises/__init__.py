"""The exercise catalogue behind the ``exercises`` page: Exercises 12.1-12.4 of *AI Alignment*
(Chapter 12) and worked numeric instances of Exercises 28.1-28.8 of the chapter
"Reinforcement Learning for Language Models and Reasoning" (Chapter 28 of a different book).

machinery.py says what an exercise is and how an answer is checked; chapter12.py and
chapter28.py hold the exercises, every number computed by ``klrl_core`` when asked for.
"""

from __future__ import annotations

from klrl_app.exercises import chapter12, chapter28, machinery
from klrl_app.exercises.chapter28 import PI_REF_281, R_281  # the tests read its model
from klrl_app.exercises.machinery import CORRECT, NOT_YET, Exercise, Part, check

__all__ = [
    "CORRECT",
    "EXERCISES",
    "NOT_YET",
    "PI_REF_281",
    "R_281",
    "Exercise",
    "Part",
    "all_parts",
    "by_id",
    "check",
]

EXERCISES: list[Exercise] = chapter12.EXERCISES + chapter28.EXERCISES


def by_id(exercise_id: str) -> Exercise:
    return machinery.find(EXERCISES, exercise_id)


def all_parts() -> list[tuple[Exercise, Part]]:
    return machinery.parts_of(EXERCISES)
