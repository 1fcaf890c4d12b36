"""The pass-at-k page's figures (Section 12.7.4, Exercise 28.7): pass@k of π₀ and π* against k,
their gap, a problem set before and after a training run beside the optimum, and the
estimators' expectations, each with its text alternative. pages/pass-at-k.py wires them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from klrl_app import controls, fmt, layout, lru
from klrl_app.passk import K_MAX, LOG_K_AXIS, YUE, YUE_K, add_yue_marks
from klrl_app.plots import COLORS, Chart
from klrl_core import pass_at_k as core

RUN_COLOR = COLORS["incorrect"]
BAND = "rgba(59, 130, 246, 0.18)"
K_GRID = np.arange(1, K_MAX + 1, dtype=float)  # every k, for exact statements
EXERCISE_K = 32  # Exercise 28.7(b) compares pass@1 and pass@32


def draw_grid(*extra: int, top: int = K_MAX) -> np.ndarray:
    """About 120 whole k from 1 to ``top``, spaced evenly on the log axis, plus ``extra``."""
    ks = np.unique(np.round(np.logspace(0, np.log10(top), 120)))
    ks = np.union1d(ks, [e for e in extra if 1 <= e <= top])
    return ks.astype(float)


@lru.memo
def estimator_curves(p: float, n: int, k: int) -> pd.DataFrame:
    """Expected unbiased and plug-in estimates over c ~ Binomial(n, p), exact sums, on a k
    grid (the unbiased one only where k <= n)."""
    ks_e = draw_grid(k, top=K_MAX)
    plug = np.asarray(core.plugin_estimator_mean(p, n, ks_e))
    unb = np.full(ks_e.size, np.nan)
    ok = ks_e <= n
    unb[ok] = np.asarray(core.unbiased_estimator_mean(p, n, ks_e[ok]))
    return pd.DataFrame(
        {
            "k": ks_e.astype(int),
            "pass@k (exact)": core.pass_at_k(p, ks_e),
            "E[unbiased estimate]": unb,
            "E[plug-in estimate]": plug,
        }
    )


def estimates_at(est: pd.DataFrame, k: int) -> tuple[float, float, float]:
    """The exact pass@k and the two estimators' expectations at k, from ``estimator_curves``."""
    row = est[est["k"] == k].iloc[0]
    return (
        float(row["pass@k (exact)"]),
        float(row["E[unbiased estimate]"]),
        float(row["E[plug-in estimate]"]),
    )


class StopGrid:
    """Every stop's curves on one k grid: the ~120 log-spaced k, the chosen k and every stop's
    peak (so each stop's curve passes through its own marked peak and the x values never
    change in a drag), and one y range for the gap over every stop. Both depend on β and k
    only; a linked p between stops adds its own peak to its own grid."""

    def __init__(self, stops, beta: float, k: int):
        self.beta, self.peaks = beta, {}
        self.peaks = {q: self.peak(q) for q in stops}
        self.stop_ks = draw_grid(k, *(kp for kp, _ in self.peaks.values()))
        self.gap_top = 1.06 * max(g for _, g in self.peaks.values())

    def peak(self, q: float) -> tuple[int, float]:
        """Where the gap pass@k(π*) − pass@k(π₀) is largest over k = 1 … 1,024, and its size."""
        return self.peaks[q] if q in self.peaks else core.largest_optimum_gain(q, self.beta, K_MAX)

    def ks(self, q: float) -> np.ndarray:
        return self.stop_ks if q in self.peaks else np.union1d(self.stop_ks, [self.peak(q)[0]])

    def charts(self, q: float, k: int, beta_text: str) -> dict[str, tuple[Chart, str]]:
        """Both figures at solve rate q (its curves and its gap), k marked."""
        q_star, ks = float(core.optimal_solve_rate(q, self.beta)), self.ks(q)
        return {
            "pass-at-k-curves": curves_chart(q, q_star, k, ks, beta_text),
            "pass-at-k-gap": gap_chart(q, q_star, k, ks, self.peak(q), self.gap_top),
        }


