"""Figure 12.4: when a group of graded responses carries a training signal.

Section 12.7.1 (Algorithm 12.1, Example 12.2): a prompt gets a group of k
responses, each graded 1 (correct) or 0; a response's advantage is its reward
minus the group mean, divided by the group's standard deviation over the k
rewards.  A group that is all right or all wrong has every advantage zero and
teaches nothing; with solve rate p that happens with probability
p^k + (1 - p)^k, so the group carries signal with probability
1 - p^k - (1 - p)^k.

Three normalisations are offered (``CONVENTIONS``):

* ``"std"``: divide by the population standard deviation (divisor k), as the
  chapter does;
* ``"std_unbiased"``: divide by the sample standard deviation (divisor k - 1),
  as TRL's GRPO trainer does;
* ``"dr_grpo"``: mean-centred only, not divided (Dr. GRPO, chapter 28).

Everything here is exact (binomial probabilities, closed forms); nothing is
sampled.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

import numpy as np

CONVENTIONS = ("std", "std_unbiased", "dr_grpo")
CONVENTION_LABELS = {  # short column titles for a table
    "std": "÷ std (k)",
    "std_unbiased": "÷ std (k − 1)",
    "dr_grpo": "centred (Dr. GRPO)",
}
KIND_CORRECT = "correct"
KIND_INCORRECT = "incorrect"
KIND_NO_SIGNAL = "no signal"
MAX_GROUP = 4096  # longest group the text parser accepts


def _check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    return convention


def _check_p(p) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("solve rate p must lie in [0, 1]")
    return p


def _check_k(k) -> np.ndarray:
    k_arr = np.asarray(k, dtype=float)
    if not np.all(np.isfinite(k_arr)) or np.any(k_arr < 1) or np.any(k_arr != np.round(k_arr)):
        raise ValueError("group size k must be an integer >= 1")
    return k_arr


# --- probability of a signal -------------------------------------------------

def signal_probability(p, k):
    """P(a group of k carries signal) = 1 - p^k - (1 - p)^k (section 12.7.1).

    Vectorised (p and k broadcast).  Computed as
    ``-expm1(k log1p(-q)) - exp(k log q)`` with ``q = min(p, 1 - p)`` (the
    formula is symmetric in p and 1 - p), which stays accurate for small p
    and for large k.
    """
    p = _check_p(p)
    k = _check_k(k)
    q = np.minimum(p, 1.0 - p)
    with np.errstate(divide="ignore"):
        all_wrong_minus_1 = np.expm1(k * np.log1p(-q))  # (1 - q)^k - 1
        all_right = np.exp(k * np.log(q))  # q^k, 0 when q == 0
    out = np.clip(-all_wrong_minus_1 - all_right, 0.0, 1.0)
    return out if out.ndim else float(out)


def no_signal_probability(p, k):
    """P(a group of k is all right or all wrong) = p^k + (1 - p)^k."""
    out = 1.0 - np.asarray(signal_probability(p, k))
    return out if out.ndim else float(out)


# --- advantages of one group -----------------------------------------------

FLAT_TOL = 1e-12   # relative spread below which a group's rewards count as equal


def group_advantages(rewards, convention: str = "std") -> np.ndarray:
    """Group-relative advantages of the rewards along the last axis.

    Step 4 of Algorithm 12.1: subtract the group mean, then (depending on
    ``convention``) divide by the standard deviation over the k rewards.  A
    group whose rewards are all equal (to within FLAT_TOL of their scale, so
    rounding noise is no signal) gets zeros (Example 12.2), so there is never a
    division by zero or by a rounding error.
    """
    _check_convention(convention)
    r = np.asarray(rewards, dtype=float)
    if r.ndim == 0 or r.shape[-1] == 0:
        raise ValueError("a group needs at least one reward")
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards must be finite numbers")
    k = r.shape[-1]
    # Rewards that differ only by rounding (0.1 + 0.2 against 0.3) are one level: a spread
    # below FLAT_TOL of the rewards' scale is a flat group, not a tiny standard deviation to
    # divide by.
    spread = np.max(r, axis=-1, keepdims=True) - np.min(r, axis=-1, keepdims=True)
    # (floored at the smallest normal double: denormal differences from 0 are noise too)
    scale = np.maximum(np.max(np.abs(r), axis=-1, keepdims=True), np.finfo(float).tiny)
    flat = spread / scale <= FLAT_TOL
    centred = r - r.mean(axis=-1, keepdims=True)
    centred = np.where(flat, 0.0, centred)
    if convention == "dr_grpo":
        return centred - centred.mean(axis=-1, keepdims=True)
    ddof = 1 if convention == "std_unbiased" else 0
    # k == 1 only happens with a flat group, so the divisor is never zero there.
    sd = np.sqrt(np.sum(centred**2, axis=-1, keepdims=True) / max(k - ddof, 1))
    adv = np.where(flat, 0.0, centred / np.where(flat, 1.0, sd))
    # Re-centred after the division, so that the advantages sum to 0 to rounding.
    return adv - adv.mean(axis=-1, keepdims=True)


def mixed_group_advantages(c, k, convention: str = "std"):
    """Advantages (correct, incorrect) in a group of k with c correct, 0 < c < k.

    Closed forms of ``group_advantages`` for 0/1 rewards: the mean is m = c/k
    and the population standard deviation sqrt(m (1 - m)), so a correct
    response gets sqrt((k - c)/c) and an incorrect one -sqrt(c/(k - c))
    (Exercise 12.4: 3 of 8 gives sqrt(5/3) and -sqrt(3/5)).  Vectorised.
    """
    _check_convention(convention)
    k_arr = _check_k(k)
    c_arr = np.asarray(c, dtype=float)
    if np.any(c_arr != np.round(c_arr)) or np.any(c_arr < 1) or np.any(c_arr > k_arr - 1):
        raise ValueError("need 0 < c < k correct responses for a mixed group")
    if convention == "dr_grpo":
        m = c_arr / k_arr
        hi, lo = 1.0 - m, -m
    else:
        hi = np.sqrt((k_arr - c_arr) / c_arr)
        lo = -np.sqrt(c_arr / (k_arr - c_arr))
        if convention == "std_unbiased":
            shrink = np.sqrt((k_arr - 1.0) / k_arr)
            hi, lo = hi * shrink, lo * shrink
    if np.ndim(hi) == 0:
        return float(hi), float(lo)
    return hi, lo


def group_standard_deviations(rewards) -> tuple[float, float]:
    """The standard deviation of one group's rewards over k (the population's, the chapter's
    divisor) and over k - 1 (the sample's, TRL's GRPO trainer's); needs k >= 2."""
    r = np.asarray(rewards, dtype=float)
    if r.ndim != 1 or r.size < 2:
        raise ValueError("a spread over k - 1 needs a group of at least two rewards")
    squares = np.sum((r - r.mean()) ** 2)
    return float(np.sqrt(squares / r.size)), float(np.sqrt(squares / (r.size - 1)))


def leave_one_out_baseline(rewards) -> np.ndarray:
    """b_i = mean of the other G - 1 rewards (exercise 28.4 of chapter 28).

    Along the last axis; needs G >= 2.  Exercise 28.4(b):
    r_i - mean(r) = (G - 1)/G * (r_i - b_i).
    """
    r = np.asarray(rewards, dtype=float)
    if r.ndim == 0 or r.shape[-1] < 2:
        raise ValueError("the leave-one-out baseline needs at least two rewards")
    g = r.shape[-1]
    return (r.sum(axis=-1, keepdims=True) - r) / (g - 1)


# --- the exact distribution over responses -----------------------------------

def binomial_pmf(p: float, k: int) -> np.ndarray:
    """P(c correct of k), c = 0..k, for solve rate p (computed in log space)."""
    p = float(_check_p(p))
    k = int(_check_k(k))
    c = np.arange(k + 1, dtype=float)
    if p == 0.0 or p == 1.0:
        out = np.zeros(k + 1)
        out[0 if p == 0.0 else k] = 1.0
        return out
    i = np.arange(1, k + 1, dtype=float)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(k - i + 1.0) - np.log(i))))
    return np.exp(log_choose + c * np.log(p) + (k - c) * np.log1p(-p))


