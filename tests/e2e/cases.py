"""The pages the browser drives, one row each: path, main slider, expected readouts, bad links.

Every expected number is computed here from ``klrl_core`` and formatted the way the chapter
prints it; nothing is typed in. Adding a page is adding one ``PageCase`` to ``PAGES``.
The benchmarks (benchmarks/latency.py, benchmarks/load.py) drive the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from functools import lru_cache, cache
from collections.abc import Callable

import numpy as np

from klrl_core import (
    bandit as core_bandit,
    baseline as core_baseline,
    best_of_n as core_bon,
    groups as core_groups,
)
from klrl_core import kl_penalty as core_klp, length_bias as core_lb, model, tilt as core_tilt

Readout = dict[str, str]


# --------------------------------------------------------------------------- formatting
def f2(x: float, digits: int = 2) -> str:
    """A readout number at the chapter's precision, with a true minus sign."""
    return f"{x:.{digits}f}".replace("-", "−")


def signed(x: float, digits: int = 2) -> str:
    return ("+" if x > 0 else "") + f2(x, digits)


def pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:.{digits}f}%"


SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def tv_text(x: float) -> str:
    """Three decimals; a positive distance that would read 0.000 in two significant figures
    (review item 7: 0.000 read as "on the target")."""
    if x == 0 or f"{x:.3f}" != "0.000":
        return f"{x:.3f}"
    m, e = f"{x:.1e}".split("e")
    return f"{m} × 10{str(int(e)).translate(SUPER)}"


def share_text(x: float) -> str:
    """A percentage to one decimal; a positive share gets up to three before it reads 0."""
    for places in (1, 2, 3):
        text = f"{100 * x:.{places}f}"
        if x == 0 or text.strip("0.") != "":
            return text + "%"
    return "< 0.001%"


def num_text(x: float) -> str:
    """How a number is written in a link: 5 not 5.0, 0.15 not 0.15000000000000002."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def beta_text(kappa: float) -> str:
    return "∞" if kappa == 0 else f"{1.0 / kappa:.3g}"


# ------------------------------------------------------------------------------ rows
@dataclass(frozen=True)
class Slider:
    """A page's main slider and what the page must show for each of its values."""

    label: str  # accessible name (the widget's label)
    param: str  # its query parameter
    default: float
    readout: Callable[[float], Readout]  # metric label -> value text, from klrl_core
    stops: Callable[[], list[float]] | None = None  # select_slider options (else lo/hi/step)
    lo: float = 0.0
    hi: float = 1.0
    step: float = 1.0
    url_text: Callable[[float], str] = num_text
    # Text the readout sentence shows for a value, where the metric cards alone may not change
    # from one slider stop to the next (the latency benchmark needs a visible change per press).
    sentence: Callable[[float], str] | None = None

    def want(self, value: float) -> dict:
        """Everything the page must show for a value: metric cards and sentence marker."""
        return {
            "metrics": self.readout(value),
            "sentence": self.sentence(value) if self.sentence else None,
        }

    def neighbour(self, value: float, direction: int) -> float:
        """The value one arrow key press away (ArrowRight: +1, ArrowLeft: -1)."""
        if self.stops is not None:
            stops = self.stops()
            i = stops.index(value) + direction
            return stops[min(max(i, 0), len(stops) - 1)]
        new = round(value + direction * self.step, 10)
        return min(max(new, self.lo), self.hi)


@dataclass(frozen=True)
class BadLink:
    """A malformed or out-of-range link, and what the page must show instead."""

    query: dict[str, str]
    expect: Callable[[], Readout]  # computed when the test runs, not at collection
    id: str = ""


@dataclass(frozen=True)
class PageCase:
    slug: str  # test id and screenshot name
    path: str  # URL path ("" for home)
    title: str  # the page's heading
    slider: Slider | None = None
    bad_links: tuple[BadLink, ...] = ()
    marks: tuple = field(default=())  # pytest marks for the whole row (e.g. not built yet)

    @property
    def default_readout(self) -> Readout:
        return self.slider.readout(self.slider.default) if self.slider else {}


