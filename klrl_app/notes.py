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
from typing import NamedTuple
from collections.abc import Callable
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
    claim: str  # what a student believes, in the student's words
    page: str  # the page whose link shows it wrong (url_path)
    setting: dict[str, str]  # that link's query parameters
    refutation: str  # the numbers at that setting, computed by klrl_core

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
_KAPPA = {"kappa": "the inverse KL weight κ = 1/β (a link may give beta = 1/κ instead)"}
_RTRUE = {"rtrue": "the true rewards r*, comma-separated (empty: the chapter's bend of r)"}

PARAMS: dict[str, dict[str, str]] = {
    "bandit": {
        "baseline": "on/off: subtract a moving average of past rewards from each reward",
        "lr": "the learning rate",
        "seed": "which twenty runs are drawn",
    },
    "ppo-clip": {
        "eps": "PPO's clip range ε",
        "sign": "the sample's advantage in the upper figures: pos, neg or both",
        "show": "what is drawn beside plain and PPO: all, higher (clip-higher), cispo or none",
        "cispo": "CISPO's weight bounds: dapo (DAPO's range) or m1 (MiniMax-M1's, no lower bound)",
        "grad": "the lower left panel: ratio (d/dω) or score (the weight on ∇log π)",
        "lr": "the step size of the epochs on one batch",
        "epochs": "how many gradient steps are taken on the same batch",
        "n": "how many samples the batch holds",
        "seed": "which batch is drawn",
        "bernoulli": "on: 0/1 rewards drawn per sample; off: each action's fixed reward",
    },
    "tilt": {**_KAPPA, **_MODEL},
    "rarity": {
        "p0": "the reference probability p₀ of the rare response y₁",
        "delta": "the reward gap Δ by which y₁ beats every other response",
        "beta": "the KL weight β (a link may give kappa = 1/β instead)",
    },
    "best-of-n": {
        **_KAPPA,
        "n": "the number of draws n (empty: the n whose KL matches the optimum's)",
        **_MODEL,
    },
    "groups": {
        "p": "the prompt's solve rate p",
        "k": "the group size k",
    },
    "overoptimization": {**_KAPPA, **_MODEL, **_RTRUE},
    "dpo": {
        **_KAPPA,
        "pairs": "how many labelled pairs, or all (the limit of infinitely many)",
        "labels": "bt (Bradley–Terry draws) or deterministic (the higher reward always wins)",
        "steps": "gradient steps on the DPO loss",
        "seed": "which pairs and labels are drawn",
        **_MODEL,
        **_RTRUE,
    },
    "kl-penalty": {
        "beta": "the KL weight β (a link may give kappa = 1/β instead)",
        "steps": "training steps of each of the three rules",
        "seed": "which prompt and samples are drawn (0: the chapter's prompt)",
    },
    "length-bias": {
        "steps": "training steps",
        "runs": "how many independent runs are averaged",
        "seed": "which runs are drawn",
        "lr_grpo": "GRPO's step size",
        "lr_dr": "Dr. GRPO's step size",
    },
    "normalization": {
        "k": "the group size k",
        "p": "the solve rate p of the marked prompt",
    },
    "entropy": {
        "preset": "a worked example: confident_right, confident_wrong or uniform (custom: "
        "your own lists)",
        "logits": "the policy's logits, comma-separated (with advantages: your own example)",
        "advantages": "one advantage per action",
        "eta": "the step size η",
        "steps": "how many steps are repeated",
    },
    "pass-at-k": {
        "p": "the reference policy's solve rate p",
        "beta": "the KL weight β (a link may give kappa = 1/β instead)",
        "k": "the number of attempts k",
        "samples": "how many samples n the estimators see",
        "before": "the problems' solve rates before training, comma-separated",
        "after": "their solve rates after training, one per problem",
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
        "exact": "on: the estimator's expected update, no sampling; off: sampled groups",
        "step": "the training step the figures show",
    },
    "token-credit": {
        **_KAPPA,
        "reward": "the reward rule: middle, last, first or count",
        "y": "the response y, three letters from a, b, c",
        "y2": "the second response y′, three letters from a, b, c",
    },
    "step-labels": {
        "steps": "the number of steps T in a solution",
        "seed": "which data set of labels is drawn",
        "skill": "the completer's skill q",
        "n": "how many completions N label each step",
        "guess": "the chance g of a lucky guess after a wrong step",
        "error": "the first wrong step, or none",
    },
}
COMMON_PARAMS = {
    "present": "1: the presentation view (projector)",
    "lock": "controls shown fixed at the link's values (names, comma-separated)",
    "hide": "controls not shown; the page uses the link's values",
}


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