def most_likely_mixed_group(p: float, k: int):
    """The number correct c in 1..k-1 that is most probable (None when k < 2)."""
    pmf = binomial_pmf(p, k)
    if pmf.size < 3:
        return None
    return int(np.argmax(pmf[1:-1])) + 1


def likeliest_mixed_share(p: float, k: int) -> float:
    """The share of the mixed groups (0 < c < k correct) that have the likeliest number correct,
    P(c*) / P(mixed); 0 when no group is mixed (p = 0 or 1)."""
    mixed = 1.0 - no_signal_probability(p, k)
    if mixed <= 0:
        return 0.0
    return float(binomial_pmf(p, k)[most_likely_mixed_group(p, k)]) / mixed


@dataclass(frozen=True)
class AdvantageDistribution:
    """Stems of Figure 12.4's second panel: one entry per (value, kind).

    ``value[i]`` is an advantage, ``share[i]`` the expected share of all
    responses that receive it, ``kind[i]`` one of ``"correct"``,
    ``"incorrect"``, ``"no signal"``, and ``n_correct[i]`` the number correct
    in the group it comes from (-1 for the no-signal entry, which pools the
    groups with c = 0 and c = k).  The shares sum to one.
    """

    value: np.ndarray
    share: np.ndarray
    kind: np.ndarray
    n_correct: np.ndarray

    def __len__(self) -> int:
        return int(self.value.size)


