"""Notes for the lecturer (issue 34, item 3): one collapsed section at the foot of every figure
page, for whoever prepares the class, absent from the projector and from a student's screen.

Each page's notes are a function returning ``Notes``: the figure's point in one sentence, two
or three misconceptions students bring to it, each with a link to the setting that refutes it
and a sentence whose numbers klrl_core computes at exactly that setting, and the page's query
parameters (``PARAMS``). The prediction questions come from the class sessions' bank when it
is installed (klrl_app/classroom/questions.py).

layout.Page.details calls ``show`` once, so the pages themselves carry no notes code.
"""

from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple
from urllib.parse import urlencode

import numpy as np

from klrl_app import fmt
from klrl_app.controls import PRESENT_KEY, beta_text, fmt_number, kappa_text

try:  # the class sessions' question bank (another branch); the notes show it when present
    from klrl_app.classroom import questions as _questions
except ImportError:  # pragma: no cover - depends on what is merged
    _questions = None

# A student's screen in a class session: the class code sets this to hide the notes.
STUDENT_KEY = "klrl.class.student"
TITLE = "For the lecturer"


class Misconception(NamedTuple):
    claim: str                 # what a student believes, in the student's words
    page: str                  # the page whose link shows it wrong (url_path)
    setting: dict[str, str]    # that link's query parameters
    refutation: str            # the numbers at that setting, computed by klrl_core

    @property
    def link(self) -> str:
        """The link relative to the app's root: ``tilt?kappa=20``."""
        return f"{self.page}?{urlencode(self.setting, safe=',')}"


class Notes(NamedTuple):
    point: str
    misconceptions: tuple[Misconception, ...]


# ------------------------------------------------------------------ the query parameters
# What each page reads from its link (names as in the address bar). tests/test_notes.py
# checks these names against the names each page actually writes to its link.
_MODEL = {
    "pi0": "the reference probabilities π₀, comma-separated (with r: a model of your own; "
           "without: the book's 30 responses)",
    "r": "the rewards, comma-separated, one per response in pi0",
    "axis": "the frontier's x axis: kl or sqrt (d = √KL)",
}
_KAPPA = {"kappa": "the inverse KL weight κ = 1/β, 0 to 10,000 (or give beta = 1/κ instead)"}
_RTRUE = {"rtrue": "the true rewards r*, comma-separated (empty: the chapter's bend of r)"}

PARAMS: dict[str, dict[str, str]] = {
    "bandit": {
        "baseline": "on/off: subtract a moving-average baseline from each reward",
        "lr": "the learning rate, 0.01 to 1",
        "seed": "which twenty runs are drawn",
    },
    "ppo-clip": {
        "eps": "the clip range ε, 0.05 to 0.5",
        "sign": "which advantage the curves show: pos, neg or both",
        "show": "which methods are drawn beside plain and PPO",
        "cispo": "CISPO's bounds on its weight",
        "grad": "the lower left panel: ratio (d/dω) or score (weight on ∇log π)",
        "lr": "the step size of the epochs on one batch",
        "epochs": "how many epochs are taken on the batch, 1 to 50",
        "n": "samples in the batch",
        "seed": "which batch is drawn",
        "bernoulli": "on: rewards are 0/1 draws rather than each action's fixed reward",
    },
    "tilt": {**_KAPPA, **_MODEL},
    "rarity": {
        "p0": "the reference probability p₀ of the rare response y₁, 10⁻¹² to ½",
        "delta": "the reward gap Δ by which y₁ beats every other response, 0.01 to 10",
        "beta": "the KL weight β, 0.0001 to 10 (or give kappa = 1/β instead)",
    },
    "best-of-n": {**_KAPPA, "n": "the number of draws n (empty: the n whose KL matches the "
                                  "optimum's)", **_MODEL},
    "groups": {
        "p": "the prompt's solve rate p, 0.01 to 0.99",
        "k": "the group size k",
    },
    "overoptimization": {**_KAPPA, **_MODEL, **_RTRUE},
    "dpo": {
        **_KAPPA,
        "pairs": "the number of labelled pairs, or all (the limit of infinitely many)",
        "labels": "bt (Bradley–Terry draws) or deterministic (the better response always wins)",
        "steps": "gradient steps on the DPO loss",
        "seed": "which pairs and labels are drawn",
        **_MODEL, **_RTRUE,
    },
    "kl-penalty": {
        "beta": "the KL weight β (κ = 1/β)",
        "steps": "training steps",
        "seed": "which prompt model and samples are drawn",
    },
    "length-bias": {
        "steps": "training steps",
        "runs": "independent runs averaged",
        "seed": "which runs are drawn",
        "lr_grpo": "GRPO's step size",
        "lr_dr": "Dr. GRPO's step size",
    },
    "normalization": {
        "k": "the group size k",
        "p": "the solve rate p of the marked prompt",
    },
    "entropy": {
        "logits": "the policy's logits, comma-separated (with advantages: your own example)",
        "advantages": "one advantage per action",
        "preset": "one of the page's worked examples by name (custom: your own lists)",
        "eta": "the step size η",
        "steps": "how many steps are repeated",
    },
    "pass-at-k": {
        "p": "the reference solve rate p",
        "beta": "the KL weight β (κ = 1/β)",
        "k": "the number of attempts k",
        "samples": "samples n behind the estimators",
        "before": "solve rates of the problems before training, comma-separated",
        "after": "solve rates after training, one per problem",
    },
    "loop": {
        "estimator": "the advantage estimator: reinforce, rloo, grpo or dr_grpo",
        "g": "the group size G",
        "lr": "the step size",
        "kl": "the KL coefficient (k3 as a loss)",
        "steps": "training steps",
        "rare": "how many of the 24 problems are rare",
        "seed": "which runs are drawn",
        "shared": "on: one θ shared by every problem; off: one θ per problem",
        "step": "the training step the figures show",
    },
    "token-credit": {
        **_KAPPA,
        "reward": "the reward rule: middle, last, first or count",
        "y": "the response y, three letters from a, b, c",
        "y2": "the second response y′, three letters from a, b, c",
    },
    "step-labels": {
        "steps": "steps T in a solution",
        "seed": "which data set of labels is drawn",
        "skill": "the completer's skill q, 0 to 1",
        "n": "completions N per step",
        "guess": "the chance g of a lucky guess after a wrong step",
        "error": "the wrong step, or none",
    },
}
COMMON_PARAMS = {"present": "1: the presentation view (projector)"}