# ------------------------------------------------------------------------ tilt (12.2)
@cache
def _book():
    r = model.rewards()
    log_pi0 = model.log_reference(r)
    return r, log_pi0, float(np.exp(log_pi0) @ r)


def tilt_numbers(kappa: float):
    """(pi*, KL, E[r] under pi*, E[r] under pi0) at kappa, from klrl_core."""
    r, log_pi0, reward_pi0 = _book()
    t = core_tilt.tilt(log_pi0, r, kappa)
    return t.pi, float(t.kl), float(t.expected), reward_pi0


def tilt_readout(kappa: float) -> Readout:
    _, kl, reward, reward_pi0 = tilt_numbers(kappa)
    return {
        "KL(π* ‖ π₀)": f"{f2(kl)} nats",
        "E[r] under π*": f2(reward),
        "E[r] under π₀": f2(reward_pi0),
        "β = dE[r]/dKL here": beta_text(kappa),
    }


def kappa_stops() -> list[float]:
    from klrl_app.controls import kappa_options  # the slider's stops (not a computation)

    return kappa_options()


KAPPA_LABEL = "Inverse KL weight κ = 1/β"


def kappa_slider(default: float, readout: Callable[[float], Readout]) -> Slider:
    return Slider(KAPPA_LABEL, "kappa", default, readout, stops=kappa_stops)


def kappa_bad_links(
    readout: Callable[[float], Readout], default: float, full: bool = False
) -> tuple[BadLink, ...]:
    """Malformed kappa/beta links; the full set on one page, two on the others (time)."""
    links = (
        BadLink({"kappa": "abc"}, lambda: readout(default), "kappa-abc"),
        BadLink({"beta": "0"}, lambda: readout(10_000.0), "beta-0-clamped"),
    )
    if full:
        links += (
            BadLink({"kappa": "-3"}, lambda: readout(0.0), "kappa-negative-clamped"),
            BadLink({"kappa": "nan"}, lambda: readout(default), "kappa-nan"),
        )
    return links


# -------------------------------------------------------------------- best-of-n (12.3)
def best_of_n_numbers(kappa: float, n: int | None = None):
    """(tilt, n, best-of-n) at kappa; n None means the KL-matched n, from klrl_core."""
    r, log_pi0, _ = _book()
    t = core_tilt.tilt(log_pi0, r, kappa)
    chosen = n is not None
    if n is None:
        n = core_bon.matched_n(log_pi0, r, float(t.kl))
    return t, int(n), core_bon.best_of_n(log_pi0, r, n), chosen


def best_of_n_readout(kappa: float, n: int | None = None) -> Readout:
    t, n, bon, chosen = best_of_n_numbers(kappa, n)
    how = "chosen" if chosen else "KL-matched"
    return {
        "π*: KL": f"{f2(float(t.kl))} nats",
        "π*: E[r]": f2(float(t.expected)),
        f"n ({how})": f"{n:,}",
        f"best-of-{n:,}: KL": f"{f2(float(bon.kl))} nats",
        "log n − (n−1)/n": f"{f2(float(bon.bound))} nats",
        f"best-of-{n:,}: E[r]": f2(float(bon.expected)),
    }


# -------------------------------------------------------------- overoptimization (12.5)
@cache
def _true_peak():
    r, log_pi0, _ = _book()
    r_true = model.true_reward(r)
    _, peak = core_tilt.true_reward_peak(log_pi0, r, r_true)
    return float(peak.pi @ r_true), float(peak.kl)


def overoptimization_readout(kappa: float) -> Readout:
    r, log_pi0, _ = _book()
    t = core_tilt.tilt(log_pi0, r, kappa)
    true = float(t.pi @ model.true_reward(r))
    peak_true, peak_kl = _true_peak()
    return {
        "KL(π* ‖ π₀)": f"{f2(float(t.kl))} nats",
        "proxy E[r]": f2(float(t.expected)),
        "true E[r*]": f2(true),
        "true reward's peak": f"{f2(peak_true)} at {f2(peak_kl, 1)} nats",
    }