def unbiased_deviation(est: pd.DataFrame) -> float:
    """The largest distance of the unbiased estimator's expectation from pass@k (rounding)."""
    return float(np.nanmax(np.abs(est["E[unbiased estimate]"] - est["pass@k (exact)"])))


def estimates_frame(k_est: int, samples: int, point: tuple[float, float, float]) -> pd.DataFrame:
    """The three expectations at k_est (``estimates_at``) and the plug-in's bias."""
    true_e, unb_e, plug_e = point
    return pd.DataFrame(
        {
            "quantity": [
                "pass@k (exact)",
                "E[unbiased estimate]",
                "E[plug-in estimate]",
                "plug-in bias",
            ],
            f"k = {k_est:,}, n = {samples:,}": [true_e, unb_e, plug_e, plug_e - true_e],
        }
    )


def one_problem_frame(p: float, p_star: float) -> pd.DataFrame:
    """pass@k of π₀ and π* and their gap at every k = 1 … 1,024."""
    base, opt = np.asarray(core.pass_at_k(p, K_GRID)), np.asarray(core.pass_at_k(p_star, K_GRID))
    return pd.DataFrame(
        {"k": K_GRID.astype(int), "pass@k pi0": base, "pass@k pi*": opt, "gap": opt - base}
    )


def yue_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "k": list(YUE_K),
            "base (%)": [100 * v for v in YUE["base"]],
            "after GRPO (%)": [100 * v for v in YUE["trained"]],
            "source": "measured by Yue et al. (2025), not computed here",
        }
    )


@dataclass(frozen=True)
class ProblemSet:
    """A problem set's solve rates before and after a training run and at the optimum
    (``p_opt``), each set's mean pass@k at every k = 1 … 1,024, and the first k at which the
    base overtakes the trained run (None: never up to 1,024)."""

    before: np.ndarray
    after: np.ndarray
    p_opt: np.ndarray
    base: np.ndarray
    trained: np.ndarray
    opt: np.ndarray
    cross: int | None

    @classmethod
    def at(cls, before: np.ndarray, after: np.ndarray, beta: float) -> ProblemSet:
        p_opt = np.asarray(core.optimal_solve_rate(before, beta))
        curves = (np.asarray(core.mixture_pass_at_k(r, K_GRID)) for r in (before, after, p_opt))
        return cls(before, after, p_opt, *curves, core.crossover_k(before, after, K_MAX))

    @property
    def fell(self) -> int:
        """How many problems' rates the training run lowered."""
        return int(np.sum(self.after < self.before))

    @property
    def lost(self) -> int:
        """How many problems the base solves sometimes and the trained run never."""
        return int(np.sum((self.before > 0) & (self.after == 0)))

    @property
    def names(self) -> list[str]:
        return [
            chr(ord("A") + i) if self.before.size <= 26 else str(i + 1)
            for i in range(self.before.size)
        ]

    def chart(self, k: int, beta_text: str) -> tuple[Chart, str]:
        cross = self.cross
        ks_set = draw_grid(k, EXERCISE_K, 256, *(c for c in [cross] if c))
        return set_chart(
            ks_set,
            self.before,
            self.after,
            self.p_opt,
            beta_text,
            cross,
            None if cross is None else float(self.base[cross - 1]),
        )

    def pass_table(self, k: int, beta_text: str) -> pd.DataFrame:
        """The three policies' pass@k at k = 1, EXERCISE_K and k."""
        rows = {
            "policy": [
                "base model (before)",
                "after the training run",
                f"optimum at β = {beta_text}",
            ]
        }
        for kk in [1, EXERCISE_K] + ([k] if k not in (1, EXERCISE_K) else []):
            rows[f"pass@{kk}"] = [
                float(self.base[kk - 1]),
                float(self.trained[kk - 1]),
                float(self.opt[kk - 1]),
            ]
        return pd.DataFrame(rows)

    def rates_frame(self, before: str, after: str, optimum: str) -> pd.DataFrame:
        """Each problem's three rates, in columns of the given names."""
        return pd.DataFrame(
            {"problem": self.names, before: self.before, after: self.after, optimum: self.p_opt}
        )

    def curves_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "k": K_GRID.astype(int),
                "base (before)": self.base,
                "after training": self.trained,
                "optimum": self.opt,
            }
        )