# ---------------------------------------------------------------------------- helpers
_WRITERS: dict[str, Callable[[], Notes]] = {}


def _notes(slug: str):
    def register(fn: Callable[[], Notes]) -> Callable[[], Notes]:
        _WRITERS[slug] = fn
        return fn
    return register


def pages() -> list[str]:
    """The pages that have notes."""
    return list(_WRITERS)


@functools.lru_cache(maxsize=None)
def notes_for(slug: str) -> Notes:
    """The notes of one page (computed once per process: they depend on no control)."""
    return _WRITERS[slug]()


def _p(x: float) -> str:
    return fmt.prob(x)


def _r(x: float, places: int = 2) -> str:
    return fmt.fixed(x, places)


def _k(kappa: float) -> str:
    return kappa_text(kappa)


# ----------------------------------------------------------- the tilt's three pages
def _book():
    from klrl_core import model
    r = model.rewards()
    return r, model.log_reference(r), model.true_reward(r)


@_notes("tilt")
def _tilt() -> Notes:
    from klrl_core import tilt
    r, lp, _ = _book()
    top = int(np.argmax(r))
    pi0_top = float(np.exp(lp[top]))
    reward0 = float(np.exp(lp) @ r)
    t20 = tilt.tilt(lp, r, 20.0)
    t1 = tilt.tilt(lp, r, 1.0)
    t10 = tilt.tilt(lp, r, 10.0)
    return Notes(
        "π* is π₀ reweighted by exp(κ·r): a weaker anchor (larger κ) moves probability toward "
        "high rewards the reference makes rare, and along the frontier each further nat of KL "
        "buys about β of reward, less and less.",
        (
            Misconception(
                "The optimum puts its probability on the best response.", "tilt",
                {"kappa": "20"},
                f"At κ = 20 the best response gets {_p(t20.pi[top])} of π* (π₀ gives it "
                f"{_p(pi0_top)}), and the response π* favours most gets only "
                f"{_p(t20.pi.max())}: the optimum spreads over the top of the scale."),
            Misconception(
                "β = 1 is a light penalty, so the policy moves a long way.", "tilt",
                {"kappa": "1"},
                f"At β = 1 the optimum spends {_r(t1.kl, 3)} nats of KL and raises the expected "
                f"reward only from {_r(reward0)} to {_r(t1.expected)}: on rewards between 0 "
                f"and 1, β = 1 is a strong anchor."),
            Misconception(
                "Reward grows in proportion to the KL spent.", "tilt", {"kappa": "20"},
                f"From κ = 10 to κ = 20 the KL grows from {_r(t10.kl)} to {_r(t20.kl)} nats "
                f"while the reward grows only from {_r(t10.expected)} to {_r(t20.expected)}; "
                f"the frontier's slope at κ = 20 is β = {beta_text(20.0)} per nat."),
        ))