@functools.cache
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
                "The optimum puts its probability on the best response.",
                "tilt",
                {"kappa": "20"},
                f"At κ = 20 the best response gets {_p(t20.pi[top])} of π* (π₀ gives it "
                f"{_p(pi0_top)}), and the response π* favours most gets only "
                f"{_p(t20.pi.max())}: the optimum spreads over the top of the scale.",
            ),
            Misconception(
                "β = 1 is a light penalty, so the policy moves a long way.",
                "tilt",
                {"kappa": "1"},
                f"At β = 1 the optimum spends {_r(t1.kl, 3)} nats of KL and raises the expected "
                f"reward only from {_r(reward0)} to {_r(t1.expected)}: on rewards between 0 "
                f"and 1, β = 1 is a strong anchor.",
            ),
            Misconception(
                "Reward grows in proportion to the KL spent.",
                "tilt",
                {"kappa": "20"},
                f"From κ = 10 to κ = 20 the KL grows from {_r(t10.kl)} to {_r(t20.kl)} nats "
                f"while the reward grows only from {_r(t10.expected)} to {_r(t20.expected)}; "
                f"the frontier's slope at κ = 20 is β = {beta_text(20.0)} per nat.",
            ),
        ),
    )


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
                "Best-of-n's KL is log n − (n − 1)/n.",
                "best-of-n",
                {"pi0": "0.5,0.5", "r": "0,1", "n": "2"},
                f"On the coin of Exercise 12.2 best-of-2 spends {_r(coin.kl, 3)} nats, while "
                f"the formula says {_r(coin.bound, 3)}: the formula is a bound, close only when "
                f"the best responses are rare.",
            ),
            Misconception(
                "At the same KL, best-of-n does as well as the RL optimum.",
                "best-of-n",
                {"kappa": "20"},
                f"At κ = 20 the optimum spends {_r(t.kl)} nats and earns {_r(t.expected)}; "
                f"best-of-{n:,}, whose exact KL is {_r(b.kl)} nats, earns {_r(b.expected)}.",
            ),
            Misconception(
                "With n in the hundreds, best-of-n returns the best response.",
                "best-of-n",
                {"kappa": "20"},
                f"Best-of-{n:,} returns the best response with probability {_p(b.pi[top])} "
                f"(the optimum gives it {_p(t.pi[top])}) and puts {_p(b.pi.max())} on one "
                f"response below the top: it can only return what its draws contain.",
            ),
        ),
    )


@_notes("overoptimization")
def _overoptimization() -> Notes:
    from klrl_core import tilt

    r, lp, rt = _book()
    pi0 = np.exp(lp)
    peak_kappa, peak = tilt.true_reward_peak(lp, r, rt)
    k_link = round(peak_kappa * 2) / 2  # the nearest stop of the slider (step 0.5)
    at_peak = tilt.tilt(lp, r, k_link)
    hi = tilt.tilt(lp, r, 10_000.0)
    b03 = tilt.tilt(lp, r, 1 / 0.03)
    return Notes(
        "The optimum follows the proxy r, and the anchor charges the same per nat whichever "
        "way the policy moves: past a few nats the true reward falls while the proxy keeps "
        "rising.",
        (
            Misconception(
                "While the proxy reward rises, the policy is getting better.",
                "overoptimization",
                {"beta": "0.03"},
                f"At β = 0.03 the proxy reward is {_r(b03.expected)} and still rising, but "
                f"the true reward is {_r(b03.pi @ rt)}, down from its peak of {_r(peak.pi @ rt)} "
                f"at {_r(peak.kl, 1)} nats.",
            ),
            Misconception(
                "The true reward peaks where the proxy stops improving.",
                "overoptimization",
                {"kappa": fmt_number(k_link)},
                f"At κ = {_k(k_link)}, next to the true reward's peak (κ = "
                f"{fmt.sig(peak_kappa, 3)}), the proxy reward is {_r(at_peak.expected)}, and "
                f"it keeps climbing to {_r(hi.expected)} by κ = 10,000.",
            ),
            Misconception(
                "Overoptimization needs a noisy reward model or an unstable training run.",
                "overoptimization",
                {"kappa": "10000"},
                f"Nothing here is sampled or trained: the exact optimum at κ = 10,000 earns a "
                f"proxy reward of {_r(hi.expected)} and a true reward of {_r(hi.pi @ rt)}, "
                f"against {_r(pi0 @ rt)} for the reference.",
            ),
        ),
    )


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
                "optimum.",
                "rarity",
                {"p0": "1e-9", "delta": "1", "beta": "0.04"},
                f"With a reward gap of 1 and β = 0.04 it gets {_p(billion)} of π*: the "
                f"threshold is β = {fmt.sig(thr9, 3)}, and 0.04 is below it.",
            ),
            Misconception(
                "A response a thousand times rarer needs a thousand times smaller β to take over.",
                "rarity",
                {"p0": "1e-12", "delta": "1", "beta": "0.035"},
                f"The threshold moves only from β = {fmt.sig(thr9, 3)} (one in a billion) to "
                f"β = {fmt.sig(thr12, 3)} (one in a trillion), {fmt.sig(thr9 / thr12, 3)} times "
                f"smaller; at β = 0.035 the one-in-a-trillion response already holds "
                f"{_p(trillion)} of π*.",
            ),
            Misconception(
                "A response that beats the only other one by half a point wins at the optimum.",
                "rarity",
                {"p0": "0.01", "delta": "0.5", "beta": "0.2"},
                f"At p₀ = 0.01 and β = 0.2 its odds grow by exp(Δ/β) = "
                f"{fmt.sig(math.exp(0.5 / 0.2), 3)}, and it still gets only {_p(hundred)} of "
                f"π*.",
            ),
        ),
    )


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
                "Every group of graded answers moves the policy.",
                "groups",
                {"p": "0.1", "k": "8"},
                f"At p = 0.1 and k = 8 a group carries signal with probability {_r(s8)}: "
                f"{fmt.pct(1 - s8)} of groups are all wrong or all right and get advantage 0.",
            ),
            Misconception(
                "A lucky correct answer on a hard prompt gets only a small push.",
                "groups",
                {"p": "0.1", "k": "8"},
                f"In the most likely mixed group ({c} right of 8) the correct answer gets "
                f"advantage {_r(right)} and each wrong one {fmt.fixed(wrong, 2)}.",
            ),
            Misconception(
                "Larger groups only waste samples.",
                "groups",
                {"p": "0.01", "k": "64"},
                f"At p = 0.01 a group of 8 carries signal with probability "
                f"{_r(s8_hard, 3)}, a group of 64 with {_r(s64_hard, 3)}: hard prompts need "
                f"large groups.",
            ),
        ),
    )