def yue_pct(which: str, i: int) -> str:
    """One of Yue et al.'s measured numbers as the paper prints it (a percentage, 1 decimal)."""
    return fmt.pct(YUE[which][i], 1)


def curves_chart(
    q: float, q_star: float, k: int, ks: np.ndarray, beta_text: str
) -> tuple[Chart, str]:
    """pass@k of π₀ (solve rate q) and π* (q_star) on the k grid ``ks``, k marked."""
    base_c, opt_c = np.asarray(core.pass_at_k(q, ks)), np.asarray(core.pass_at_k(q_star, ks))
    base_q, opt_q = float(core.pass_at_k(q, k)), float(core.pass_at_k(q_star, k))
    c = Chart("attempts k (log scale)", "pass@k", height=360)
    c.add(
        x=ks,
        y=base_c,
        mode="lines",
        name="π₀ (reference)",
        line={"color": COLORS["reference"], "width": 3},
        hovertemplate="k = %{x:,}<br>π₀: %{y:.3f}<extra></extra>",
    )
    c.add(
        x=ks,
        y=opt_c,
        mode="lines",
        name="π* (optimum)",
        fill="tonexty",
        fillcolor=BAND,
        line={"color": COLORS["optimum"], "width": 3},
        hovertemplate="k = %{x:,}<br>π*: %{y:.3f}<extra></extra>",
    )
    c.vline(k, COLORS["neutral"])
    c.add(
        x=[k, k],
        y=[base_q, opt_q],
        mode="markers",
        name=f"k = {k:,}",
        marker={
            "size": 10,
            "color": [COLORS["reference"], COLORS["optimum"]],
            "line": {"color": "white", "width": 1.5},
        },
        hovertemplate=f"k = {k:,}<br>pass@k %{{y:.3f}}<extra></extra>",
    )
    c.update(xaxis=LOG_K_AXIS, yaxis={"range": [0, 1.04]})
    return c, (
        f"Line chart of pass@k against the number of attempts k from 1 to 1,024 on a log axis, "
        f"for the reference π₀ (solve rate {fmt.fixed(q, 3)}) and the optimum π* at β = "
        f"{beta_text} "
        f"(solve rate {fmt.fixed(q_star, 3)}), with the band between them shaded. π*'s curve lies "
        f"above "
        f"π₀'s at every k; at k = {k:,} they are {fmt.fixed(opt_q, 3)} and {fmt.fixed(base_q, 3)}."
    )


def gap_chart(
    q: float, q_star: float, k: int, ks: np.ndarray, peak: tuple[int, float], gap_top: float
) -> tuple[Chart, str]:
    """The gap pass@k(π*) − pass@k(π₀) on ``ks``, its largest value ``peak`` = (k, gap) and
    k marked, on the y range [0, gap_top]."""
    base_c, opt_c = np.asarray(core.pass_at_k(q, ks)), np.asarray(core.pass_at_k(q_star, ks))
    base_q, opt_q = float(core.pass_at_k(q, k)), float(core.pass_at_k(q_star, k))
    kp, gp = peak
    g = Chart("attempts k (log scale)", "pass@k of π* minus pass@k of π₀", height=360)
    g.add(
        x=ks,
        y=opt_c - base_c,
        mode="lines",
        name="gap",
        fill="tozeroy",
        fillcolor=BAND,
        line={"color": COLORS["optimum"], "width": 3},
        hovertemplate="k = %{x:,}<br>gap %{y:.4f}<extra></extra>",
    )
    g.add(
        x=[kp],
        y=[gp],
        mode="markers",
        name=f"largest at k = {kp:,}",
        marker={"size": 10, "symbol": "diamond", "color": COLORS["accent"]},
        hovertemplate="k = %{x:,}<br>gap %{y:.4f}<extra></extra>",
    )
    g.add(
        x=[k],
        y=[opt_q - base_q],
        mode="markers",
        name=f"k = {k:,}",
        marker={"size": 10, "color": COLORS["optimum"], "line": {"color": "white", "width": 1.5}},
        hovertemplate="k = %{x:,}<br>gap %{y:.4f}<extra></extra>",
    )
    g.update(xaxis=LOG_K_AXIS, yaxis={"range": [0, gap_top]})
    return g, (
        f"Line chart of the gap pass@k(π*) − pass@k(π₀) against k from 1 to 1,024 on a log "
        f"axis, on its own scale: positive at every k, largest at k = {kp:,} "
        f"({fmt.fixed(gp, 4)}), {fmt.fixed(opt_q - base_q, 4)} at k = {k:,}."
    )