@_notes("best-of-n")
def _best_of_n() -> Notes:
    from klrl_core import best_of_n, tilt
    r, lp, _ = _book()
    top = int(np.argmax(r))
    t = tilt.tilt(lp, r, 20.0)
    n = best_of_n.matched_n(lp, r, float(t.kl))
    b = best_of_n.best_of_n(lp, r, n)
    coin = best_of_n.best_of_n(np.log([0.5, 0.5]), np.array([0.0, 1.0]), 2)
    return Notes(
        "Best-of-n reweights a response by its rank among n draws, not by exp(κ·r): at the "
        "same KL it earns a little less than the optimum, and log n − (n − 1)/n is only an "
        "upper bound on its KL.",
        (
            Misconception(
                "Best-of-n's KL is log n − (n − 1)/n.", "best-of-n",
                {"pi0": "0.5,0.5", "r": "0,1", "n": "2"},
                f"On the coin of Exercise 12.2 best-of-2 spends {_r(coin.kl, 3)} nats, while "
                f"the formula says {_r(coin.bound, 3)}: the formula is a bound, close only when "
                f"the best responses are rare."),
            Misconception(
                "At the same KL, best-of-n does as well as the RL optimum.", "best-of-n",
                {"kappa": "20"},
                f"At κ = 20 the optimum spends {_r(t.kl)} nats and earns {_r(t.expected)}; "
                f"best-of-{n:,}, whose exact KL is {_r(b.kl)} nats, earns {_r(b.expected)}."),
            Misconception(
                "With n in the hundreds, best-of-n returns the best response.", "best-of-n",
                {"kappa": "20"},
                f"Best-of-{n:,} returns the best response with probability {_p(b.pi[top])} "
                f"(the optimum gives it {_p(t.pi[top])}) and puts {_p(b.pi.max())} on one "
                f"response below the top: it can only return what its draws contain."),
        ))


@_notes("overoptimization")
def _overoptimization() -> Notes:
    from klrl_core import tilt
    r, lp, rt = _book()
    pi0 = np.exp(lp)
    peak_kappa, peak = tilt.true_reward_peak(lp, r, rt)
    k_link = round(peak_kappa * 2) / 2          # the nearest stop of the slider (step 0.5)
    at_peak = tilt.tilt(lp, r, k_link)
    hi = tilt.tilt(lp, r, 10_000.0)
    b03 = tilt.tilt(lp, r, 1 / 0.03)
    return Notes(
        "The optimum follows the proxy r, and the anchor charges the same per nat whichever "
        "way the policy moves: past a few nats the true reward falls while the proxy keeps "
        "rising.",
        (
            Misconception(
                "While the proxy reward rises, the policy is getting better.", "overoptimization",
                {"beta": "0.03"},
                f"At β = 0.03 the proxy reward is {_r(b03.expected)} and still rising, but "
                f"the true reward is {_r(b03.pi @ rt)}, down from its peak of {_r(peak.pi @ rt)} "
                f"at {_r(peak.kl, 1)} nats."),
            Misconception(
                "The true reward peaks where the proxy stops improving.", "overoptimization",
                {"kappa": fmt_number(k_link)},
                f"At κ = {_k(k_link)}, next to the true reward's peak (κ = "
                f"{fmt.sig(peak_kappa, 3)}), the proxy reward is {_r(at_peak.expected)}, and "
                f"it keeps climbing to {_r(hi.expected)} by κ = 10,000."),
            Misconception(
                "Overoptimization needs a noisy reward model or an unstable training run.",
                "overoptimization", {"kappa": "10000"},
                f"Nothing here is sampled or trained: the exact optimum at κ = 10,000 earns a "
                f"proxy reward of {_r(hi.expected)} and a true reward of {_r(hi.pi @ rt)}, "
                f"against {_r(pi0 @ rt)} for the reference."),
        ))