# -------------------------------------------------------------------------- bandit
@_notes("bandit")
def _bandit() -> Notes:
    from klrl_core import bandit, baseline

    uniform = np.full(bandit.N_ARMS, 1.0 / bandit.N_ARMS)
    plain = baseline.gradient_moments(uniform, 0.0)
    based = baseline.gradient_moments(uniform, baseline.EXPECTED)
    best = bandit.BEST_ARM
    off = bandit.many_run_summary(baseline=False)
    on = bandit.many_run_summary(baseline=True)
    exact = float(bandit.exact_gradient_path()[-1])
    return Notes(
        "REINFORCE makes each sampled arm more probable in proportion to its reward; a baseline "
        "changes how noisy one update is, not where updates point on average, and that decides "
        "how many runs lock onto a wrong arm.",
        (
            Misconception(
                "Subtracting a baseline changes the direction the policy learns in.",
                "bandit",
                {"lr": "0.15"},
                f"The section “What a baseline changes” shows it: at the uniform start, a "
                f"baseline equal to the expected reward "
                f"({_r(float(based.baseline))}) leaves the expected update of the best arm's "
                f"logit at {fmt.fixed(float(based.mean[best]), 3)}, as without one "
                f"({fmt.fixed(float(plain.mean[best]), 3)}), and cuts the update's total "
                f"variance from {_r(float(plain.total_var))} to {_r(float(based.total_var))}.",
            ),
            Misconception(
                "The average of many runs follows the exact gradient.",
                "bandit",
                {"baseline": "off"},
                f"Over {off['n_runs']:,} runs the best arm's probability after "
                f"{bandit.DEFAULT_STEPS} updates averages {_r(off['mean'])}, where the exact "
                f"gradient reaches {_r(exact)}: {fmt.pct(off['share_below'])} of runs end "
                f"with it below one half.",
            ),
            Misconception(
                "With a baseline no run gets stuck.",
                "bandit",
                {"baseline": "on"},
                f"With the moving-average baseline the {on['n_runs']:,}-run average rises to "
                f"{_r(on['mean'])}, but {fmt.pct(on['share_below'])} of runs still end with "
                f"the best arm below one half.",
            ),
        ),
    )


# ------------------------------------------------------------------------ ppo-clip
@_notes("ppo-clip")
def _ppo_clip() -> Notes:
    from klrl_core import ppo_clip as pc

    batch = pc.draw_batch()
    ten = pc.compare_methods(
        batch, 10, pc.DEFAULT_LR, pc.DEFAULT_REWARDS, ("plain", "ppo"), eps={"ppo": (0.2, 0.2)}
    )
    fifty = pc.compare_methods(
        batch, 50, pc.DEFAULT_LR, pc.DEFAULT_REWARDS, ("plain", "ppo"), eps={"ppo": (0.2, 0.2)}
    )
    ratio = ten["ppo"].policy[-1] / ten["ppo"].policy[0]
    above, below = pc.ratio_gradient(1.5, -1.0, "ppo"), pc.ratio_gradient(0.7, -1.0, "ppo")
    return Notes(
        "PPO's clipped objective stops growing once a sample's ratio π/π_old passes 1 + ε (for "
        "a positive advantage) or 1 − ε (for a negative one), so that sample's gradient is "
        "zero: the clip removes the incentive to move further, it does not forbid the move.",
        (
            Misconception(
                "Clipping keeps every probability within a factor 1 ± ε of the old policy.",
                "ppo-clip",
                {"eps": "0.2", "epochs": "10"},
                f"After 10 epochs at ε = 0.2 one action's probability is "
                f"{fmt.fixed(float(ratio.max()), 2)} times its old value and another's "
                f"{fmt.fixed(float(ratio.min()), 2)} times: a step can overshoot the edge, and "
                f"the other samples' updates still move a clipped action through the softmax.",
            ),
            Misconception(
                "With a negative advantage PPO stops pushing once the ratio leaves [1 − ε, 1 + ε].",
                "ppo-clip",
                {"eps": "0.2", "sign": "neg"},
                f"With A = −1 the slope in ω is {fmt.fixed(float(above), 1)} at ω = 1.5, above "
                f"the interval (the min keeps the unclipped term), and "
                f"{fmt.fixed(float(below), 1)} only below 1 − ε, at ω = 0.7.",
            ),
            Misconception(
                "More epochs on the same batch let PPO learn more from it.",
                "ppo-clip",
                {"eps": "0.2", "epochs": "50"},
                f"PPO's KL from π_old is {fmt.fixed(float(ten['ppo'].kl[-1]), 4)} after 10 "
                f"epochs and {fmt.fixed(float(fifty['ppo'].kl[-1]), 4)} after 50, with "
                f"{fmt.pct(float(ten['ppo'].clipped_share[-1]))} of the samples clipped by "
                f"epoch 10. The plain surrogate runs on to "
                f"{_r(float(fifty['plain'].kl[-1]))} nats and gives the rare action "
                f"{_p(float(fifty['plain'].p_rare[-1]))} (π_old: "
                f"{_p(float(pc.DEFAULT_P_OLD[fifty['plain'].rare]))}).",
            ),
        ),
    )