def set_chart(
    ks_set: np.ndarray,
    before: np.ndarray,
    after: np.ndarray,
    p_opt: np.ndarray,
    beta_text: str,
    cross: int | None,
    cross_y: float | None,
) -> tuple[Chart, str]:
    """A problem set's mean pass@k before and after a training run and at the optimum (rates
    ``p_opt``), Yue et al.'s measured marks, and where the base overtakes (``cross``)."""
    kb, ka = (
        np.asarray(core.mixture_pass_at_k(before, ks_set)),
        np.asarray(core.mixture_pass_at_k(after, ks_set)),
    )
    ko = np.asarray(core.mixture_pass_at_k(p_opt, ks_set))
    s = Chart("attempts k (log scale)", "pass@k, averaged over the problems", height=380)
    s.add(
        x=ks_set,
        y=kb,
        mode="lines",
        name="base model (before)",
        line={"color": COLORS["reference"], "width": 3},
        hovertemplate="k = %{x:,}<br>base: %{y:.3f}<extra></extra>",
    )
    s.add(
        x=ks_set,
        y=ka,
        mode="lines",
        name="after the training run",
        line={"color": RUN_COLOR, "width": 3, "dash": "dash"},
        hovertemplate="k = %{x:,}<br>after training: %{y:.3f}<extra></extra>",
    )
    s.add(
        x=ks_set,
        y=ko,
        mode="lines",
        name=f"optimum at β = {beta_text}",
        line={"color": COLORS["optimum"], "width": 3},
        hovertemplate="k = %{x:,}<br>optimum: %{y:.3f}<extra></extra>",
    )
    add_yue_marks(
        s,
        size=13,
        base={
            "name": "Yue et al., base (diamonds): measured, not computed here",
            "color": COLORS["reference"],
            "hover": "measured (Yue et al. 2025), base Qwen2.5-7B",
        },
        trained={
            "name": "Yue et al., after GRPO (squares): measured, not computed here",
            "color": RUN_COLOR,
            "hover": "measured (Yue et al. 2025), after GRPO",
        },
    )
    if cross is not None:
        s.vline(cross, RUN_COLOR, dash="dot", width=1.5)
        s.add(
            x=[cross],
            y=[cross_y],
            mode="markers",
            name=f"base overtakes at k = {cross:,}",
            marker={"size": 10, "color": RUN_COLOR, "symbol": "x"},
            hovertemplate="k = %{x:,}<br>base %{y:.3f}<extra></extra>",
        )
    s.update(xaxis=LOG_K_AXIS, yaxis={"range": [0, 1.04]}, legend={"font": {"size": 12}})
    return s, (
        f"Line chart of pass@k averaged over {before.size} problems against k from 1 to "
        f"1,024 on a log axis: the base model, the model after a training run, and the "
        f"optimum at β = {beta_text} computed from the base's rates. "
        + (
            f"The base overtakes the trained run at k = {cross:,}. "
            if cross
            else "The base never overtakes the trained run up to k = 1,024. "
        )
        + f"Yue et al.'s measurement at k = 1 and 256 is marked with open diamonds for "
        f"the base ({yue_pct('base', 0)} and {yue_pct('base', 1)}) and open squares "
        f"after GRPO ({yue_pct('trained', 0)} and {yue_pct('trained', 1)}), "
        f"measured on a real model, not computed here."
    )