# ------------------------------------------------------------------------ bandit (12.1)
@lru_cache(maxsize=256)
def bandit_numbers(
    lr: float, baseline: bool = False, seed: int = core_baseline.PRINTED_FIGURE_SEED
):
    """(the 20 runs drawn, their summary, the 4,000-run summary), from klrl_core."""
    runs = core_bandit.simulate_reinforce(
        core_bandit.N_SHOWN, core_bandit.DEFAULT_STEPS, lr, baseline, seed
    )
    many = core_bandit.many_run_summary(
        lr, baseline, n_runs=core_bandit.N_MANY, steps=core_bandit.DEFAULT_STEPS
    )
    return runs, core_bandit.final_summary(runs), many


def bandit_readout(
    lr: float, baseline: bool = False, seed: int = core_baseline.PRINTED_FIGURE_SEED
) -> Readout:
    _, shown, many = bandit_numbers(lr, baseline, seed)
    n, m = core_bandit.N_SHOWN, f"{core_bandit.N_MANY:,}"
    return {
        "lr": num_text(lr),
        f"Mean · {n}": f2(shown["mean"]),
        f"Spread · {n}": f2(shown["std"]),
        "Below ½": f"{shown['n_below']} of {n}",
        f"Mean · {m}": f2(many["mean"]),
        f"Spread · {m}": f2(many["std"]),
        f"Below ½ · {m}": pct(many["share_below"]),
    }


# ------------------------------------------------------------------------ groups (12.4)
def _signal_text(x: float) -> str:
    """Two decimals, or three where two would read 1.00 (the page never prints 1.00 beside a
    positive share of flat groups), or "> 0.999"."""
    if f2(x) != "1.00":
        return f2(x)
    return f2(x, 3) if f2(x, 3) != "1.000" else "> 0.999"


def _flat_text(x: float) -> str:
    if pct(x) != "0%":
        return pct(x)
    return pct(x, 1) if pct(x, 1) != "0.0%" else "< 0.1%"


def groups_readout(p: float, k: int = 8) -> Readout:
    signal = core_groups.signal_probability(p, k)
    c = core_groups.most_likely_mixed_group(p, k)
    right, wrong = core_groups.mixed_group_advantages(c, k)
    return {
        "Has signal": _signal_text(signal),
        "All right or all wrong": _flat_text(core_groups.no_signal_probability(p, k)),
        "Likeliest mixed group": f"{c:,} of {k:,} correct",
        "Correct gets": signed(right),
        "Incorrect gets": signed(wrong),
    }


# ------------------------------------------------------------ kl-penalty (chapter 28)
@lru_cache(maxsize=64)
def kl_penalty_result(
    beta: float, seed: int = core_klp.SEED_DEFAULT, steps: int = core_klp.STEPS_DEFAULT
):
    return core_klp.run_experiment(beta=beta, seed=seed, steps=steps)


def kl_penalty_readout(
    beta: float, seed: int = core_klp.SEED_DEFAULT, steps: int = core_klp.STEPS_DEFAULT
) -> Readout:
    res = kl_penalty_result(beta, seed, steps)
    est = res.estimators
    rows = {row["policy"]: row for row in res.summary_rows()}
    return {
        "KL(π* ‖ π_ref)": f"{est.true_kl:.4f} nats",
        "k1 estimates < 0": share_text(est.share_negative[0]),
        "TV(k3 loss, fwd opt.)": tv_text(rows["k3 as a loss"]["tv_to_forward"]),
        "TV(π*, fwd opt.)": tv_text(rows["pi* (target)"]["tv_to_forward"]),
    }


# ----------------------------------------------------------- length-bias (chapter 28)
@lru_cache(maxsize=64)
def length_bias_result(
    steps: int, runs: int = core_lb.RUNS_DEFAULT, seed: int = core_lb.SEED_DEFAULT
):
    return core_lb.simulate(steps=int(steps), runs=runs, seed=seed)