# ----------------------------------------------------------------------------- dpo
@_notes("dpo")
def _dpo() -> Notes:
    from klrl_core import dpo, tilt

    r, lq, rt = _book()
    top = int(np.argmax(r))
    beta = 1 / 20
    star = tilt.tilt(lq, r, 20.0)
    det = dpo.dpo_optimum(dpo.comparisons(lq, r, "all", "deterministic", 0), lq, beta)
    w = dpo.comparisons(lq, r, 1000, "bt", 0)
    few = dpo.dpo_optimum(w, lq, beta)
    off = w - np.diag(np.diag(w))
    unseen = (off.sum(axis=0) + off.sum(axis=1)) == 0
    run = dpo.dpo_gradient_steps(dpo.comparisons(lq, r, "all", "bt", 0), lq, 1 / 100, 2000)
    true_path = run.pi @ rt
    peak = int(np.argmax(true_path))
    tv = lambda p: 0.5 * float(np.abs(p - star.pi).sum())  # noqa: E731
    return Notes(
        "DPO fits the policy's own implied reward β·log(π/π₀) to comparisons: with every pair "
        "and Bradley–Terry labels it lands exactly on the tilt π*, and finite pairs, "
        "deterministic labels or a finite run each take it somewhere else.",
        (
            Misconception(
                "β keeps DPO's policy near the reference whatever the labels are.",
                "dpo",
                {"kappa": "20", "pairs": "all", "labels": "deterministic"},
                f"With deterministic labels the loss has no minimiser: its limit gives the best "
                f"response {_p(det.pi[top])} and {int((det.pi == 0).sum())} of the 30 responses "
                f"nothing, where π* at the same β gives the best response {_p(star.pi[top])}.",
            ),
            Misconception(
                "A thousand comparisons are plenty to find the optimum.",
                "dpo",
                {"kappa": "20", "pairs": "1000", "labels": "bt", "seed": "0"},
                f"{int(unseen.sum())} of the 30 responses never appear in a pair, and π* puts "
                f"{_r(float(star.pi[unseen].sum()))} of its probability on them; DPO's fit is "
                f"{_r(tv(few.pi))} from π* in total variation.",
            ),
            Misconception(
                "Without a reward model, DPO cannot overoptimize.",
                "dpo",
                {"pairs": "all", "kappa": "100", "steps": "2000"},
                f"Gradient steps on every pair at κ = 100 raise the true reward from "
                f"{_r(float(true_path[0]))} to {_r(float(true_path[peak]))} after {peak} steps "
                f"and bring it back to {_r(float(true_path[-1]))} by step 2,000, while the "
                f"proxy keeps rising, to {_r(float(run.pi[-1] @ r))}.",
            ),
        ),
    )