def estimator_chart(
    est: pd.DataFrame, p: float, samples: int, k_est: int, point: tuple[float, float, float]
) -> tuple[Chart, str]:
    """The estimators' expectations ``est`` (columns k, exact pass@k, E[unbiased], E[plug-in])
    for π₀ at solve rate p from n = ``samples``; ``point`` = the three at k_est."""
    true_e, unb_e, plug_e = point
    e = Chart("attempts k (log scale)", "expected estimate of π₀'s pass@k", height=360)
    e.add(
        x=est["k"],
        y=est["pass@k (exact)"],
        mode="lines",
        name="pass@k (exact)",
        line={"color": COLORS["reference"], "width": 3},
        hovertemplate="k = %{x:,}<br>pass@k %{y:.4f}<extra></extra>",
    )
    shown = est.dropna()
    e.add(
        x=shown["k"],
        y=shown["E[unbiased estimate]"],
        mode="markers",
        name="E[1 − C(n−c, k)/C(n, k)]",
        marker={"size": 7, "color": COLORS["best_of_n"]},
        hovertemplate="k = %{x:,}<br>unbiased: %{y:.4f}<extra></extra>",
    )
    e.add(
        x=est["k"],
        y=est["E[plug-in estimate]"],
        mode="lines",
        name="E[1 − (1 − c/n)^k]",
        line={"color": COLORS["proxy"], "width": 3, "dash": "dash"},
        hovertemplate="k = %{x:,}<br>plug-in: %{y:.4f}<extra></extra>",
    )
    if samples < K_MAX:
        e.vline(samples, COLORS["neutral"], dash="dash")
    e.add(
        x=[k_est],
        y=[plug_e],
        mode="markers",
        name=f"k = {k_est:,}",
        marker={"size": 11, "color": COLORS["proxy"], "symbol": "diamond"},
        hovertemplate="k = %{x:,}<br>plug-in %{y:.4f}<extra></extra>",
    )
    e.update(xaxis=LOG_K_AXIS, yaxis={"range": [0, 1.04]})
    return e, (
        f"Line chart of the expected value of two estimators of π₀'s pass@k (p = "
        f"{fmt.fixed(p, 3)}) "
        f"from n = {samples:,} samples, against k on a log axis: the exact pass@k, the "
        f"unbiased estimator's expectation (markers on the exact curve, for k up to n) and "
        f"the plug-in estimator's (dashed, below). At k = {k_est:,}: {fmt.fixed(true_e, 3)}, "
        f"{fmt.fixed(unb_e, 3)} and {fmt.fixed(plug_e, 3)}."
    )


def details(
    p: float,
    p_star: float,
    beta_text: str,
    grid: StopGrid,
    problems: ProblemSet,
    est: pd.DataFrame,
    samples: int,
) -> None:
    """The numbers behind the figures: pass@k of one problem at the k drawn, and five
    downloads (it for every k, the problems' rates and pass@k, the estimators, Yue et al.)."""
    one = one_problem_frame(p, p_star)
    layout.table(one.iloc[np.unique(np.r_[grid.ks(p).astype(int) - 1])])
    stem = f"pass_at_k_p_{controls.fmt_number(p)}_beta_{beta_text}"
    layout.csv_download(
        one, f"{stem}.csv", label="Download pass@k for k = 1…1,024 (CSV)", key="pass-at-k-csv"
    )
    layout.csv_download(
        problems.rates_frame("rate before", "rate after", "optimum rate"),
        f"pass_at_k_problems_beta_{beta_text}.csv",
        label="Download the problems' rates (CSV)",
        key="pass-at-k-rates-csv",
    )
    layout.csv_download(
        problems.curves_frame(),
        f"pass_at_k_problem_set_beta_{beta_text}.csv",
        label="Download the problem set's pass@k (CSV)",
        key="pass-at-k-set-csv",
    )
    layout.csv_download(
        est.assign(n=samples),
        f"pass_at_k_estimators_p_{controls.fmt_number(p)}_n_{samples}.csv",
        label="Download the estimators' expectations (CSV)",
        key="pass-at-k-est-csv",
    )
    layout.csv_download(
        yue_frame(),
        "pass_at_k_yue_measured.csv",
        label="Download Yue et al.'s measured reference marks (CSV)",
        key="pass-at-k-yue-csv",
    )