def length_bias_readout(
    steps: float, runs: int = core_lb.RUNS_DEFAULT, seed: int = core_lb.SEED_DEFAULT
) -> Readout:
    res = length_bias_result(int(steps), runs, seed)
    out: Readout = {}
    for m in core_lb.METHODS:
        f = res.final(m)
        out[f"{m} P(correct)"] = f2(f["p_correct"])
        out[f"{m} length if right / wrong"] = (
            f"{f2(f['len_correct'], 1)} / {f2(f['len_incorrect'], 1)}"
        )
    return out


# ------------------------------------------------------------------------- dpo (12.6)
@lru_cache(maxsize=64)
def dpo_readout(kappa: float) -> Readout:
    """The run after 200 gradient steps on 1,000 Bradley-Terry pairs (seed 0), and pi*."""
    from klrl_core import dpo as core_dpo

    r, log_pi0, _ = _book()
    r_true = model.true_reward(r)
    w = core_dpo.comparisons(log_pi0, r, 1000, "bt", 0)
    run = core_dpo.dpo_gradient_steps(w, log_pi0, 1.0 / kappa, 200)
    star = core_tilt.tilt(log_pi0, r, kappa)
    return {
        "run: KL": f"{f2(float(run.kl[-1]))} nats",
        "run: E[r] / E[r*]": f"{f2(float(run.pi[-1] @ r))} / {f2(float(run.pi[-1] @ r_true))}",
        "π*: E[r] / E[r*]": f"{f2(float(star.expected))} / {f2(float(star.pi @ r_true))}",
    }


# ---------------------------------------------------------------- pass-at-k (12.7.4)
# The p slider's stops, as pages/pass-at-k.py lists them (written out again: a check).
PASS_AT_K_P_STOPS = [
    0.001,
    0.002,
    0.003,
    0.005,
    0.007,
    0.01,
    0.015,
    0.02,
    0.03,
    0.04,
    0.05,
    0.06,
    0.08,
    0.1,
    0.12,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.55,
    0.6,
    0.65,
    0.7,
    0.75,
    0.8,
    0.85,
    0.9,
    0.95,
    0.97,
    0.99,
    0.995,
    0.999,
]


def pass_at_k_readout(p: float, beta: float = 0.5, k: int = 10) -> Readout:
    from klrl_core import pass_at_k as core_pk

    p_star = float(core_pk.optimal_solve_rate(p, beta))
    out = {"p* (optimum)": below_one(p_star), "π₀ pass@1": below_one(p)}
    if k > 1:
        out |= {
            f"π₀ pass@{k}": below_one(float(core_pk.pass_at_k(p, k))),
            f"π* pass@{k}": below_one(float(core_pk.pass_at_k(p_star, k))),
        }
    return out


def below_one(x: float) -> str:
    """A chance below 1 (every p on the pass-at-k page is) to 3 decimals, or more until it
    does not read 1, and "> 0.999999" past that: never written as certain (issue 31)."""
    for places in range(3, 7):
        if f"{x:.{places}f}" != f"{1:.{places}f}":
            return f"{x:.{places}f}"
    return "> 0.999999"


# ------------------------------------------------------------------- rarity (12.3.3)
RARITY_P0_STOPS = [float(f"{m}e{e}") for e in range(-12, 0) for m in (1, 2, 5)]


def rarity_readout(p0: float, delta: float = 1.0, beta: float = 0.05) -> Readout:
    from klrl_core import rarity as core_rarity

    import math

    pi = float(core_rarity.two_response_optimum(p0, delta, beta))
    out = (
        {"Eq. 12.7 threshold β": f"{delta / math.log(1 / p0):.4f}"}
        if delta / math.log(1 / p0) >= 0.01
        else {}
    )
    # the page prints 3 decimals from 0.001 up, powers of ten below (not checked here)
    if pi >= 1e-3 and f2(pi, 3) != "1.000":  # nearer 1 the page adds decimals (fmt.prob)
        out["π*(y₁), two responses"] = f2(pi, 3)
    return out


