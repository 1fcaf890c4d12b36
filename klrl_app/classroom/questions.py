"""The bank of prediction questions (issue 32, item 2) and what a class session does with one.

A question belongs to a page and a setting of that page's query parameters, so a link reproduces
the view that answers it. Its truth is a function that calls klrl_core at that setting (never a
typed number), and its explanation is written from the computed truth.

Answers. Numbers are read leniently (``parse_answer``): spaces are ignored, "−" counts as a minus,
a single comma with no point is a decimal comma ("0,5" is 0.5) unless it groups thousands
("4,000", "1,500,000"), and 1e-3 is accepted. Where the unit is "%" every number is in percent
("23" and "23%" are both 23%); where it is not, a trailing "%" divides by 100 ("57%" is 0.57).
A choice is matched without regard to case or surrounding spaces.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from klrl_app import fmt
from klrl_app.plots import COLORS, Chart
from klrl_core import (
    bandit,
    best_of_n,
    dpo,
    entropy,
    groups,
    kl_penalty,
    length_bias,
    loop,
    model,
    normalization,
    pass_at_k,
    ppo_clip,
    rarity,
    step_labels,
    tilt,
    token_credit,
)

NUMBER, CHOICE = "number", "choice"


@dataclass(frozen=True)
class Question:
    id: str  # "<page>/<name>", stable
    page: str  # URL path of the page
    setting: dict[str, str]  # the page's query parameters at the question's setting
    prompt: str
    kind: str  # NUMBER or CHOICE
    truth: Callable[[], float | str]  # calls klrl_core
    explain: Callable[[float | str], str]
    lo: float = 0.0
    hi: float = 1.0
    step: float = 0.01
    unit: str = ""  # "nats", "%" or ""
    choices: tuple[str, ...] = ()
    tolerance: float = 0.0


# ----------------------------------------------------------------------------- the models
@functools.lru_cache(maxsize=1)
def _book():
    """Figures 12.2, 12.3 and 12.5's stated model (SPEC.md): log π₀, r and the true reward."""
    r = model.rewards()
    return model.log_reference(r), r, model.true_reward(r)


@functools.lru_cache(maxsize=8)
def _many_runs(lr: float, use_baseline: bool) -> dict:
    """Figure 12.1's 4,000-run statistics (about 0.1 s; cached per process)."""
    return bandit.many_run_summary(lr=lr, baseline=use_baseline)


def _tilt_at(kappa: float) -> tilt.Tilt:
    log_pi0, r, _ = _book()
    return tilt.tilt(log_pi0, r, kappa)


def _true_at(kappa: float) -> float:
    return float(_tilt_at(kappa).pi @ _book()[2])


@functools.lru_cache(maxsize=1)
def _peak():
    """(κ, KL, true reward) where Figure 12.5's expected true reward peaks."""
    log_pi0, r, r_true = _book()
    k, t = tilt.true_reward_peak(log_pi0, r, r_true)
    return k, float(t.kl), float(t.pi @ r_true)


@functools.lru_cache(maxsize=8)
def _matched_n(kappa: float) -> int:
    log_pi0, r, _ = _book()
    return best_of_n.matched_n(log_pi0, r, float(_tilt_at(kappa).kl))


def _best_of(n: float) -> best_of_n.BestOfN:
    log_pi0, r, _ = _book()
    return best_of_n.best_of_n(log_pi0, r, n)


@functools.lru_cache(maxsize=4)
def _dpo(labels: str, kappa: float) -> dpo.Optimum:
    """DPO's exact optimum on the book's model from every pair (pairs=all)."""
    log_pi0, r, _ = _book()
    return dpo.dpo_optimum(dpo.comparisons(log_pi0, r, "all", labels), log_pi0, 1.0 / kappa)


@functools.lru_cache(maxsize=2)
def _kl_experiment():
    return kl_penalty.run_experiment()  # the chapter's: β = 0.5, seed 0 (~0.15 s)


@functools.lru_cache(maxsize=2)
def _ppo_epochs():
    """Plain and PPO surrogates, 10 epochs on the default batch (the page's defaults)."""
    b = ppo_clip.draw_batch(
        ppo_clip.DEFAULT_P_OLD,
        ppo_clip.DEFAULT_REWARDS,
        ppo_clip.DEFAULT_SAMPLES,
        ppo_clip.DEFAULT_SEED,
    )
    return ppo_clip.compare_methods(
        b, ppo_clip.DEFAULT_EPOCHS, ppo_clip.DEFAULT_LR, ppo_clip.DEFAULT_REWARDS, ("plain", "ppo")
    )


@functools.lru_cache(maxsize=2)
def _length_bias():
    return length_bias.simulate()  # the chapter's: 1,000 steps, 20 runs (~0.1 s)


@functools.lru_cache(maxsize=2)
def _loop_run(shared: bool):
    """The loop page's default run (20 runs, 300 steps, seed 0; ~0.2 s)."""
    return loop.run(shared=shared)


def _loop_pass(shared: bool) -> tuple[float, float, float, float]:
    """pass@1 and pass@256 before and after the run, mean over its runs."""
    pk = loop.pass_at_k_by_step(_loop_run(shared).success, [1, 256])
    return float(pk[0, 0]), float(pk[-1, 0]), float(pk[0, 1]), float(pk[-1, 1])


def _loop_rare_start() -> float:
    prob = loop.problems()
    return float(prob.base_rates[prob.rare].mean())


def _loop_rare(shared: bool, step: int) -> float:
    """The rare problems' mean solve rate at a step of the run."""
    run = _loop_run(shared)
    return float(run.mean_success[step][run.problems.rare].mean())


def _entropy_step(preset: str, eta: float) -> tuple[float, float]:
    _, z, a = entropy.PRESETS[preset]
    h = entropy.entropy_along(z, a, [0.0, eta])
    return float(h[0]), float(h[1])


def _direction(before: float, after: float, places: int) -> str:
    """ "rises", "falls" or "stays the same", judged at the precision the page prints."""
    b, a = round(before, places), round(after, places)
    return "rises" if a > b else "falls" if a < b else "stays the same"


RISE_FALL = ("rises", "falls", "stays the same")


def _nats(x: float, places: int = 2) -> str:
    return f"{fmt.fixed(x, places)} nats"