# ---------------------------------------------------------------------- kl-penalty
@_notes("kl-penalty")
def _kl_penalty() -> Notes:
    from klrl_core import kl_penalty as kp

    res = kp.run_experiment()
    rules = dict(zip(kp.RULES, res.policies))
    loss_k1, loss_k3 = rules["k1 as a loss"], rules["k3 as a loss"]
    est = res.estimators
    mean, sd = kp.estimate_moments(res.target, res.pi_ref, kp.N_SAMPLES_DEFAULT)
    return Notes(
        "k1 and k3 estimate the same KL, but where the penalty enters the update decides the "
        "policy training ends at: k1 in the reward reaches π*, k1 as a loss has zero expected "
        "gradient and ignores the penalty, k3 as a loss reaches the forward-KL optimum.",
        (
            Misconception(
                "Adding β·k1 to the loss penalizes the KL.",
                "kl-penalty",
                {"beta": "0.5"},
                f"Trained with k1 as a loss, the policy ends at reward "
                f"{fmt.fixed(float(loss_k1 @ res.r), 3)} and KL "
                f"{fmt.fixed(kp.kl(loss_k1, res.pi_ref), 3)} nats, next to the best response's "
                f"reward {fmt.fixed(float(res.r.max()), 3)}, as if there were no penalty. The "
                f"target "
                f"π* has {fmt.fixed(float(res.target @ res.r), 3)} "
                f"and {fmt.fixed(kp.kl(res.target, res.pi_ref), 3)} nats.",
            ),
            Misconception(
                "k3 as a loss (GRPO's choice) reaches the same optimum as k1 in the reward.",
                "kl-penalty",
                {"beta": "0.5"},
                f"k3 as a loss ends {fmt.fixed(kp.tv(loss_k3, res.target), 3)} from π* in total "
                f"variation and {fmt.sig(kp.tv(loss_k3, res.forward), 2)} from the optimum "
                f"of the forward KL(π_ref ‖ π), a different policy "
                f"({fmt.fixed(kp.tv(res.target, res.forward), 3)} from π*).",
            ),
            Misconception(
                "k1 is the estimator to use because it is unbiased.",
                "kl-penalty",
                {"beta": "0.5"},
                f"k3 is unbiased too (mean {fmt.fixed(float(mean[2]), 4)} against the true "
                f"{fmt.fixed(est.true_kl, 4)}); a 16-sample k1 estimate has standard deviation "
                f"{fmt.fixed(float(sd[0]), 3)} to k3's {fmt.fixed(float(sd[2]), 3)}, and "
                f"{fmt.pct(float(est.share_negative[0]), 1)} of k1 estimates are negative.",
            ),
        ),
    )


# --------------------------------------------------------------------- length-bias
@_notes("length-bias")
def _length_bias() -> Notes:
    from klrl_core import length_bias as lb

    res = lb.simulate()
    g0, g300, g1000 = (res.at("GRPO", i) for i in (0, 300, -1))
    d300, d1000 = res.at("Dr. GRPO", 300), res.at("Dr. GRPO", -1)
    return Notes(
        "GRPO averages each response's loss over its own tokens, so a short correct response "
        "gets a larger push per token and a long wrong one a smaller penalty per token: lengths "
        "drift though the reward ignores length, and Dr. GRPO's constant weight does not drift.",
        (
            Misconception(
                "Responses grow longer only when the reward favours length.",
                "length-bias",
                {"steps": "1000"},
                f"The reward here ignores length, yet after {g1000['step']:,} GRPO steps wrong "
                f"answers average {fmt.fixed(g1000['len_incorrect'], 1)} tokens (from "
                f"{fmt.fixed(g0['len_incorrect'], 1)}) and right ones "
                f"{fmt.fixed(g1000['len_correct'], 1)}; Dr. GRPO ends at "
                f"{fmt.fixed(d1000['len_incorrect'], 1)} and "
                f"{fmt.fixed(d1000['len_correct'], 1)}.",
            ),
            Misconception(
                "Long wrong answers show the model thinking harder about hard questions.",
                "length-bias",
                {"steps": "300"},
                f"No token after the answer carries any reward, and at step 300 GRPO's wrong "
                f"answers run to {fmt.fixed(g300['len_incorrect'], 1)} tokens against "
                f"{fmt.fixed(g300['len_correct'], 1)} for right ones; with Dr. GRPO's constant "
                f"weight they are {fmt.fixed(d300['len_incorrect'], 1)} and "
                f"{fmt.fixed(d300['len_correct'], 1)}.",
            ),
        ),
    )


# ------------------------------------------------------------------- normalization
@_notes("normalization")
def _normalization() -> Notes:
    from klrl_core import normalization as nz

    w_hard, w_mid = nz.update_weight(0.05, 8), nz.update_weight(0.5, 8)
    edge, arcsin = nz.update_weight(0.01, 8), nz.arcsin_weight(0.01, 8)
    loo = nz.leave_one_out([1, 0, 0, 0, 0, 0, 0, 0])
    return Notes(
        "Dividing by the group's standard deviation weights a prompt's update by about "
        "1/√(p(1 − p)), favouring prompts that are almost never or almost always solved; "
        "centring alone is the leave-one-out baseline scaled by (k − 1)/k.",
        (
            Misconception(
                "Dividing by the standard deviation rescales every prompt alike.",
                "normalization",
                {"k": "8", "p": "0.05"},
                f"With groups of 8 the update weight is {_r(w_hard)} at p = 0.05 and "
                f"{_r(w_mid)} at p = 0.5; centring alone gives {fmt.fixed(loo.factor, 3)} at "
                f"every p.",
            ),
            Misconception(
                "By the arcsin law the hardest prompts get an unbounded weight.",
                "normalization",
                {"k": "8", "p": "0.01"},
                f"At p = 0.01 the law gives {_r(arcsin)}, but with groups of 8 the exact weight "
                f"is {_r(edge)}: it cannot exceed √(k − 1) = {_r(math.sqrt(7))}.",
            ),
            Misconception(
                "The group mean is a biased baseline, since it contains the response's own reward.",
                "normalization",
                {"k": "8"},
                f"In a group of 8 with one success, the centred advantages "
                f"({fmt.fixed(float(loo.centred[0]), 3)}, {fmt.fixed(float(loo.centred[1]), 3)}) "
                f"are the leave-one-out ones ({fmt.fixed(float(loo.loo[0]), 3)}, "
                f"{fmt.fixed(float(loo.loo[1]), 3)}) times {fmt.fixed(loo.factor, 3)}: a "
                f"smaller step in the same, unbiased direction.",
            ),
        ),
    )