# ------------------------------------------------------- ppo-clip, normalization, entropy
def ppo_clip_readout(eps: float) -> Readout:
    """Where Equation 12.2's objective stops growing for A > 0: past omega = 1 + eps."""
    return {"A > 0 flat for": f"ω > {f2(1 + eps)}"}


NORMALIZATION_K_STOPS = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256]


def normalization_readout(k: float) -> Readout:
    """Mean-centring shortens the expected update by (k - 1)/k (Exercise 28.4(b))."""
    k = int(k)
    return {"Mean-centred": f"{k - 1}/{k} = {f2((k - 1) / k, 3)}"}


def entropy_readout(eta: float) -> Readout:
    """Exact entropy after one natural-gradient step z + eta*A, written out here, and the
    first-order prediction H - eta*Cov(log pi, A), on the default preset (confident on the
    rewarded action: pi = (0.70, 0.12, 0.08, 0.06, 0.04), A = (1, 0, 0, 0, 0))."""
    z = np.log([0.70, 0.12, 0.08, 0.06, 0.04])
    a = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    pi = np.exp(z) / np.exp(z).sum()
    h0 = -float(pi @ np.log(pi))
    cov = float(pi @ (np.log(pi) * a)) - float(pi @ np.log(pi)) * float(pi @ a)
    w = np.exp(z + eta * a)
    q = w / w.sum()
    pred = h0 - eta * cov
    return {
        "H after the step": f"{f2(-float(q @ np.log(q)), 3)} nats",
        "First-order prediction": f"{f2(pred, 3)} nats"
        + (" (below 0: no entropy can be)" if pred < 0 else ""),
    }


def token_credit_readout(kappa: float) -> Readout:
    """The token tree's V*(x) and E_π*[r] under the middle rule, by enumerating the 27
    responses here (SPEC.md: r = [y2 = b] + 0.2·[y3 = c], π_ref = (0.5, 0.3, 0.2))."""
    import itertools

    ref = {"a": 0.5, "b": 0.3, "c": 0.2}
    ys = ["".join(t) for t in itertools.product("abc", repeat=3)]
    r = np.array([(y[1] == "b") + 0.2 * (y[2] == "c") for y in ys])
    lp = np.log([ref[y[0]] * ref[y[1]] * ref[y[2]] for y in ys])
    if kappa == 0:
        return {"E_π*[r]": f2(float(np.exp(lp) @ r), 3)}
    w = lp + kappa * r
    top = w.max()
    log_z = top + np.log(np.exp(w - top).sum())
    pi = np.exp(w - log_z)
    return {"V*(x)": f2(log_z / kappa, 3), "E_π*[r]": f2(float(pi @ r), 3)}


def step_labels_readout(q: float, g: float = 0.05, n: int = 8) -> Readout:
    """Step 3 of 6 (SPEC.md's step model): a correct prefix's value q³, a wrong one's g; the
    hard label's mean 1 − (1 − v)^N."""
    v = q**3

    def label(x: float) -> str:  # 3 decimals; two significant figures below 0.01
        if 0 < x < 0.01:
            return f"{x:.{1 - math.floor(math.log10(x))}f}"
        return f2(x, 3)

    return {
        "correct step 3, soft": label(v),
        "correct step 3, hard": label(1 - (1 - v) ** n),
        "wrong step 3, soft": label(g),
    }


@lru_cache(maxsize=1)
def _loop_run():
    from klrl_core import loop

    return loop.run()


def loop_readout(step: float) -> Readout:
    """pass@1 and pass@256 at a training step of the default runs (20 runs of GRPO), from
    klrl_core.loop's run and pass_at_k, averaged over the runs here."""
    from klrl_core import pass_at_k

    rates = _loop_run().success[:, int(step)]
    p1 = np.mean([pass_at_k.mixture_pass_at_k(r, 1) for r in rates])
    p256 = np.mean([pass_at_k.mixture_pass_at_k(r, 256) for r in rates])
    return {
        "GRPO step": f"{int(step):,} of 300",
        "pass@1 base → now": f"0.258 → {f2(p1, 3)}",
        "pass@256 base → now": f"1.000 → {f2(p256, 3)}",
    }


