"""A reader's own reference policy and rewards, for the tilt, best-of-n and overoptimization pages.

A model is a finite set of responses, each with a reference probability pi0(y) and a reward
r(y) (and, for overoptimization, an optional true reward). The pages read it from the link as
comma-separated lists (``pi0=0.7,0.2,0.1&r=0,1,2``); this module turns such text into arrays,
checks them, and turns a model back into text.

Zero reference probabilities are allowed: log pi0 is then -inf, which ``tilt`` and
``best_of_n`` handle (a response pi0 gives nothing keeps nothing, Section 12.3.3).
Rewards may come in any order and may tie.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from . import model

MAX_RESPONSES = 200          # longest list a link may carry
MAX_ABS_REWARD = 1e6         # keeps kappa * r finite up to kappa = 10,000
SMALL_MODEL = 12             # up to this many responses a page can list each one
SUM_TOLERANCE = 1e-12        # a sum this close to 1 is rounding, not a reader's choice

# One number: optional sign, digits with an optional point, optional exponent; or a
# fraction of two such numbers, e.g. 1/3.
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(rf"\s*({_NUMBER})\s*(?:/\s*({_NUMBER})\s*)?")
_EDGES = re.compile(r"^[\s,;]+|[\s,;]+$")
_SEPARATOR = re.compile(r"\s*[,;]\s*|\s+")


class UserModel(NamedTuple):
    log_pi0: np.ndarray          # log pi0(y), -inf where pi0(y) = 0
    pi0: np.ndarray              # reference probabilities, summing to 1
    r: np.ndarray                # proxy rewards
    r_true: np.ndarray | None    # true rewards (overoptimization), or None
    notes: tuple[str, ...]       # what was changed on reading (e.g. pi0 divided by its sum)


class Preset(NamedTuple):
    pi0: tuple[float, ...]
    r: tuple[float, ...]
    labels: tuple[str, ...]      # a short name for each response
    r_true: tuple[float, ...] | None = None
    beta: float | None = None    # the beta at which the chapter works the example, if any
    n: int | None = None         # the best-of-n the chapter works, if any


def _shorten(token: str) -> str:
    """A token as quoted back in a message: long junk is cut, not echoed in full."""
    return token if len(token) <= 20 else token[:17] + "..."


def short_text(x: float) -> str:
    """Shortest text that reads back to exactly x: 0.7 not 0.7000000000000001, 2 not 2.0.

    Exponents carry no '+' (a '+' in a link reads as a space)."""
    x = float(x)
    if x == 0.0:
        return "0"
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x).replace("e+", "e")


def to_text(values) -> str:
    """A list of numbers as the link writes it: "0.7,0.2,0.1"."""
    return ",".join(short_text(v) for v in np.asarray(values, dtype=float).ravel())


def parse_values(text: str, name: str) -> np.ndarray:
    """Numbers separated by commas, semicolons or spaces ("0.7, 0.2; 0.1") as a float array.

    Simple fractions such as 1/3 are read too, and the minus sign − as well as -. ``name`` (e.g. "π₀") starts every message.
    Raises ValueError, worded for the reader, on empty text, anything that is not a number,
    an empty entry between two commas, a value that is not finite, or more than
    MAX_RESPONSES values.
    """
    body = _EDGES.sub("", str(text).replace("\u2212", "-"))   # a pasted minus sign (−) reads as -
    if not body:
        raise ValueError(f"{name}: the list is empty; type numbers separated by commas, "
                         f"e.g. 0.7, 0.2, 0.1.")
    tokens = _SEPARATOR.split(body)
    if len(tokens) > MAX_RESPONSES:
        raise ValueError(f"{name}: {len(tokens)} values; a model takes at most "
                         f"{MAX_RESPONSES} responses.")
    out = np.empty(len(tokens))
    for i, tok in enumerate(tokens):
        if tok == "":
            raise ValueError(f"{name}: entry {i + 1} is empty (two commas in a row?).")
        m = _NUMBER_RE.fullmatch(tok)
        if m is None:
            raise ValueError(f"{name}: '{_shorten(tok)}' is not a number.")
        num = float(m.group(1))
        value = num if m.group(2) is None else (
            num / float(m.group(2)) if float(m.group(2)) != 0.0 else math.nan)
        if not math.isfinite(value):
            raise ValueError(f"{name}: '{_shorten(tok)}' is not a finite number.")
        out[i] = value
    return out


def _as_vector(values, name: str) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: the values must be numbers.") from None
    if a.ndim != 1:
        a = a.ravel()
    if a.size == 0:
        raise ValueError(f"{name}: the list is empty.")
    if a.size > MAX_RESPONSES:
        raise ValueError(f"{name}: {a.size} values; a model takes at most {MAX_RESPONSES} "
                         f"responses.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: every value must be a finite number.")
    return a


def _check_rewards(values, name: str, size: int) -> np.ndarray:
    a = _as_vector(values, name)
    if a.size != size:
        raise ValueError(f"π₀ has {size} entries but {name} has {a.size}: give one value "
                         f"per response.")
    if np.any(np.abs(a) > MAX_ABS_REWARD):
        raise ValueError(f"{name}: rewards must lie between −{MAX_ABS_REWARD:,.0f} and "
                         f"{MAX_ABS_REWARD:,.0f}.")
    return a


def make_model(pi0, r, r_true=None) -> UserModel:
    """Check a reader's pi0, r (and r_true) and return the model the pages compute with.

    pi0 is divided by its sum when that is not 1 (a note says so); zeros are kept.
    Raises ValueError for lists of different lengths, negative or all-zero probabilities,
    non-finite values, empty lists or more than MAX_RESPONSES responses.
    """
    p = _as_vector(pi0, "π₀")
    r = _check_rewards(r, "r", p.size)
    rt = None if r_true is None else _check_rewards(r_true, "the true reward", p.size)
    negative = np.flatnonzero(p < 0)
    if negative.size:
        i = int(negative[0])
        raise ValueError(f"π₀: probabilities cannot be negative (entry {i + 1} is "
                         f"{short_text(p[i])}).")
    top = float(np.max(p))
    if top == 0.0:
        raise ValueError("π₀: all probabilities are zero; at least one must be positive.")
    notes = []
    # Summing p / top, not p, keeps tiny or huge entries from underflowing or overflowing.
    w = p / top
    w_sum = float(np.sum(w))
    with np.errstate(over="ignore"):
        total = top * w_sum
    if abs(total - 1.0) > SUM_TOLERANCE:
        p = w / w_sum
        if not math.isfinite(total):
            notes.append("π₀ did not sum to 1; divided by its sum.")
        else:
            shown = short_text(total) if len(short_text(total)) <= 12 else f"{total:.10g}"
            notes.append(f"π₀ summed to {shown}; divided by {shown}.")
    with np.errstate(divide="ignore"):
        # log of a zero is -inf on purpose; subtracting log(sum) removes the last rounding.
        log_pi0 = np.log(p) - np.log(np.sum(p))
    return UserModel(log_pi0, p, r, rt, tuple(notes))


def read_model(pi0_text: str, r_text: str, r_true_text: str | None = None) -> UserModel:
    """A model from the link's texts (``pi0``, ``r``, optional ``rtrue``); ValueError if unusable."""
    pi0 = parse_values(pi0_text, "π₀")
    r = parse_values(r_text, "r")
    rt = None if r_true_text is None else parse_values(r_true_text, "the true reward")
    return make_model(pi0, r, rt)