# ------------------------------------------------------------------------- entropy
@_notes("entropy")
def _entropy() -> Notes:
    from klrl_core import entropy as en

    _, zw, aw = en.PRESETS["confident_wrong"]
    _, zr, ar = en.PRESETS["confident_right"]
    _, zu, au = en.PRESETS["uniform"]
    h = lambda z: float(en.entropy(en.log_softmax(z)))  # noqa: E731
    wrong = en.trajectory(zw, aw, 0.5, en.DEFAULT_STEPS)
    top = int(np.argmax(wrong.entropy))
    return Notes(
        "A natural-gradient step z ← z + η·A changes the entropy, to first order, by "
        "−η·Cov(log π, A): it falls when the actions the policy already favours have the high "
        "advantages, as they do once training has found them.",
        (
            Misconception(
                "A policy-gradient step always lowers the entropy.",
                "entropy",
                {"preset": "confident_wrong", "eta": "0.5"},
                f"Confident on a wrong action, Cov(log π, A) = "
                f"{fmt.fixed(en.covariance(zw, aw), 3)}, and the entropy rises from "
                f"{fmt.fixed(h(zw), 3)} to {fmt.fixed(float(wrong.entropy[top]), 3)} over "
                f"{top} steps before it collapses.",
            ),
            Misconception(
                "The first-order prediction H − η·Cov is good for any step size.",
                "entropy",
                {"preset": "confident_right", "eta": "2"},
                f"At η = 2 it predicts {fmt.fixed(en.first_order(zr, ar, 2.0), 3)} nats; the "
                f"exact entropy after the step is "
                f"{fmt.fixed(float(en.entropy_along(zr, ar, 2.0)), 3)} "
                f"(at η = 0.5: {fmt.fixed(en.first_order(zr, ar, 0.5), 3)} against "
                f"{fmt.fixed(float(en.entropy_along(zr, ar, 0.5)), 3)}).",
            ),
            Misconception(
                "With zero covariance the entropy stays where it is.",
                "entropy",
                {"preset": "uniform", "eta": "2"},
                f"From the uniform policy Cov = {fmt.fixed(en.covariance(zu, au), 3)}, yet one "
                f"step of η = 2 lowers the entropy from {fmt.fixed(h(zu), 3)} to "
                f"{fmt.fixed(float(en.entropy_along(zu, au, 2.0)), 3)}: the second-order term.",
            ),
        ),
    )


# ----------------------------------------------------------------------- pass-at-k
@_notes("pass-at-k")
def _pass_at_k() -> Notes:
    from klrl_core import pass_at_k as pk

    p_star = pk.optimal_solve_rate(0.001, 5.0)
    before, after = (0.3, 0.05), (0.9, 0.0)  # the page's default problems (Ex. 28.7(b))
    b1, b32 = pk.mixture_pass_at_k(before, [1, 32])
    a1, a32 = pk.mixture_pass_at_k(after, [1, 32])
    cross = pk.crossover_k(before, after)
    return Notes(
        "At the optimum every problem's solve rate rises (logit p* = logit p + 1/β), so pass@k "
        "rises at every k; pass@k can fall only where training lowers some problem's solve "
        "rate, as runs that lose the rare problems do, and the optimum never does.",
        (
            Misconception(
                "A KL-anchored optimum trades pass@k at large k for pass@1.",
                "pass-at-k",
                {"p": "0.001", "beta": "5", "k": "1024"},
                f"At p = 0.001 and β = 5 the optimum's solve rate is "
                f"{fmt.sig(float(p_star), 3)}, and "
                f"pass@1024 rises from {fmt.fixed(float(pk.pass_at_k(0.001, 1024)), 3)} to "
                f"{fmt.fixed(float(pk.pass_at_k(p_star, 1024)), 3)}.",
            ),
            Misconception(
                "A model with higher pass@1 also has higher pass@k.",
                "pass-at-k",
                {"k": "32"},
                f"Solve rates (0.3, 0.05) before and (0.9, 0) after training: pass@1 rises from "
                f"{fmt.fixed(float(b1), 3)} to {fmt.fixed(float(a1), 3)}, but pass@32 falls from "
                f"{fmt.fixed(float(b32), 3)} to {fmt.fixed(float(a32), 3)}; the model before "
                f"training leads from k = {cross}.",
            ),
            Misconception(
                "Plugging c/n into 1 − (1 − p)ᵏ estimates pass@k well enough.",
                "pass-at-k",
                {"p": "0.05", "k": "20", "samples": "20"},
                f"With 20 samples, pass@20 is {fmt.fixed(float(pk.pass_at_k(0.05, 20)), 3)}; "
                f"the plug-in estimate averages "
                f"{fmt.fixed(float(pk.plugin_estimator_mean(0.05, 20, 20)), 3)}, the unbiased "
                f"one {fmt.fixed(float(pk.unbiased_estimator_mean(0.05, 20, 20)), 3)}.",
            ),
        ),
    )