# ------------------------------------------------------------------------------ table
HOME = PageCase("home", "", "How reinforcement learning reshapes a language model")

TILT = PageCase(
    "tilt",
    "tilt",
    "The KL-regularized optimum",
    slider=kappa_slider(5.0, tilt_readout),
    bad_links=kappa_bad_links(tilt_readout, 5.0, full=True),
)

BEST_OF_N = PageCase(
    "best-of-n",
    "best-of-n",
    "Best-of-n against the optimum",
    slider=kappa_slider(20.0, best_of_n_readout),
    bad_links=kappa_bad_links(best_of_n_readout, 20.0)
    + (
        BadLink({"n": "-3"}, lambda: best_of_n_readout(20.0, 1), "n-negative-clamped"),
        BadLink(
            {"n": "100000000"}, lambda: best_of_n_readout(20.0, core_bon.N_MAX), "n-huge-clamped"
        ),
    ),
)

OVEROPTIMIZATION = PageCase(
    "overoptimization",
    "overoptimization",
    "Overoptimizing a proxy",
    slider=kappa_slider(20.0, overoptimization_readout),
    bad_links=kappa_bad_links(overoptimization_readout, 20.0),
)

# The learning rate's stops: 0.01 apart up to 0.2, then 0.05 apart up to 1.
BANDIT_LR_STOPS = [round(0.01 * i, 2) for i in range(1, 21)] + [
    round(0.05 * i, 2) for i in range(5, 21)
]

BANDIT = PageCase(
    "bandit",
    "bandit",
    "Policy gradient on a bandit",
    slider=Slider(
        "Learning rate", "lr", core_bandit.DEFAULT_LR, bandit_readout, stops=lambda: BANDIT_LR_STOPS
    ),
    bad_links=(
        BadLink({"lr": "nan"}, lambda: bandit_readout(0.15), "lr-nan"),
        BadLink({"lr": "5"}, lambda: bandit_readout(1.0), "lr-above-clamped"),
        BadLink({"seed": "xyz"}, lambda: bandit_readout(0.15), "seed-xyz"),
        BadLink({"baseline": "maybe"}, lambda: bandit_readout(0.15), "baseline-maybe"),
    ),
)

GROUPS = PageCase(
    "groups",
    "groups",
    "When a group carries signal",
    slider=Slider(
        "Solve rate p of the prompt", "p", 0.10, groups_readout, lo=0.01, hi=0.99, step=0.01
    ),
    bad_links=(
        BadLink({"p": "2"}, lambda: groups_readout(0.99), "p-above-clamped"),
        BadLink({"k": "1"}, lambda: groups_readout(0.10, 2), "k-below-clamped"),
        BadLink({"k": "100000"}, lambda: groups_readout(0.10, 1024), "k-above-clamped"),
    ),
)

KL_PENALTY = PageCase(
    "kl-penalty",
    "kl-penalty",
    "Where the KL penalty goes",
    slider=Slider(
        "KL weight β (κ = 1/β)",
        "beta",
        core_klp.BETA_DEFAULT,
        kl_penalty_readout,
        lo=0.05,
        hi=5.0,
        step=0.05,
    ),
    bad_links=(
        BadLink({"beta": "0"}, lambda: kl_penalty_readout(0.05), "beta-0-clamped"),
        BadLink({"seed": "xyz"}, lambda: kl_penalty_readout(core_klp.BETA_DEFAULT), "seed-xyz"),
    ),
)

LENGTH_BIAS = PageCase(
    "length-bias",
    "length-bias",
    "GRPO's length bias",
    slider=Slider(
        "Training steps",
        "steps",
        core_lb.STEPS_DEFAULT,
        length_bias_readout,
        lo=100,
        hi=5000,
        step=100,
        sentence=lambda v: f"{int(v)} steps",
    ),
    bad_links=(
        BadLink({"steps": "-3"}, lambda: length_bias_readout(100), "steps-negative-clamped"),
        BadLink({"runs": "abc"}, lambda: length_bias_readout(core_lb.STEPS_DEFAULT), "runs-abc"),
    ),
)