# -------------------------------------------------------------------------- rarity
@_notes("rarity")
def _rarity() -> Notes:
    from klrl_core import rarity
    billion = rarity.two_response_optimum(1e-9, 1.0, 0.04)
    thr9 = rarity.exact_threshold(1e-9, 1.0)
    thr12 = rarity.exact_threshold(1e-12, 1.0)
    trillion = rarity.two_response_optimum(1e-12, 1.0, 0.035)
    hundred = rarity.two_response_optimum(0.01, 0.5, 0.2)
    return Notes(
        "The optimum multiplies a response's odds by exp(Δ/β), so rarity protects only "
        "logarithmically: a response the reference almost never writes takes over once "
        "β falls below Δ / log(1/p₀).",
        (
            Misconception(
                "A response the reference writes one time in a billion cannot dominate the "
                "optimum.", "rarity", {"p0": "1e-9", "delta": "1", "beta": "0.04"},
                f"With a reward gap of 1 and β = 0.04 it gets {_p(billion)} of π*: the "
                f"threshold is β = {fmt.sig(thr9, 3)}, and 0.04 is below it."),
            Misconception(
                "A response a thousand times rarer needs a thousand times smaller β to take "
                "over.", "rarity", {"p0": "1e-12", "delta": "1", "beta": "0.035"},
                f"The threshold moves only from β = {fmt.sig(thr9, 3)} (one in a billion) to "
                f"β = {fmt.sig(thr12, 3)} (one in a trillion), {fmt.sig(thr9 / thr12, 3)} times "
                f"smaller; at β = 0.035 the one-in-a-trillion response already holds "
                f"{_p(trillion)} of π*."),
            Misconception(
                "A response that beats the only other one by half a point wins at the optimum.",
                "rarity", {"p0": "0.01", "delta": "0.5", "beta": "0.2"},
                f"At p₀ = 0.01 and β = 0.2 its odds grow by exp(Δ/β) = "
                f"{fmt.sig(math.exp(0.5 / 0.2), 3)}, and it still gets only {_p(hundred)} of "
                f"π*."),
        ))


# -------------------------------------------------------------------------- groups
@_notes("groups")
def _groups() -> Notes:
    from klrl_core import groups
    s8 = groups.signal_probability(0.1, 8)
    s8_hard = groups.signal_probability(0.01, 8)
    s64_hard = groups.signal_probability(0.01, 64)
    c = groups.most_likely_mixed_group(0.1, 8)
    right, wrong = groups.mixed_group_advantages(c, 8)
    return Notes(
        "A group teaches only when its grades differ, which happens with probability "
        "1 − pᵏ − (1 − p)ᵏ; within a mixed group the rare outcome gets the large advantage.",
        (
            Misconception(
                "Every group of graded answers moves the policy.", "groups",
                {"p": "0.1", "k": "8"},
                f"At p = 0.1 and k = 8 a group carries signal with probability {_r(s8)}: "
                f"{fmt.pct(1 - s8)} of groups are all wrong or all right and get advantage 0."),
            Misconception(
                "A lucky correct answer on a hard prompt gets only a small push.", "groups",
                {"p": "0.1", "k": "8"},
                f"In the most likely mixed group ({c} right of 8) the correct answer gets "
                f"advantage {_r(right)} and each wrong one {fmt.fixed(wrong, 2)}."),
            Misconception(
                "Larger groups only waste samples.", "groups", {"p": "0.01", "k": "64"},
                f"At p = 0.01 a group of 8 carries signal with probability "
                f"{_r(s8_hard, 3)}, a group of 64 with {_r(s64_hard, 3)}: hard prompts need "
                f"large groups."),
        ))


# ------------------------------------------------------------------------- rendering
def hidden() -> bool:
    """True where the notes are not shown: the presentation view and a student's screen."""
    import streamlit as st
    return bool(st.session_state.get(PRESENT_KEY)) or bool(st.session_state.get(STUDENT_KEY))


def questions_for(slug: str) -> list:
    """The class sessions' prediction questions for this page ([] without the bank)."""
    if _questions is None:
        return []
    return list(_questions.for_page(slug))


def _truth_text(q) -> str:
    truth = q.truth()
    if isinstance(truth, str):
        return truth
    unit = getattr(q, "unit", "") or ""
    return f"{fmt.sig(float(truth), 3, trim=True)} {unit}".strip()


def markdown(slug: str) -> str:
    """The notes of one page as markdown."""
    n = notes_for(slug)
    out = [f"**The point.** {n.point}", "", "**What students get wrong**", ""]
    for m in n.misconceptions:
        out.append(f"- “{m.claim}” Open [{m.link}]({m.link}): {m.refutation}")
    qs = questions_for(slug)
    if qs:
        out += ["", "**Prediction questions** (from the class sessions' bank)", ""]
        for q in qs:
            setting = urlencode(dict(q.setting), safe=",")
            where = f" At [{slug}?{setting}]({slug}?{setting})." if setting else ""
            out.append(f"- {q.prompt}{where} Answer: **{_truth_text(q)}**")
    out += ["", "**This page's link parameters**", ""]
    for name, what in {**PARAMS[slug], **COMMON_PARAMS}.items():
        out.append(f"- `{name}`: {what}")
    return "\n".join(out)


def show(slug: str) -> None:
    """The collapsed "For the lecturer" section, on pages that have notes and screens that
    show them (layout.Page.details calls this once per page)."""
    if slug not in _WRITERS or hidden():
        return
    import streamlit as st
    box = st.expander(TITLE, icon=":material/school:", key=f"klrl-{slug}-lecturer",
                      on_change="rerun")
    if box.open:
        with box:
            st.markdown(markdown(slug))