# ---------------------------------------------------------------------------- loop
@_notes("loop")
def _loop() -> Notes:
    from klrl_core import loop, pass_at_k as pk

    shared = loop.run()
    own = loop.run(shared=False)
    prob = shared.problems
    rare = prob.rare
    base1, base256 = pk.mixture_pass_at_k(prob.base_rates, [1, 256])
    s1, s256 = loop.pass_at_k_by_step(shared.success, [1, 256])[-1]
    o256 = loop.pass_at_k_by_step(own.success, [256])[-1][0]
    cross = int(loop.crossover_by_step(prob.base_rates, shared.success)[-1])
    kl = float(shared.kl[:, -1].mean())
    matched = loop.matched_optimum(prob, kl)
    m256 = pk.mixture_pass_at_k(matched.rates[0], 256)
    exact = loop.expected_run()
    e256 = loop.pass_at_k_by_step(exact.success, [256])[-1][0]
    n = loop.STEPS_DEFAULT
    return Notes(
        "A run whose parameters are shared across problems can trade the rare problems away: "
        "pass@1 rises while pass@k at large k falls below the base model's, which the optimum "
        "at the same KL, raising every problem's solve rate, never does.",
        (
            Misconception(
                "Training that raises pass@1 makes the model better at every k.",
                "loop",
                {"step": str(n)},
                f"After {n} GRPO steps pass@1 has risen from {fmt.fixed(float(base1), 3)} to "
                f"{fmt.fixed(float(s1), 3)} but pass@256 has fallen from "
                f"{fmt.fixed(float(base256), 3)} to {fmt.fixed(float(s256), 3)}; the base "
                f"model leads from k = {cross}, and the rare problems' solve rate is "
                f"{fmt.sig(float(shared.mean_success[-1][rare].mean()), 2)} (base "
                f"{fmt.sig(float(prob.base_rates[rare].mean()), 2)}).",
            ),
            Misconception(
                "The narrowing is what the KL-regularized objective asks for.",
                "loop",
                {"step": str(n)},
                f"The optimum that spends the run's mean KL ({_r(kl)} nats, κ = "
                f"{fmt.sig(float(matched.kappa[0]), 3)}) solves the rare problems with "
                f"{_p(float(matched.rates[0][rare].mean()))} and has pass@256 "
                f"{fmt.fixed(float(m256), 3)}.",
            ),
            Misconception(
                "The rare problems are lost because their all-wrong groups teach nothing.",
                "loop",
                {"exact": "on", "step": str(n)},
                f"Without any sampling, GRPO's expected update on one shared θ still takes "
                f"pass@256 from {fmt.fixed(float(base256), 3)} to {fmt.fixed(float(e256), 3)} "
                f"and the rare problems to "
                f"{_p(float(exact.mean_success[-1][rare].mean()))}, while with one θ per "
                f"problem (shared=off) sampled groups bring them to "
                f"{_p(float(own.mean_success[-1][rare].mean()))} and pass@256 to "
                f"{fmt.fixed(float(o256), 3)}: the shared parameters, not the draws, trade "
                f"the rare problems away.",
            ),
        ),
    )


# -------------------------------------------------------------------- token-credit
@_notes("token-credit")
def _token_credit() -> Notes:
    from klrl_core import token_credit as tc

    beta = 0.5
    tree = tc.soft_tree(beta, "middle")
    credit = tc.token_credits(tree, "abc")
    share = tc.bandit_share(beta, "middle", "abc")
    diff = tc.implicit_reward_difference(tree, "abc", "aba")
    c1, c2 = tc.token_credits(tree, "abc"), tc.token_credits(tree, "aba")
    return Notes(
        "The optimum can be built token by token: a token's credit β·ln π*/π_ref is the change "
        "in the soft value V* that writing it causes, and a response's credits sum to "
        "r(y) − V*(x); the bandit view hands every token one advantage instead.",
        (
            Misconception(
                "Every token of a rewarded response earned the reward equally.",
                "token-credit",
                {"kappa": "2", "reward": "middle", "y": "abc"},
                f"With r = [y₂ = b] + 0.2·[y₃ = c] and β = 0.5, the tokens of abc get credits "
                f"{', '.join(fmt.fixed(float(c), 3) for c in credit)}, while the bandit view "
                f"gives each {fmt.fixed(float(share[0]), 3)}.",
            ),
            Misconception(
                "Comparing two responses says something about all of their tokens.",
                "token-credit",
                {"kappa": "2", "reward": "middle", "y": "abc", "y2": "aba"},
                f"abc and aba share a and b, whose credits are the same in both "
                f"({fmt.fixed(float(c1[1]), 3)} for b); the difference of their implicit "
                f"rewards, {fmt.fixed(diff, 3)}, sits on the third token alone "
                f"({fmt.fixed(float(c1[2]), 3)} against {fmt.fixed(float(c2[2]), 3)}).",
            ),
        ),
    )