DPO = PageCase(
    "dpo",
    "dpo",
    "Direct preference optimization",
    slider=kappa_slider(20.0, dpo_readout),
    bad_links=(
        BadLink({"pairs": "abc"}, lambda: dpo_readout(20.0), "pairs-abc"),
        BadLink({"labels": "maybe"}, lambda: dpo_readout(20.0), "labels-maybe"),
    ),
)

PASS_AT_K = PageCase(
    "pass-at-k",
    "pass-at-k",
    "pass@k at the optimum",
    slider=Slider(
        "Solve rate p of π₀", "p", 0.05, pass_at_k_readout, stops=lambda: PASS_AT_K_P_STOPS
    ),
    bad_links=(BadLink({"p": "2"}, lambda: pass_at_k_readout(0.999), "p-above-clamped"),),
)

RARITY = PageCase(
    "rarity",
    "rarity",
    "The price of rarity",
    slider=Slider(
        "Reference probability p₀ of y₁", "p0", 1e-9, rarity_readout, stops=lambda: RARITY_P0_STOPS
    ),
    bad_links=(BadLink({"delta": "-1"}, lambda: rarity_readout(1e-9, 0.01), "delta-clamped"),),
)

PPO_CLIP = PageCase(
    "ppo-clip",
    "ppo-clip",
    "PPO's clipped surrogate",
    slider=Slider("Clip range ε", "eps", 0.2, ppo_clip_readout, lo=0.05, hi=0.5, step=0.01),
    bad_links=(BadLink({"eps": "abc"}, lambda: ppo_clip_readout(0.2), "eps-abc"),),
)

NORMALIZATION = PageCase(
    "normalization",
    "normalization",
    "Group normalisation across prompts",
    slider=Slider(
        "Group size k", "k", 8, normalization_readout, stops=lambda: NORMALIZATION_K_STOPS
    ),
    bad_links=(BadLink({"k": "1"}, lambda: normalization_readout(2), "k-below-clamped"),),
)

ENTROPY = PageCase(
    "entropy",
    "entropy",
    "Why entropy collapses",
    slider=Slider("Step size η", "eta", 0.5, entropy_readout, lo=0.05, hi=5.0, step=0.05),
    bad_links=(BadLink({"eta": "nan"}, lambda: entropy_readout(0.5), "eta-nan"),),
)

TOKEN_CREDIT = PageCase(
    "token-credit",
    "token-credit",
    "Credit inside a response",
    slider=kappa_slider(2.0, token_credit_readout),
    bad_links=(BadLink({"reward": "most"}, lambda: token_credit_readout(2.0), "reward-unknown"),),
)

STEP_LABELS = PageCase(
    "step-labels",
    "step-labels",
    "Rewarding the steps: labels from rollouts",
    slider=Slider(
        "Completer's skill q", "skill", 0.6, step_labels_readout, lo=0.0, hi=1.0, step=0.01
    ),
    bad_links=(BadLink({"n": "0"}, lambda: step_labels_readout(0.6, n=1), "n-below-clamped"),),
)

# The page opens at the runs' last step, where an arrow to the right has nowhere to go: the
# browser rows open it in the middle of the runs (its bad links are AppTest's).
LOOP = PageCase(
    "loop",
    "loop?step=150",
    "What narrows pass@k in training",
    slider=Slider("Training step", "step", 150, loop_readout, stops=lambda: list(range(0, 301, 3))),
)

EXERCISES = PageCase("exercises", "exercises", "Exercises")

PAGES: list[PageCase] = [
    HOME,
    BANDIT,
    PPO_CLIP,
    TILT,
    RARITY,
    BEST_OF_N,
    GROUPS,
    OVEROPTIMIZATION,
    DPO,
    KL_PENALTY,
    LENGTH_BIAS,
    NORMALIZATION,
    ENTROPY,
    PASS_AT_K,
    LOOP,
    TOKEN_CREDIT,
    STEP_LABELS,
    EXERCISES,
]
SLIDER_PAGES = [p for p in PAGES if p.slider is not None]