# ----------------------------------------------------------------------------- the bank
def _questions() -> list[Question]:
    """The bank, page by page. Prompts carry only numbers the chapters state as the setting
    (or cheap ones computed here); every truth and explanation is computed."""
    qs: list[Question] = []
    add = qs.append
    log_pi0, r, r_true = _book()
    pi0 = np.exp(log_pi0)
    reward_pi0, true_pi0 = float(pi0 @ r), float(pi0 @ r_true)

    # --- bandit (Figure 12.1) ---------------------------------------------------------------
    add(
        Question(
            "bandit/below-half",
            "bandit",
            {"lr": "0.15", "baseline": "off"},
            "4,000 learners each run REINFORCE for 300 pulls at learning rate 0.15, with no "
            "baseline. What percentage of them end with the best arm's probability below one half?",
            NUMBER,
            lambda: 100 * _many_runs(0.15, False)["share_below"],
            lambda v: (
                f"{fmt.pct(v / 100)} of the 4,000 runs end below ½, although every update "
                f"points uphill on average: every arm pays between "
                f"{fmt.fixed(float(bandit.ARM_MEANS.min()), 1)} and "
                f"{fmt.fixed(float(bandit.ARM_MEANS.max()), 1)} on average, so without a "
                f"baseline each pull pushes up whichever arm was drawn, and early luck can "
                f"lock a run onto a worse arm."
            ),
            lo=0,
            hi=100,
            step=1,
            unit="%",
            tolerance=5,
        )
    )
    add(
        Question(
            "bandit/mean",
            "bandit",
            {"lr": "0.15", "baseline": "off"},
            "Same bandit, no baseline, learning rate 0.15: averaged over 4,000 runs, what is the "
            "best arm's probability after 300 pulls? (It starts at 0.2.)",
            NUMBER,
            lambda: _many_runs(0.15, False)["mean"],
            lambda v: (
                f"The average is {fmt.fixed(v, 2)} (spread "
                f"{fmt.fixed(_many_runs(0.15, False)['std'], 2)}), while the exact gradient "
                f"reaches {fmt.fixed(float(bandit.exact_gradient_path(300, 0.15)[-1]), 2)}: "
                f"the runs that lock onto a worse arm stay near zero and pull the mean down."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )
    add(
        Question(
            "bandit/baseline-below-half",
            "bandit",
            {"lr": "0.15", "baseline": "on"},
            "Now subtract a moving-average baseline from every reward (same learning rate 0.15, "
            "300 pulls, 4,000 runs). What percentage of runs end with the best arm below one half?",
            NUMBER,
            lambda: 100 * _many_runs(0.15, True)["share_below"],
            lambda v: (
                f"{fmt.pct(v / 100)} with the baseline, against "
                f"{fmt.pct(_many_runs(0.15, False)['share_below'])} without: the baseline "
                f"leaves the expected update unchanged and only cuts the noise, so fewer "
                f"runs stray onto a worse arm."
            ),
            lo=0,
            hi=100,
            step=1,
            unit="%",
            tolerance=4,
        )
    )

    # --- tilt (Figure 12.2) -----------------------------------------------------------------
    add(
        Question(
            "tilt/reward",
            "tilt",
            {"kappa": "20"},
            f"At κ = 20 (β = 0.05), what is the expected reward under the optimum π*? "
            f"(Under π₀ it is {fmt.fixed(reward_pi0, 2)}; the best response has reward 1.)",
            NUMBER,
            lambda: float(_tilt_at(20.0).expected),
            lambda v: (
                f"E_π*[r] = {fmt.fixed(v, 2)} at κ = 20, short of the top reward 1: the best "
                f"responses are so rare under π₀ that the optimum stops at "
                f"{_nats(float(_tilt_at(20.0).kl))} of KL."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )
    add(
        Question(
            "tilt/kl",
            "tilt",
            {"kappa": "5"},
            f"At κ = 5 (β = 0.2) the optimum raises the expected reward from "
            f"{fmt.fixed(reward_pi0, 2)} to {fmt.fixed(float(_tilt_at(5.0).expected), 2)}. How "
            f"many nats of KL from π₀ does that cost?",
            NUMBER,
            lambda: float(_tilt_at(5.0).kl),
            lambda v: (
                f"{_nats(v)}: a small move, since near π₀ reward grows like the square root "
                f"of KL, so the first gains are cheap."
            ),
            lo=0,
            hi=12,
            step=0.01,
            unit="nats",
            tolerance=0.1,
        )
    )
    add(
        Question(
            "tilt/kl-limit",
            "tilt",
            {"kappa": "10000"},
            "Weaken the anchor almost completely: κ = 10,000 (β = 0.0001). How far from π₀, in "
            "nats of KL, is the optimum now?",
            NUMBER,
            lambda: float(_tilt_at(10_000.0).kl),
            lambda v: (
                f"{_nats(v)}, and no more however large κ gets: the optimum ends on the top "
                f"response, and its KL is log(1/π₀) of that response, whose reference "
                f"probability is {fmt.sig(float(pi0[np.argmax(r)]), 3)}."
            ),
            lo=0,
            hi=50,
            step=0.1,
            unit="nats",
            tolerance=1,
        )
    )

    # --- best-of-n (Figure 12.3) ------------------------------------------------------------
    add(
        Question(
            "best-of-n/n",
            "best-of-n",
            {"kappa": "20"},
            f"The optimum at β = 0.05 (κ = 20) spends {_nats(float(_tilt_at(20.0).kl))} of KL "
            f"from π₀. For which n does best-of-n (draw n responses from π₀, keep the best) spend "
            f"the same KL?",
            NUMBER,
            lambda: _matched_n(20.0),
            lambda v: (
                f"Best-of-{int(v):,} spends {_nats(float(_best_of(v).kl))}: its KL grows "
                f"only like log n, so a few nats take hundreds of samples per query."
            ),
            lo=1,
            hi=1e7,
            step=1,
            tolerance=50,
        )
    )
    add(
        Question(
            "best-of-n/reward",
            "best-of-n",
            {"kappa": "20"},
            f"At κ = 20 the optimum earns an expected reward of "
            f"{fmt.fixed(float(_tilt_at(20.0).expected), 2)}. Best-of-n at the n that spends the "
            f"same KL: what expected reward does it earn?",
            NUMBER,
            lambda: float(_best_of(_matched_n(20.0)).expected),
            lambda v: (
                f"Best-of-{_matched_n(20.0):,} earns {fmt.fixed(v, 2)}, a little below the "
                f"optimum's {fmt.fixed(float(_tilt_at(20.0).expected), 2)}: no policy with the "
                f"same KL beats the optimum, and best-of-n comes close."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.02,
        )
    )
    add(
        Question(
            "best-of-n/formula",
            "best-of-n",
            {"kappa": "20"},
            "For the n whose best-of-n matches the optimum's KL at κ = 20, the folklore formula "
            "log n − (n−1)/n estimates best-of-n's KL. Compared with the exact KL, the formula…",
            CHOICE,
            lambda: _compare(
                float(_best_of(_matched_n(20.0)).bound), float(_best_of(_matched_n(20.0)).kl), 2
            ),
            lambda v: (
                f"The formula gives {_nats(float(_best_of(_matched_n(20.0)).bound))}, the "
                f"exact KL is {_nats(float(_best_of(_matched_n(20.0)).kl))}. For finitely "
                f"many responses the formula is an upper bound (Equation 12.8): n draws can "
                f"repeat a response, which the formula's derivation leaves out."
            ),
            choices=COMPARE,
        )
    )

    # --- groups (Figure 12.4) ---------------------------------------------------------------
    add(
        Question(
            "groups/signal",
            "groups",
            {"p": "0.1", "k": "8"},
            "A prompt is solved with probability p = 0.1. GRPO samples a group of k = 8 responses. "
            "What share of such groups carry any learning signal (not all right, not all wrong)?",
            NUMBER,
            lambda: float(groups.signal_probability(0.1, 8)),
            lambda v: (
                f"1 − 0.9⁸ − 0.1⁸ = {fmt.fixed(v, 2)}: the other "
                f"{fmt.pct(1 - v)} of groups are all wrong (or, rarely, all right); their "
                f"advantages are all zero and they teach nothing."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )
    add(
        Question(
            "groups/lone-correct",
            "groups",
            {"p": "0.1", "k": "8"},
            "In a group of 8 graded responses exactly one is correct. Dividing by the group's "
            "standard deviation, what advantage does that one correct response get?",
            NUMBER,
            lambda: float(groups.mixed_group_advantages(1, 8)[0]),
            lambda v: (
                f"+{fmt.fixed(v, 2)} (that is √7), against "
                f"{fmt.fixed(float(groups.mixed_group_advantages(1, 8)[1]), 2)} for each "
                f"wrong one: the rarer a success in its group, the harder it is pushed."
            ),
            lo=0,
            hi=10,
            step=0.01,
            tolerance=0.25,
        )
    )
    add(
        Question(
            "groups/no-signal",
            "groups",
            {"p": "0.05", "k": "8"},
            "A harder prompt: solve rate p = 0.05, groups of 8. What share of the groups carry "
            "no signal at all?",
            NUMBER,
            lambda: float(groups.no_signal_probability(0.05, 8)),
            lambda v: (
                f"{fmt.fixed(v, 2)}: about {fmt.pct(v)} of the groups sampled for this "
                f"prompt cost compute and teach nothing; groups of 64 would cut it to "
                f"{fmt.fixed(float(groups.no_signal_probability(0.05, 64)), 3)}."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )

    # --- overoptimization (Figure 12.5) -----------------------------------------------------
    add(
        Question(
            "overoptimization/peak",
            "overoptimization",
            {"kappa": "20"},
            "As κ grows the optimum moves away from π₀ and its expected proxy reward keeps rising. "
            "At what KL from π₀ (in nats) does its expected true reward peak?",
            NUMBER,
            lambda: _peak()[1],
            lambda v: (
                f"The true reward peaks at {fmt.fixed(_peak()[2], 2)} at KL "
                f"{fmt.fixed(v, 1)} nats (κ ≈ {fmt.sig(_peak()[0], 3)}); beyond it the "
                f"optimum buys proxy reward on rare responses that the true reward rates "
                f"lower."
            ),
            lo=0,
            hi=12,
            step=0.1,
            unit="nats",
            tolerance=0.4,
        )
    )
    add(
        Question(
            "overoptimization/true",
            "overoptimization",
            {"kappa": "20"},
            f"At κ = 20 the optimum's expected proxy reward is "
            f"{fmt.fixed(float(_tilt_at(20.0).expected), 2)}. What is its expected true reward?",
            NUMBER,
            lambda: _true_at(20.0),
            lambda v: (
                f"{fmt.fixed(v, 2)}: already past the peak of {fmt.fixed(_peak()[2], 2)}, "
                f"so at κ = 20 a weaker anchor would raise the proxy and lower the true "
                f"reward."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )
    add(
        Question(
            "overoptimization/limit",
            "overoptimization",
            {"kappa": "10000"},
            f"Weaken the anchor almost completely (κ = 10,000). π₀'s expected true reward is "
            f"{fmt.fixed(true_pi0, 2)}. Does the optimum's true reward end above or below π₀'s?",
            CHOICE,
            lambda: "above π₀'s" if _true_at(10_000.0) > true_pi0 else "below π₀'s",
            lambda v: (
                f"{v[:5].capitalize()}: the optimum ends on the top response, whose true "
                f"reward is {fmt.fixed(_true_at(10_000.0), 2)} against π₀'s "
                f"{fmt.fixed(true_pi0, 2)}"
                + (
                    f"; overoptimization lost {fmt.fixed(_peak()[2] - _true_at(10_000.0), 2)} "
                    f"of the peak's {fmt.fixed(_peak()[2], 2)}, not everything."
                    if v == "above π₀'s"
                    else ": past the peak the optimum gives back more than it gained."
                )
            ),
            choices=("above π₀'s", "below π₀'s"),
        )
    )

    # --- ppo-clip (Equation 12.2) -----------------------------------------------------------
    add(
        Question(
            "ppo-clip/flat-above",
            "ppo-clip",
            {"eps": "0.2", "sign": "pos"},
            "PPO with ε = 0.2. For a sample with a positive advantage, above which ratio "
            "ω = π_θ/π_old does the clipped objective stop growing?",
            NUMBER,
            lambda: float(ppo_clip.clip_ratio(1e9, 0.2)),
            lambda v: (
                f"Above ω = {fmt.fixed(v, 2)} the clipped term is the smaller one, so the "
                f"objective is flat and that sample's gradient is zero: nothing pushes its "
                f"probability further on this batch."
            ),
            lo=0,
            hi=3,
            step=0.01,
            tolerance=0.02,
        )
    )
    add(
        Question(
            "ppo-clip/epochs",
            "ppo-clip",
            {"eps": "0.2", "epochs": "10", "lr": "2", "n": "64"},
            "Ten gradient steps (epochs) on one batch of 64 samples, step size 2. Which ends "
            "further from the policy that drew the batch (in KL): the plain surrogate or PPO's "
            "clipped one?",
            CHOICE,
            lambda: _further(
                float(_ppo_epochs()["plain"].kl[-1]), float(_ppo_epochs()["ppo"].kl[-1])
            ),
            lambda v: (
                f"Plain: KL {fmt.sig(float(_ppo_epochs()['plain'].kl[-1]), 2)}; PPO: "
                f"{fmt.sig(float(_ppo_epochs()['ppo'].kl[-1]), 2)}. Once a sample's ratio "
                f"is past its edge of [0.8, 1.2] (above it with a positive advantage, below "
                f"it with a negative one) its gradient is zero; by the last epoch that holds "
                f"for {fmt.pct(float(_ppo_epochs()['ppo'].clipped_share[-1]))} of the "
                f"batch."
            ),
            choices=("the plain surrogate", "PPO", "about the same"),
        )
    )

    # --- rarity (Section 12.3.3, Equation 12.7) ---------------------------------------------
    add(
        Question(
            "rarity/threshold",
            "rarity",
            {"p0": "1e-09", "delta": "1", "beta": "0.05"},
            "A response has reference probability one in a billion and beats every other "
            "response by Δ = 1. Below which β does the optimum give it more than half its "
            "probability?",
            NUMBER,
            lambda: float(rarity.exact_threshold(1e-9, 1.0)),
            lambda v: (
                f"β < {fmt.sig(v, 3)}, about Δ/{fmt.fixed(1 / v, 1)}: rarity protects only "
                f"logarithmically, since log(10⁹) is just "
                f"{fmt.fixed(float(np.log(1e9)), 1)}."
            ),
            lo=0,
            hi=1,
            step=0.001,
            tolerance=0.01,
        )
    )

    # --- dpo (Section 12.6) -----------------------------------------------------------------
    add(
        Question(
            "dpo/deterministic",
            "dpo",
            {"pairs": "all", "labels": "deterministic", "kappa": "20"},
            "DPO on every pair of the 30 responses, each labelled deterministically (the higher "
            "reward always wins), at κ = 20. How many responses keep any probability at DPO's "
            "optimum?",
            NUMBER,
            lambda: float(np.count_nonzero(_dpo("deterministic", 20.0).pi > 0)),
            lambda v: (
                f"{int(v)}: every response but the top one loses to a better one it never "
                f"beats back, so its fitted reward gap is infinite and its probability goes "
                f"to 0 whatever β is; the KL term no longer holds anything back."
            ),
            lo=1,
            hi=30,
            step=1,
            tolerance=0,
        )
    )
    add(
        Question(
            "dpo/bt-reward",
            "dpo",
            {"pairs": "all", "labels": "bt", "kappa": "20"},
            "Now the labels follow Bradley–Terry on the reward, again from every pair, κ = 20. "
            "What expected reward does DPO's optimum earn?",
            NUMBER,
            lambda: float(_dpo("bt", 20.0).pi @ r),
            lambda v: (
                f"{fmt.fixed(v, 2)}, the same as the tilt at κ = 20 "
                f"({fmt.fixed(float(_tilt_at(20.0).expected), 2)}): with Bradley–Terry "
                f"labels and unlimited pairs DPO recovers the optimum exactly."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )

    # --- kl-penalty (chapter 28, first experiment) -------------------------------------------
    add(
        Question(
            "kl-penalty/negative",
            "kl-penalty",
            {"beta": "0.5", "seed": "0"},
            "The KL estimator k1 = −log ρ is unbiased. Averaged over 16 samples, how often "
            "(in percent) is the estimate of the KL divergence negative?",
            NUMBER,
            lambda: 100 * float(_kl_experiment().estimators.share_negative[0]),
            lambda v: (
                f"{fmt.pct(v / 100)} of the 16-sample averages are negative although the "
                f"divergence is {fmt.fixed(float(_kl_experiment().estimators.true_kl), 3)}; "
                f"k3 = ρ − 1 − log ρ is unbiased too and never negative."
            ),
            lo=0,
            hi=100,
            step=1,
            unit="%",
            tolerance=4,
        )
    )
    add(
        Question(
            "kl-penalty/rule",
            "kl-penalty",
            {"beta": "0.5", "seed": "0"},
            "Three ways to apply the penalty during training. Which one converges to the "
            "KL-regularized optimum π*?",
            CHOICE,
            lambda: _closest_rule(),
            lambda v: (
                f"“{v}” ends {fmt.fixed(_rule_tv(v), 3)} in total variation from π*. A "
                f"k1 loss regularizes nothing (its expected gradient is zero), and a k3 "
                f"loss follows the forward divergence instead."
            ),
            choices=tuple(kl_penalty.RULES),
        )
    )

    # --- length-bias (chapter 28, second experiment) ----------------------------------------
    add(
        Question(
            "length-bias/incorrect",
            "length-bias",
            {"steps": "1000", "runs": "20", "seed": "28"},
            "The reward does not depend on length at all. After 1,000 GRPO steps, what is the "
            "expected length (in tokens) of an incorrect response?",
            NUMBER,
            lambda: _length_bias().final("GRPO")["len_incorrect"],
            lambda v: (
                f"About {fmt.fixed(v, 1)} tokens, against "
                f"{fmt.fixed(_length_bias().final('GRPO')['len_correct'], 1)} for a correct "
                f"one: averaging each response's loss over its own length penalizes a long "
                f"wrong answer less per token. Dr. GRPO's constant ends at "
                f"{fmt.fixed(_length_bias().final('Dr. GRPO')['len_incorrect'], 1)} "
                f"(incorrect) and "
                f"{fmt.fixed(_length_bias().final('Dr. GRPO')['len_correct'], 1)} "
                f"(correct)."
            ),
            lo=0,
            hi=float(length_bias.MAX_POS),
            step=0.1,
            tolerance=1.5,
        )
    )

    # --- normalization (Section 12.7.1, Exercise 28.4) --------------------------------------
    add(
        Question(
            "normalization/over-half",
            "normalization",
            {"k": "8", "p": "0.1"},
            "Dividing advantages by the group's standard deviation (groups of 8) reweights prompts. "
            "How many times the weight of a prompt at p = ½ does a prompt at p = 0.1 get?",
            NUMBER,
            lambda: float(
                normalization.update_weight(0.1, 8) / normalization.update_weight(0.5, 8)
            ),
            lambda v: (
                f"{fmt.fixed(v, 2)} times: the hard prompt counts "
                f"{'more' if v > 1 else 'less' if v < 1 else 'the same'}. With the true "
                f"standard deviation (the arcsin law of Exercise 28.4) the factor would be "
                f"{fmt.fixed(float(normalization.arcsin_weight(0.1) / normalization.arcsin_weight(0.5)), 2)}."
            ),
            lo=0,
            hi=10,
            step=0.01,
            tolerance=0.15,
        )
    )
    add(
        Question(
            "normalization/centring",
            "normalization",
            {"k": "8", "p": "0.1"},
            "Subtracting the group mean includes the response's own reward. For groups of 8, by "
            "what factor does that shorten the expected gradient?",
            NUMBER,
            lambda: float(normalization.centring_factor(8)),
            lambda v: (
                f"By {fmt.fixed(v, 3)} = 7/8: the group mean is the leave-one-out baseline "
                f"scaled by (k − 1)/k, so the direction is right and the step a little short."
            ),
            lo=0,
            hi=2,
            step=0.001,
            tolerance=0.02,
        )
    )

    # --- entropy (Exercise 28.6) ------------------------------------------------------------
    add(
        Question(
            "entropy/confident-wrong",
            "entropy",
            {"preset": "confident_wrong", "eta": "0.5"},
            "A policy puts 70% on a wrong action; only action 1 (4%) is rewarded. One natural "
            "gradient step with η = 0.5: does the policy's entropy rise, fall or stay the same?",
            CHOICE,
            lambda: _direction(*_entropy_step("confident_wrong", 0.5), 3),
            lambda v: (
                f"It {v}: from {fmt.fixed(_entropy_step('confident_wrong', 0.5)[0], 3)} to "
                f"{fmt.fixed(_entropy_step('confident_wrong', 0.5)[1], 3)} nats. "
                + (
                    "Cov(log π, A) is negative when the policy is confident in the wrong "
                    "action, so the first steps spread the mass out."
                    if v == "rises"
                    else "The step moves mass toward the rewarded action."
                )
            ),
            choices=RISE_FALL,
        )
    )
    add(
        Question(
            "entropy/uniform",
            "entropy",
            {"preset": "uniform", "eta": "0.5"},
            "A uniform policy over 5 actions, one rewarded. Cov(log π, A) is zero. After one step "
            "with η = 0.5, does the entropy rise, fall or stay the same?",
            CHOICE,
            lambda: _direction(*_entropy_step("uniform", 0.5), 3),
            lambda v: (
                f"It {v}: from {fmt.fixed(_entropy_step('uniform', 0.5)[0], 3)} to "
                f"{fmt.fixed(_entropy_step('uniform', 0.5)[1], 3)} nats. A zero covariance "
                f"only makes the first-order change zero; the second-order term, "
                f"−Var(A)·η²/2, still lowers it."
            ),
            choices=RISE_FALL,
        )
    )

    # --- pass-at-k (Section 12.7.4, Exercise 28.7) ------------------------------------------
    add(
        Question(
            "pass-at-k/p-star",
            "pass-at-k",
            {"p": "0.05", "beta": "0.5"},
            "π₀ solves a problem with probability p = 0.05. At β = 0.5, what is the solve rate "
            "of the KL-regularized optimum?",
            NUMBER,
            lambda: float(pass_at_k.optimal_solve_rate(0.05, 0.5)),
            lambda v: (
                f"p* = {fmt.fixed(v, 2)}: every correct response is multiplied by e^(1/β) "
                f"before renormalizing, so p* ≥ p and pass@k at the optimum never falls "
                f"below π₀'s, at any k."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.04,
        )
    )

    # --- loop (Section 12.7.4) --------------------------------------------------------------
    add(
        Question(
            "loop/pass256",
            "loop",
            {"shared": "on"},
            "GRPO trains one parameter vector shared by 24 problems for 300 steps. pass@1 rises. "
            "What does pass@256 do between the first and the last step?",
            CHOICE,
            lambda: _direction(_loop_pass(True)[2], _loop_pass(True)[3], 3),
            lambda v: (
                f"It {v}: {fmt.fixed(_loop_pass(True)[2], 3)} → "
                f"{fmt.fixed(_loop_pass(True)[3], 3)}, while pass@1 goes "
                f"{fmt.fixed(_loop_pass(True)[0], 2)} → {fmt.fixed(_loop_pass(True)[1], 2)}. "
                f"The shared parameters sharpen the common problems' strategy and lose the "
                f"rare problems', which no optimum would do."
            ),
            choices=RISE_FALL,
        )
    )
    add(
        Question(
            "loop/rare",
            "loop",
            {"shared": "on"},
            f"In the same run, the {loop.RARE_DEFAULT} rare problems start with solve rate "
            f"{fmt.fixed(_loop_rare_start(), 2)} (only a strategy π₀ rarely uses is right there). "
            f"After 300 steps on the shared parameters, what is their mean solve rate?",
            NUMBER,
            lambda: _loop_rare(True, -1),
            lambda v: (
                f"{fmt.prob(v)}: the shared update that sharpens the common problems' "
                f"strategy takes probability from the one the rare problems need. With one "
                f"parameter vector per problem (shared=off) they would reach "
                f"{fmt.fixed(_loop_rare(False, -1), 2)}."
            ),
            lo=0,
            hi=1,
            step=0.001,
            tolerance=0.03,
        )
    )

    # --- token-credit (Exercise 28.2) -------------------------------------------------------
    add(
        Question(
            "token-credit/last",
            "token-credit",
            {"reward": "last", "kappa": "2", "y": "aac"},
            "The reward is 1 when the last token is c, else 0. Along the response “aac” at κ = 2, "
            "which token gets the most credit V*(s_{t+1}) − V*(s_t)?",
            CHOICE,
            lambda: _top_token("last", 2.0, "aac"),
            lambda v: (
                "The third: "
                + ", ".join(
                    fmt.fixed(float(c), 3, signed=True) for c in _credits("last", 2.0, "aac")
                )
                + ". The first two tokens do not change the soft value, since the reward "
                "depends only on the last one; the bandit view would give all three the "
                "same advantage."
                if v == TOKEN_CHOICES[2]
                else "Credits: "
                + ", ".join(
                    fmt.fixed(float(c), 3, signed=True) for c in _credits("last", 2.0, "aac")
                )
                + "."
            ),
            choices=TOKEN_CHOICES,
        )
    )

    # --- step-labels (Exercise 28.8) --------------------------------------------------------
    add(
        Question(
            "step-labels/hard-first",
            "step-labels",
            {"steps": "6", "skill": "0.6", "guess": "0.05", "n": "8"},
            "Step 1 of a 6-step solution is correct. A completer that gets each remaining step "
            "right with probability 0.6 finishes it 8 times; the hard label is 1 if any "
            "completion reaches the right answer. How likely is the label 1?",
            NUMBER,
            lambda: float(step_labels.hard_mean(step_labels.step_values(0.6, 0.05, 6)[0], 8)),
            lambda v: (
                f"{fmt.fixed(v, 2)}: the step's value under the completer is only "
                f"0.6⁵ = {fmt.fixed(float(step_labels.step_values(0.6, 0.05, 6)[0]), 3)}, so a "
                f"correct step is often labelled wrong; the labels measure the completer's "
                f"chance of finishing, not the step's correctness."
            ),
            lo=0,
            hi=1,
            step=0.01,
            tolerance=0.05,
        )
    )
    return qs


COMPARE = ("overstates it", "matches it", "understates it")
TOKEN_CHOICES = ("the first", "the second", "the third", "all three equally")


def _compare(estimate: float, exact: float, places: int) -> str:
    a, b = round(estimate, places), round(exact, places)
    return COMPARE[0] if a > b else COMPARE[2] if a < b else COMPARE[1]


def _further(plain: float, ppo: float) -> str:
    a, b = fmt.sig(plain, 2), fmt.sig(ppo, 2)
    return "about the same" if a == b else "the plain surrogate" if plain > ppo else "PPO"


def _rule_tv(rule: str) -> float:
    rows = {row["policy"]: row for row in _kl_experiment().summary_rows()}
    return float(rows[rule]["tv_to_target"])


def _closest_rule() -> str:
    return min(kl_penalty.RULES, key=_rule_tv)


def _credits(rule: str, kappa: float, y: str) -> np.ndarray:
    return token_credit.token_credits(token_credit.soft_tree(1.0 / kappa, rule), y)


def _top_token(rule: str, kappa: float, y: str) -> str:
    c = _credits(rule, kappa, y)
    if np.ptp(c) < 1e-9:
        return TOKEN_CHOICES[3]
    return TOKEN_CHOICES[int(np.argmax(c))]


@functools.lru_cache(maxsize=1)
def bank() -> dict[str, Question]:
    """Every question by id, in page order."""
    out: dict[str, Question] = {}
    for q in _questions():
        if q.id in out:
            raise ValueError(f"duplicate question id {q.id}")
        out[q.id] = q
    return out


def for_page(page: str) -> list[Question]:
    """The questions of one page (URL path), in the bank's order."""
    return [q for q in bank().values() if q.page == page]


def to_spec(q: Question) -> dict:
    """A JSON-able snapshot of ``q`` with its truth computed now (what a class session keeps)."""
    truth = q.truth()
    if q.kind == NUMBER:
        truth = float(truth)
    return {
        "id": q.id,
        "page": q.page,
        "setting": dict(q.setting),
        "prompt": q.prompt,
        "kind": q.kind,
        "lo": float(q.lo),
        "hi": float(q.hi),
        "step": float(q.step),
        "unit": q.unit,
        "choices": list(q.choices),
        "tolerance": float(q.tolerance),
        "truth": truth,
        "explain": q.explain(truth),
    }


# ----------------------------------------------------------------------------- answers
_SUPER = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?")
_PLAIN = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SCI = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))[×x*]10\^?([+-]?\d+)")


def _number(text: str) -> float:
    """A number as people type it (module notes); ValueError when it is not one."""
    s = re.sub(r"\s+", "", str(text)).replace("\u2212", "-").replace("\u2009", "")
    if _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    elif s.count(",") == 1 and "." not in s:
        s = s.replace(",", ".")
    m = _SCI.fullmatch(s.translate(_SUPER))
    if m:
        return float(f"{m.group(1)}e{m.group(2)}")  # 1e400 reads as inf, refused later
    if not _PLAIN.fullmatch(s):
        low = s.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity", "∞"):
            raise ValueError("Please give a finite number.")
        raise ValueError(f"“{str(text).strip()}” is not a number. Type digits, e.g. 0.5.")
    return float(s)


def _show(spec: dict, x: float) -> str:
    unit = spec.get("unit", "")
    text = fmt.short(x)
    return f"{text}%" if unit == "%" else f"{text} {unit}" if unit else text


def parse_answer(spec: dict, raw) -> float | str:
    """A student's answer as a number in the question's unit, or the chosen option.

    Raises ValueError with a message a student can act on when the answer is empty,
    malformed, not finite, out of range or not one of the choices."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ValueError("Please give an answer first.")
    if spec["kind"] == CHOICE:
        text = re.sub(r"\s+", " ", str(raw)).strip().casefold()
        for c in spec["choices"]:
            if c.casefold() == text:
                return c
        raise ValueError("Please pick one of: " + ", ".join(spec["choices"]) + ".")
    if isinstance(raw, bool):
        raise ValueError("Please give a number.")
    if isinstance(raw, (int, float, np.floating, np.integer)):
        x = float(raw)
        if not math.isfinite(x):
            raise ValueError("Please give a finite number.")
    else:
        text = str(raw).strip()
        percent = text.endswith("%")
        if percent:
            text = text[:-1]
        x = _number(text)
        if not math.isfinite(x):
            raise ValueError("Please give a finite number.")
        if percent and spec.get("unit") != "%":
            x /= 100.0
    lo, hi = float(spec["lo"]), float(spec["hi"])
    if not lo <= x <= hi:
        raise ValueError(f"Please give a number from {_show(spec, lo)} to {_show(spec, hi)}.")
    return x


def is_right(spec: dict, answer) -> bool:
    """Whether ``answer`` (as parse_answer returns it) is within the tolerance of the truth."""
    if spec["kind"] == CHOICE:
        return answer == spec["truth"]
    if answer is None or isinstance(answer, str):
        return False
    diff = abs(float(answer) - float(spec["truth"]))
    # a hair of slack so that an answer exactly at the edge counts despite binary rounding
    return diff <= float(spec["tolerance"]) * (1 + 1e-9) + 1e-12


# ----------------------------------------------------------------------------- "this number"
_VALUE = re.compile(
    r"(?P<num>[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?)"
    r"(?:\s*[×x]\s*10(?P<exp>[⁻\-]?[⁰¹²³⁴⁵⁶⁷⁸⁹0-9]+))?"
    r"\s*(?P<unit>%|nats?|×)?"
)  # "1.25×": a factor


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-") or "value"


def _page_title(page: str) -> str:
    from klrl_app.nav import PAGES

    return next((p.title for p in PAGES if p.url_path == page), page)


def _setting_text(setting: dict[str, str]) -> str:
    """The view's link parameters as a student reads them (the projector may have moved on by
    the time they answer): " at kappa = 20, axis = kl"; nothing for the defaults."""
    shown = [f"{k} = {v}" for k, v in setting.items() if k not in ("lock", "hide", "present")]
    return f" at {', '.join(shown)}" if shown else ""


def readout_question(page: str, setting: dict[str, str], label: str, value_text: str) -> dict:
    """A number question (a spec, as ``to_spec`` gives) on one readout item of a page's view,
    at the lecturer's setting: "what does the page show for ``label`` here?".

    The truth is the number in ``value_text`` (the page computed it with klrl_core); the input
    range, step and tolerance follow its magnitude and the precision shown. "a of b" (e.g.
    "5 of 20") asks for a, from 0 to b. Raises ValueError when the text is not one number."""
    text = re.sub(r"\s+", " ", str(value_text)).strip()
    of = re.fullmatch(r"(\d[\d,]*) of (\d[\d,]*)", text)
    if of:
        truth, total = float(of.group(1).replace(",", "")), float(of.group(2).replace(",", ""))
        lo, hi, step, unit, tol = 0.0, total, 1.0, "", max(1.0, round(0.1 * total))
        shown = f"{of.group(1)} of {of.group(2)}"
    else:
        m = _VALUE.fullmatch(text)
        if not m:
            raise ValueError(f"“{value_text}” is not a single number, so it cannot be asked.")
        num = m.group("num").replace("\u2212", "-").replace(",", "")
        truth = float(num)
        places = len(m.group("dec") or "")
        exp = 0
        if m.group("exp"):
            exp = int(m.group("exp").translate(_SUPER))
            truth = float(f"{num}e{exp}")
        step = 10.0 ** (exp - places)
        unit = {"%": "%", "nat": "nats", "nats": "nats"}.get(m.group("unit") or "", "")
        signed = num.startswith(("+", "-"))
        size = abs(truth)
        if unit == "%":
            hi = 100.0 if size <= 100 else 10.0 ** math.ceil(math.log10(2 * size))
            lo = -hi if signed or truth < 0 else 0.0
        elif not signed and unit == "" and size <= 1 and places > 0 and exp == 0:
            lo, hi = 0.0, 1.0  # a share or probability
        else:
            top = 10.0 ** math.ceil(math.log10(2 * size)) if size > 0 else 1.0
            lo, hi = (-top if signed or truth < 0 else 0.0), top
        # right within a tenth of the value (5 points for a percentage), at least one step
        tol = max(step, 0.1 * size, 5.0 if unit == "%" else 0.0)
        tol = round(tol, 1 - math.floor(math.log10(tol)))  # two figures, as a person says it
        shown = text
    return {
        "id": f"{page}/readout-{_slug(label)}",
        "page": page,
        "setting": dict(setting),
        "prompt": f"On the page “{_page_title(page)}”{_setting_text(setting)}, what does "
        f"the readout show for “{label}”?",
        "kind": NUMBER,
        "lo": lo,
        "hi": hi,
        "step": step,
        "unit": unit,
        "choices": [],
        "tolerance": float(tol),
        "truth": truth,
        "explain": f"The page shows {label} = {shown} at this setting.",
    }


# ----------------------------------------------------------------------------- results
def _valid(spec: dict, answers: list) -> list:
    out = []
    for a in answers:
        try:
            out.append(parse_answer(spec, a))
        except (ValueError, TypeError):
            continue
    return out


def places(step: float) -> int:
    """Decimals a step shows: 0.01 → 2, 1 → 0."""
    return max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0


def value_text(spec: dict, x: float) -> str:
    """A number of this question at its input's precision (its step), with its unit."""
    text = fmt.fixed(float(x), places(float(spec["step"])), min_sig=1)
    unit = spec.get("unit", "")
    return f"{text}%" if unit == "%" else f"{text} {unit}" if unit else text


def truth_text(spec: dict) -> str:
    """The truth as the handout and the results print it: a choice as it is, a number at the
    input's precision (its step) with its unit."""
    return str(spec["truth"]) if spec["kind"] == CHOICE else value_text(spec, spec["truth"])


def input_text(spec: dict) -> str:
    """What an answer looks like: "one of: …" or "a number from … to …"."""
    if spec["kind"] == CHOICE:
        return "one of: " + "; ".join(spec["choices"])
    return f"a number from {_show(spec, float(spec['lo']))} to {_show(spec, float(spec['hi']))}"


def tolerance_text(spec: dict) -> str:
    """How close counts as right, in words."""
    if spec["kind"] == CHOICE:
        return "the choice itself"
    tol = float(spec["tolerance"])
    if tol == 0:
        return "exactly"
    if spec.get("unit") == "%":
        return f"within {fmt.short(tol)} percentage point{'' if tol == 1 else 's'}"
    if spec.get("unit") == "nats" and tol == 1:
        return "within ±1 nat"
    return f"within ±{_show(spec, tol)}"


_truth_text = truth_text


def _share_text(spec: dict, answers: list) -> tuple[int, int, str]:
    n = len(answers)
    right = sum(is_right(spec, a) for a in answers)
    within = "chose it" if spec["kind"] == CHOICE else tolerance_text(spec) + " of it"
    if n == 0:
        return 0, 0, "No answers yet."
    return right, n, f"{right} of {n} answers ({fmt.pct(right / n)}) {within}."


PROJECTOR = {
    "height": 600,
    "font": {"size": 18},
    "margin": {"l": 16, "r": 16, "t": 110, "b": 16},
    "legend": {"font": {"size": 17}},
    "xaxis": {"title": {"font": {"size": 19}}},
    "yaxis": {"title": {"font": {"size": 19}}},
}
OUTLINE = "#808495"  # the template's mid-grey: a star's edge on light and dark alike
BAND = "rgba(20, 184, 166, 0.18)"


def _band(chart, axis: str, lo: float, hi: float) -> None:
    """Shade the answers that count as right: |answer − truth| ≤ tolerance."""
    other = "y" if axis == "x" else "x"
    chart.layout["shapes"].append(
        {
            "type": "rect",
            "xref": axis if axis == "x" else "x domain",
            "yref": axis if axis == "y" else "y domain",
            f"{axis}0": lo,
            f"{axis}1": hi,
            f"{other}0": 0,
            f"{other}1": 1,
            "layer": "below",
            "fillcolor": BAND,
            "line": {"width": 0},
        }
    )


def _spread(n: int, width: float) -> np.ndarray:
    """Fixed horizontal offsets for n marks at one x, so equal answers do not hide each other."""
    if n == 0:
        return np.zeros(0)
    return (np.arange(n) % 9 - 4) / 4 * width / 2


def _marks(chart, x, y, name: str = "the class's answers") -> None:
    chart.add(
        x=list(map(float, x)),
        y=list(map(float, y)),
        mode="markers",
        name=name,
        marker={
            "color": COLORS["accent"],
            "size": 14,
            "opacity": 0.7,
            "line": {"color": "white", "width": 1},
        },
        hovertemplate="%{x:.3g}, %{y:.3g}<extra>an answer</extra>",
    )


def _truth_mark(chart, x, y, text: str) -> None:
    chart.add(
        x=[float(x)],
        y=[float(y)],
        mode="markers",
        name=f"truth {text}",
        marker={
            "color": COLORS["true"],
            "size": 24,
            "symbol": "star",
            "line": {"color": OUTLINE, "width": 1.5},
        },
    )


def _fig_overoptimization_peak(spec, values):
    """The class's KLs as marks on Figure 12.5's exact true-reward-against-KL curve."""
    log_pi0, r, r_true = _book()
    front = tilt.frontier(log_pi0, r, tilt.kappa_grid())
    kl, true = front.kl, front.pi @ r_true
    chart = Chart("KL(π* ‖ π₀), nats", "expected true reward E[r*]")
    chart.add(
        x=kl,
        y=true,
        mode="lines",
        name="true reward along the optimum",
        line={"color": COLORS["true"], "width": 3},
    )
    v = np.clip(np.asarray(values, float), kl[0], kl[-1])
    _marks(chart, v, np.interp(v, kl, true))
    t = float(spec["truth"])
    _truth_mark(chart, t, float(np.interp(t, kl, true)), _truth_text(spec))
    chart.vline(t, COLORS["true"], "dash", 2)
    _band(chart, "x", t - float(spec["tolerance"]), t + float(spec["tolerance"]))
    return chart


def _fig_groups_signal(spec, values):
    """The class's shares as marks at p = 0.1 beside the exact 1 − p^k − (1 − p)^k curve."""
    p_set, k = float(spec["setting"].get("p", 0.1)), int(spec["setting"].get("k", 8))
    p = np.linspace(0.0, 1.0, 201)
    chart = Chart("solve rate p", "share of groups with signal")
    chart.add(
        x=p,
        y=groups.signal_probability(p, k),
        mode="lines",
        name=f"1 − pᵏ − (1 − p)ᵏ, k = {k}",
        line={"color": COLORS["optimum"], "width": 3},
    )
    _marks(chart, p_set + _spread(len(values), 0.04), values)
    _truth_mark(chart, p_set, float(spec["truth"]), _truth_text(spec))
    _band(
        chart,
        "y",
        float(spec["truth"]) - float(spec["tolerance"]),
        float(spec["truth"]) + float(spec["tolerance"]),
    )
    chart.update(yaxis={"range": [-0.03, 1.05]})
    return chart


def _fig_tilt_reward(spec, values):
    """The class's rewards as marks at the optimum's KL on Figure 12.2's exact frontier."""
    kappa = float(spec["setting"].get("kappa", 20))
    log_pi0, r, _ = _book()
    front = tilt.frontier(log_pi0, r, tilt.kappa_grid())
    at = float(_tilt_at(kappa).kl)
    chart = Chart("KL(π* ‖ π₀), nats", "expected reward E[r]")
    chart.add(
        x=front.kl,
        y=front.expected,
        mode="lines",
        name="frontier of the optimum",
        line={"color": COLORS["optimum"], "width": 3},
    )
    _marks(chart, at + _spread(len(values), 0.4), values)
    _truth_mark(chart, at, float(spec["truth"]), _truth_text(spec))
    _band(
        chart,
        "y",
        float(spec["truth"]) - float(spec["tolerance"]),
        float(spec["truth"]) + float(spec["tolerance"]),
    )
    chart.update(yaxis={"range": [-0.03, 1.05]})
    return chart


def _fig_best_of_n(spec, values):
    """The class's n as marks on the exact KL of best-of-n against n, and the optimum's KL."""
    kappa = float(spec["setting"].get("kappa", 20))
    log_pi0, r, _ = _book()
    target = float(_tilt_at(kappa).kl)
    v = np.asarray(values, float)
    top = max(1e5, float(v.max()) * 2 if v.size else 1.0)
    n = np.unique(np.geomspace(1, top, 300).round())
    chart = Chart("n (log scale)", "KL(best-of-n ‖ π₀), nats")
    chart.add(
        x=n,
        y=best_of_n.best_of_n(log_pi0, r, n).kl,
        mode="lines",
        name="exact best-of-n",
        line={"color": COLORS["best_of_n"], "width": 3},
    )
    chart.hline(target, COLORS["optimum"], "dash", f"optimum's KL at κ = {fmt.short(kappa)}")
    if v.size:
        _marks(chart, v, best_of_n.best_of_n(log_pi0, r, v).kl)
    t = float(spec["truth"])
    _truth_mark(chart, t, float(best_of_n.best_of_n(log_pi0, r, t).kl), _truth_text(spec))
    tol = float(spec["tolerance"])
    _band(chart, "x", max(t - tol, 1.0), t + tol)
    chart.update(xaxis={"type": "log"})
    return chart


_EXACT = {
    "overoptimization/peak": _fig_overoptimization_peak,
    "groups/signal": _fig_groups_signal,
    "tilt/reward": _fig_tilt_reward,
    "best-of-n/n": _fig_best_of_n,
}


def _histogram(spec, values):
    t, tol = float(spec["truth"]), float(spec["tolerance"])
    lo, hi = float(spec["lo"]), float(spec["hi"])
    v = np.asarray(values, float)
    # bins of the tolerance's width around the truth, over the answers' spread
    a = min([t - 3 * tol] + list(v))
    b = max([t + 3 * tol] + list(v))
    width = max(tol, float(spec["step"]), (b - a) / 40) or 1.0
    edges = (
        t
        - width / 2
        + width * np.arange(math.floor((a - t) / width) - 1, math.ceil((b - t) / width) + 2)
    )
    edges = edges[(edges >= lo - width) & (edges <= hi + width)]
    counts, _ = np.histogram(v, edges)
    mids = (edges[:-1] + edges[1:]) / 2
    unit = spec.get("unit", "")
    chart = Chart(f"answer ({unit})" if unit else "answer", "number of answers")
    chart.add(
        "bar",
        x=mids,
        y=counts,
        width=width * 0.9,
        name="the class's answers",
        marker={"color": COLORS["accent"]},
    )
    _band(chart, "x", t - tol, t + tol)
    chart.vline(t, COLORS["true"], "dash", 3)
    chart.add(
        x=[t],
        y=[0],
        mode="markers",
        name=f"truth {_truth_text(spec)}",
        marker={
            "color": COLORS["true"],
            "size": 22,
            "symbol": "star",
            "line": {"color": OUTLINE, "width": 1.5},
        },
    )
    return chart


def _bars(spec, values):
    counts = [sum(1 for a in values if a == c) for c in spec["choices"]]
    colors = [COLORS["true"] if c == spec["truth"] else COLORS["neutral"] for c in spec["choices"]]
    names = [f"{c} ✓" if c == spec["truth"] else c for c in spec["choices"]]
    chart = Chart("", "number of answers")
    chart.add(
        "bar",
        x=names,
        y=counts,
        marker={"color": colors},
        name="the class's answers",
        text=counts,
        textposition="outside",
        showlegend=False,
    )
    return chart


def results_figure(spec: dict, answers: list):
    """The class's answers against the truth, and the figure's text alternative.

    On the page's exact figure where one fits (``_EXACT``), a histogram of the numbers
    otherwise, a bar per option for a choice; the title states the share within the
    tolerance. Unreadable answers are left out."""
    import plotly.graph_objects as go

    values = _valid(spec, answers)
    right, n, share = _share_text(spec, values)
    if spec["kind"] == CHOICE:
        chart, what = _bars(spec, values), "Bar chart of the class's choices"
    elif spec["id"] in _EXACT:
        chart, what = (
            _EXACT[spec["id"]](spec, values),
            ("The class's answers marked on the page's exact figure"),
        )
    else:
        chart, what = _histogram(spec, values), "Histogram of the class's answers"
    chart.update(
        **PROJECTOR,
        title={
            "text": f"Truth: {_truth_text(spec)} · {share}",
            "x": 0.01,
            "xanchor": "left",
            "font": {"size": 22},
        },
    )
    fig = go.Figure(chart.figure())
    alt = f"{what} for “{spec['prompt']}”. The truth is {_truth_text(spec)}. {share}"
    return fig, alt


def shown(spec: dict, value, truth: bool = False) -> str:
    """An answer as typed (up to 6 significant figures), a truth to 3; a choice as written."""
    if spec["kind"] == "choice" or isinstance(value, str):
        return str(value)
    text = fmt.sig(float(value), 3, trim=True) if truth else fmt.short(float(value))
    unit = spec.get("unit") or ""
    return f"{text}%" if unit == "%" else f"{text} {unit}".rstrip()