def model_text(m: UserModel) -> dict[str, str]:
    """The link's parameters for a model: {"pi0": ..., "r": ...} and "rtrue" when it has one."""
    out = {"pi0": to_text(m.pi0), "r": to_text(m.r)}
    if m.r_true is not None:
        out["rtrue"] = to_text(m.r_true)
    return out


def is_small(m: UserModel) -> bool:
    """Whether a page can list every response (pi0, pi*, pi_n per response)."""
    return m.pi0.size <= SMALL_MODEL


def _book_preset() -> Preset:
    r = model.rewards()
    pi0 = np.exp(model.log_reference(r))
    return Preset(tuple(pi0.tolist()), tuple(r.tolist()),
                  tuple(f"y{i + 1}" for i in range(r.size)),
                  r_true=tuple(model.true_reward(r).tolist()))


BOOK = "The book's model (30 responses)"

PRESETS: OrderedDict[str, Preset] = OrderedDict([
    (BOOK, _book_preset()),
    ("Exercise 12.1", Preset((0.7, 0.2, 0.1), (0.0, 1.0, 2.0),
                             ("y1 (r = 0)", "y2 (r = 1)", "y3 (r = 2)"), beta=1.0)),
    ("Example 12.1", Preset((0.2, 0.1, 0.7), (1.0, 1.0, 0.0),
                            ("formal", "casual", "unhelpful"), beta=0.5)),
    ("Exercise 12.2: the coin", Preset((0.5, 0.5), (0.0, 1.0),
                                       ("reward 0", "reward 1"), n=2)),
])


def preset_model(name: str) -> UserModel:
    """The model of a named preset (KeyError names the presets if ``name`` is not one)."""
    if name not in PRESETS:
        raise KeyError(f"no preset {name!r}; the presets are {list(PRESETS)}")
    p = PRESETS[name]
    return make_model(p.pi0, p.r, p.r_true)