def advantage_distribution(
    p: float, k: int, convention: str = "std", min_share: float = 0.0
) -> AdvantageDistribution:
    """Exact expected share of responses at each advantage value.

    The number correct in a group is c ~ Binomial(k, p).  In a mixed group
    (0 < c < k) the c correct responses share one advantage value and the
    k - c incorrect ones another (``mixed_group_advantages``); a response lands
    in such a group with probability P(c) c/k (correct) or P(c) (k - c)/k
    (incorrect).  Groups with c = 0 or c = k give every response advantage 0;
    their share P(0) + P(k) is one "no signal" entry at 0, first in the arrays.

    ``min_share`` drops mixed-group entries whose share is below it (the
    no-signal entry is always kept), which keeps plots of very large k small.
    """
    _check_convention(convention)
    pmf = binomial_pmf(p, k)
    k = pmf.size - 1
    c = np.arange(1, k, dtype=float)
    p_mixed = pmf[1:k]
    if c.size:
        hi, lo = mixed_group_advantages(c, k, convention)
    else:
        hi = lo = np.empty(0)
    value = np.concatenate(([0.0], hi, lo))
    share = np.concatenate(([pmf[0] + pmf[k]], p_mixed * c / k, p_mixed * (k - c) / k))
    kind = np.array(
        [KIND_NO_SIGNAL] + [KIND_CORRECT] * c.size + [KIND_INCORRECT] * c.size, dtype=object
    )
    n_correct = np.concatenate(([-1], c, c)).astype(int)
    if min_share > 0:
        keep = share >= min_share
        keep[0] = True
        value, share, kind, n_correct = value[keep], share[keep], kind[keep], n_correct[keep]
    return AdvantageDistribution(value, share, kind, n_correct)


# --- the one-group calculator --------------------------------------------------

_SEPARATORS = re.compile(r"[,;\s]+")


def parse_grades(text: str) -> np.ndarray:
    """Parse grades such as "1,0,0,1" (commas, semicolons or spaces) into 0/1 floats.

    Raises ``ValueError`` with a message a reader can act on when the text is
    empty, holds something that is not a number, a number other than 0 or 1,
    or more than ``MAX_GROUP`` grades.
    """
    tokens = [t for t in _SEPARATORS.split(str(text).strip()) if t]
    if not tokens:
        raise ValueError("The group is empty: type at least one grade, e.g. 1,0,0,1.")
    if len(tokens) > MAX_GROUP:
        raise ValueError(f"That is {len(tokens)} grades; the calculator takes at most {MAX_GROUP}.")
    grades = []
    for tok in tokens:
        try:
            x = float(tok)
        except ValueError:
            raise ValueError(f"'{tok}' is not a number: grades must be 0 or 1.") from None
        if x not in (0.0, 1.0):
            raise ValueError(f"'{tok}' is not a valid grade: grades must be 0 (wrong) or 1 (right).")
        grades.append(x)
    return np.array(grades)