# --------------------------------------------------------------------- step-labels
@_notes("step-labels")
def _step_labels() -> Notes:
    from klrl_core import step_labels as sl

    T, g = sl.T_DEFAULT, sl.G_DEFAULT
    low = sl.step_values(0.4, g, T, 3)
    cross = sl.crossing_skill(g, T, 1)
    v = sl.step_values(sl.Q_DEFAULT, g, T, 3)
    few, many = sl.hard_mean(v, 8), sl.hard_mean(v, 1024)
    return Notes(
        "A label from N completions measures how likely the completer is to finish from a "
        "step, not whether the step is right: the soft label estimates that chance, and the "
        "hard label 1 − (1 − v)ᴺ saturates as N grows.",
        (
            Misconception(
                "A high label means a correct step, a low one a mistake.",
                "step-labels",
                {"skill": "0.4", "error": "3"},
                f"With a completer of skill 0.4 the correct first step's expected label is "
                f"{fmt.fixed(float(low[0]), 3)} and the wrong third step's "
                f"{fmt.fixed(float(low[2]), 3)}: for any skill below "
                f"{fmt.fixed(cross, 3)} the correct first step scores lower than a wrong "
                f"one.",
            ),
            Misconception(
                "More completions make the hard label more accurate.",
                "step-labels",
                {"n": "1024", "error": "3"},
                f"With 8 completions the hard label averages {fmt.fixed(float(few[0]), 3)} on "
                f"the correct first step and {fmt.fixed(float(few[2]), 3)} on the wrong third; "
                f"with 1,024 they average {fmt.fixed(float(many[0]), 3)} and "
                f"{fmt.fixed(float(many[2]), 3)}: every step from which success is possible "
                f"looks right.",
            ),
        ),
    )


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


def _answer(q) -> tuple[str, str]:
    """A question's truth as text ("23%", "4.76 nats", a choice) and its explanation, both
    from the bank's own snapshot (to_spec computes the truth with klrl_core)."""
    spec = _questions.to_spec(q)
    truth, unit = spec["truth"], spec.get("unit", "") or ""
    if isinstance(truth, str):
        text = truth
    else:
        text = fmt.sig(float(truth), 3, trim=True)
        text = f"{text}%" if unit == "%" else f"{text} {unit}".strip()
    return text, str(spec.get("explain", "") or "")


def slider_ranges(ui) -> dict[str, str]:
    """Each slider's range as its page's Controls registered it (name -> "lo to hi")."""
    if ui is None:
        return {}
    return {
        name: f"{fmt.short(stops[0])} to {fmt.short(stops[-1])}"
        for name, (_, _, stops, _) in ui.sliders.items()
        if len(stops) > 1 and all(isinstance(v, (int, float)) for v in (stops[0], stops[-1]))
    }


def _md(text: str) -> str:
    """Text shown as written: π* and r* are not emphasis, $ is not mathematics."""
    return str(text).replace("*", "\\*").replace("$", "\\$")


def markdown(slug: str, ranges: dict[str, str] | None = None) -> str:
    """The notes of one page as markdown; ``ranges`` (slider_ranges) adds each slider's
    range to its parameter."""
    n = notes_for(slug)
    out = [f"**The point.** {_md(n.point)}", "", "**What students get wrong**", ""]
    for m in n.misconceptions:
        out.append(f"- “{_md(m.claim)}” Open [{m.link}]({m.link}): {_md(m.refutation)}")
    qs = questions_for(slug)
    if qs:
        out += ["", "**Prediction questions** (from the class sessions' bank)", ""]
        for q in qs:
            setting = urlencode(dict(q.setting), safe=",")
            where = f" At [{slug}?{setting}]({slug}?{setting})." if setting else ""
            answer, why = _answer(q)
            out.append(
                f"- {_md(q.prompt)}{where} Answer: **{_md(answer)}**"
                + (f" ({_md(why)})" if why else "")
            )
    out += ["", "**This page's link parameters**", ""]
    ranges = ranges or {}
    for name, what in {**PARAMS[slug], **COMMON_PARAMS}.items():
        where = f"; the slider runs from {ranges[name]}" if name in ranges else ""
        out.append(f"- `{name}`: {_md(what)}{where}")
    return "\n".join(out)


def show(slug: str, ui=None) -> None:
    """The collapsed "For the lecturer" section, on pages that have notes and screens that
    show them (layout.Page.details calls this once per page, with the page's Controls)."""
    if slug not in _WRITERS or hidden():
        return
    import streamlit as st
    from klrl_app.layout import _lazy_expander  # built only while open, as the others

    box = _lazy_expander(TITLE, ":material/school:", f"klrl-{slug}-lecturer")
    if box.open:
        with box:
            st.markdown(markdown(slug, slider_ranges(ui)))
