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
from typing import Callable

import numpy as np

from klrl_app import fmt
from klrl_app.plots import COLORS, Chart
from klrl_core import bandit, best_of_n, groups, model, tilt

NUMBER, CHOICE = "number", "choice"


@dataclass(frozen=True)
class Question:
    id: str                              # "<page>/<name>", stable
    page: str                            # URL path of the page
    setting: dict[str, str]              # the page's query parameters at the question's setting
    prompt: str
    kind: str                            # NUMBER or CHOICE
    truth: Callable[[], float | str]     # calls klrl_core
    explain: Callable[[float | str], str]
    lo: float = 0.0
    hi: float = 1.0
    step: float = 0.01
    unit: str = ""                       # "nats", "%" or ""
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


def _peak():
    log_pi0, r, r_true = _book()
    k, t = tilt.true_reward_peak(log_pi0, r, r_true)
    return k, float(t.kl), float(t.pi @ r_true)


def _matched_n(kappa: float) -> int:
    log_pi0, r, _ = _book()
    return best_of_n.matched_n(log_pi0, r, float(_tilt_at(kappa).kl))


# ----------------------------------------------------------------------------- the bank
def _questions() -> list[Question]:
    qs: list[Question] = []
    add = qs.append

    # --- bandit (Figure 12.1) ---------------------------------------------------------------
    add(Question(
        "bandit/below-half", "bandit", {"lr": "0.15", "baseline": "off"},
        "4,000 learners each run REINFORCE for 300 pulls at learning rate 0.15, with no "
        "baseline. What percentage of them end with the best arm's probability below one half?",
        NUMBER, lambda: 100 * _many_runs(0.15, False)["share_below"],
        lambda v: (f"{fmt.pct(v / 100)} of the 4,000 runs end below ½ although the exact gradient "
                   f"climbs steadily: with rewards around 1 and no baseline, every pull pushes up "
                   f"whichever arm was drawn, and early luck decides where a run settles."),
        lo=0, hi=100, step=1, unit="%", tolerance=5))

    # --- tilt (Figure 12.2) -----------------------------------------------------------------
    add(Question(
        "tilt/reward", "tilt", {"kappa": "20"},
        "At κ = 20 (β = 0.05), what is the expected reward under the optimum π*? "
        "(Under π₀ it is about 0.31; the best response has reward 1.)",
        NUMBER, lambda: float(_tilt_at(20.0).expected),
        lambda v: (f"E_π*[r] = {fmt.fixed(v, 2)} at κ = 20, short of the top reward 1 because "
                   f"the best responses are so rare under π₀ that reaching them costs "
                   f"{fmt.fixed(float(_tilt_at(20.0).kl), 2)} nats of KL."),
        lo=0, hi=1, step=0.01, tolerance=0.05))

    # --- best-of-n (Figure 12.3) ------------------------------------------------------------
    add(Question(
        "best-of-n/n", "best-of-n", {"kappa": "20"},
        "The optimum at β = 0.05 (κ = 20) spends a certain KL from π₀. For which n does "
        "best-of-n (draw n responses from π₀, keep the best) spend the same KL?",
        NUMBER, lambda: _matched_n(20.0),
        lambda v: (f"Best-of-{int(v):,} spends the optimum's "
                   f"{fmt.fixed(float(_tilt_at(20.0).kl), 2)} nats: KL grows only like log n, "
                   f"so matching even a few nats takes hundreds of samples."),
        lo=1, hi=1e7, step=1, tolerance=50))

    # --- groups (Figure 12.4) ---------------------------------------------------------------
    add(Question(
        "groups/signal", "groups", {"p": "0.1", "k": "8"},
        "A prompt is solved with probability p = 0.1. GRPO samples a group of k = 8 responses. "
        "What share of such groups carry any learning signal (not all right, not all wrong)?",
        NUMBER, lambda: float(groups.signal_probability(0.1, 8)),
        lambda v: (f"1 − 0.9⁸ − 0.1⁸ = {fmt.fixed(v, 2)}: the other "
                   f"{fmt.pct(1 - v)} of groups are all wrong (or, rarely, all right), their "
                   f"advantages are all zero and they teach nothing."),
        lo=0, hi=1, step=0.01, tolerance=0.05))

    # --- overoptimization (Figure 12.5) -----------------------------------------------------
    add(Question(
        "overoptimization/peak", "overoptimization", {"kappa": "20"},
        "As κ grows the optimum moves away from π₀ and its expected proxy reward keeps rising. "
        "At what KL from π₀ (in nats) does its expected TRUE reward peak?",
        NUMBER, lambda: _peak()[1],
        lambda v: (f"The true reward peaks at {fmt.fixed(_peak()[2], 2)} at KL "
                   f"{fmt.fixed(v, 1)} nats (κ ≈ {fmt.sig(_peak()[0], 3)}); beyond it the "
                   f"optimum buys proxy reward on responses the true reward rates lower."),
        lo=0, hi=12, step=0.1, unit="nats", tolerance=0.4))
    return qs


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
    return {"id": q.id, "page": q.page, "setting": dict(q.setting), "prompt": q.prompt,
            "kind": q.kind, "lo": float(q.lo), "hi": float(q.hi), "step": float(q.step),
            "unit": q.unit, "choices": list(q.choices), "tolerance": float(q.tolerance),
            "truth": truth, "explain": q.explain(truth)}


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
        return float(m.group(1)) * 10.0 ** int(m.group(2))
    if not _PLAIN.fullmatch(s):
        low = s.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity", "∞"):
            raise ValueError("Please give a finite number.")
        raise ValueError(f"“{str(text).strip()}” is not a number. Type digits, e.g. 0.5.")
    return float(s)


def _places(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0


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
    r"\s*(?P<unit>%|nats?|√nats)?")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-") or "value"


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
            lo, hi = 0.0, 1.0                    # a share or probability
        else:
            top = 10.0 ** math.ceil(math.log10(2 * size)) if size > 0 else 1.0
            lo, hi = (-top if signed or truth < 0 else 0.0), top
        # right within a tenth of the value (5 points for a percentage), at least one step
        tol = max(step, 0.1 * size, 5.0 if unit == "%" else 0.0)
        tol = float(f"{tol:.2g}")                # a tolerance as a person would state it
        shown = text
    return {
        "id": f"{page}/readout-{_slug(label)}", "page": page, "setting": dict(setting),
        "prompt": f"At the setting on the projector, what does the page show for “{label}”?",
        "kind": NUMBER, "lo": lo, "hi": hi, "step": step, "unit": unit, "choices": [],
        "tolerance": float(tol), "truth": truth,
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


def _truth_text(spec: dict) -> str:
    t = spec["truth"]
    if spec["kind"] == CHOICE:
        return str(t)
    text = fmt.sig(float(t), 3, trim=True)
    unit = spec.get("unit", "")
    return f"{text}%" if unit == "%" else f"{text} {unit}" if unit else text


def _share_text(spec: dict, answers: list) -> tuple[int, int, str]:
    n = len(answers)
    right = sum(is_right(spec, a) for a in answers)
    if spec["kind"] == CHOICE:
        within = "chose it"
    else:
        within = f"within ±{_show(spec, float(spec['tolerance']))} of it"
    if n == 0:
        return 0, 0, "No answers yet."
    return right, n, f"{right} of {n} answers ({fmt.pct(right / n)}) {within}."


PROJECTOR = {"height": 600, "font": {"size": 18}, "margin": {"l": 16, "r": 16, "t": 96, "b": 16},
             "legend": {"font": {"size": 16}}}


def _spread(n: int, width: float) -> np.ndarray:
    """Fixed horizontal offsets for n marks at one x, so equal answers do not hide each other."""
    if n == 0:
        return np.zeros(0)
    return (np.arange(n) % 9 - 4) / 4 * width / 2


def _marks(chart, x, y, name: str = "the class's answers") -> None:
    chart.add(x=list(map(float, x)), y=list(map(float, y)), mode="markers", name=name,
              marker={"color": COLORS["accent"], "size": 14, "opacity": 0.7,
                      "line": {"color": "white", "width": 1}},
              hovertemplate="%{x:.3g}, %{y:.3g}<extra>an answer</extra>")


def _truth_mark(chart, x, y, text: str) -> None:
    chart.add(x=[float(x)], y=[float(y)], mode="markers", name=f"truth {text}",
              marker={"color": COLORS["true"], "size": 22, "symbol": "star",
                      "line": {"color": "black", "width": 1.5}})


def _fig_overoptimization_peak(spec, values):
    """The class's KLs as marks on Figure 12.5's exact true-reward-against-KL curve."""
    log_pi0, r, r_true = _book()
    front = tilt.frontier(log_pi0, r, tilt.kappa_grid())
    kl, true = front.kl, front.pi @ r_true
    chart = Chart("KL(π* ‖ π₀), nats", "expected true reward E[r*]")
    chart.add(x=kl, y=true, mode="lines", name="true reward along the optimum",
              line={"color": COLORS["true"], "width": 3})
    v = np.clip(np.asarray(values, float), kl[0], kl[-1])
    _marks(chart, v, np.interp(v, kl, true))
    t = float(spec["truth"])
    _truth_mark(chart, t, float(np.interp(t, kl, true)), _truth_text(spec))
    chart.vline(t, COLORS["true"], "dash", 2)
    return chart


def _fig_groups_signal(spec, values):
    """The class's shares as marks at p = 0.1 beside the exact 1 − p^k − (1 − p)^k curve."""
    p_set, k = float(spec["setting"].get("p", 0.1)), int(spec["setting"].get("k", 8))
    p = np.linspace(0.0, 1.0, 201)
    chart = Chart("solve rate p", "share of groups with signal")
    chart.add(x=p, y=groups.signal_probability(p, k), mode="lines",
              name=f"1 − pᵏ − (1 − p)ᵏ, k = {k}", line={"color": COLORS["optimum"], "width": 3})
    _marks(chart, p_set + _spread(len(values), 0.04), values)
    _truth_mark(chart, p_set, float(spec["truth"]), _truth_text(spec))
    chart.update(yaxis={"range": [-0.03, 1.05]})
    return chart


def _fig_tilt_reward(spec, values):
    """The class's rewards as marks at the optimum's KL on Figure 12.2's exact frontier."""
    kappa = float(spec["setting"].get("kappa", 20))
    log_pi0, r, _ = _book()
    front = tilt.frontier(log_pi0, r, tilt.kappa_grid())
    at = float(_tilt_at(kappa).kl)
    chart = Chart("KL(π* ‖ π₀), nats", "expected reward E[r]")
    chart.add(x=front.kl, y=front.expected, mode="lines", name="frontier of the optimum",
              line={"color": COLORS["optimum"], "width": 3})
    _marks(chart, at + _spread(len(values), 0.4), values)
    _truth_mark(chart, at, float(spec["truth"]), _truth_text(spec))
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
    chart.add(x=n, y=best_of_n.best_of_n(log_pi0, r, n).kl, mode="lines",
              name="exact best-of-n", line={"color": COLORS["best_of_n"], "width": 3})
    chart.hline(target, COLORS["optimum"], "dash", f"optimum's KL at κ = {fmt.short(kappa)}")
    if v.size:
        _marks(chart, v, best_of_n.best_of_n(log_pi0, r, v).kl)
    t = float(spec["truth"])
    _truth_mark(chart, t, float(best_of_n.best_of_n(log_pi0, r, t).kl), _truth_text(spec))
    chart.update(xaxis={"type": "log"})
    return chart


_EXACT = {"overoptimization/peak": _fig_overoptimization_peak,
          "groups/signal": _fig_groups_signal,
          "tilt/reward": _fig_tilt_reward,
          "best-of-n/n": _fig_best_of_n}


def _histogram(spec, values):
    t, tol = float(spec["truth"]), float(spec["tolerance"])
    lo, hi = float(spec["lo"]), float(spec["hi"])
    v = np.asarray(values, float)
    # bins of the tolerance's width around the truth, over the answers' spread
    a = min([t - 3 * tol] + list(v))
    b = max([t + 3 * tol] + list(v))
    width = max(tol, float(spec["step"]), (b - a) / 40) or 1.0
    edges = t - width / 2 + width * np.arange(math.floor((a - t) / width) - 1,
                                              math.ceil((b - t) / width) + 2)
    edges = edges[(edges >= lo - width) & (edges <= hi + width)]
    counts, _ = np.histogram(v, edges)
    mids = (edges[:-1] + edges[1:]) / 2
    unit = spec.get("unit", "")
    chart = Chart(f"answer ({unit})" if unit else "answer", "number of answers")
    chart.add("bar", x=mids, y=counts, width=width * 0.9, name="the class's answers",
              marker={"color": COLORS["accent"]})
    chart.layout["shapes"].append({"type": "rect", "xref": "x", "x0": t - tol, "x1": t + tol,
                                   "yref": "y domain", "y0": 0, "y1": 1, "layer": "below",
                                   "fillcolor": "rgba(20, 184, 166, 0.18)", "line": {"width": 0}})
    chart.vline(t, COLORS["true"], "dash", 3)
    chart.add(x=[t], y=[0], mode="markers", name=f"truth {_truth_text(spec)}",
              marker={"color": COLORS["true"], "size": 20, "symbol": "star",
                      "line": {"color": "black", "width": 1.5}})
    return chart


def _bars(spec, values):
    counts = [sum(1 for a in values if a == c) for c in spec["choices"]]
    colors = [COLORS["true"] if c == spec["truth"] else COLORS["neutral"] for c in spec["choices"]]
    names = [f"{c} ✓" if c == spec["truth"] else c for c in spec["choices"]]
    chart = Chart("", "number of answers")
    chart.add("bar", x=names, y=counts, marker={"color": colors}, name="the class's answers",
              text=counts, textposition="outside", showlegend=False)
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
        chart, what = _EXACT[spec["id"]](spec, values), ("The class's answers marked on the "
                                                          "page's exact figure")
    else:
        chart, what = _histogram(spec, values), "Histogram of the class's answers"
    chart.update(**PROJECTOR, title={"text": f"Truth: {_truth_text(spec)} · {share}",
                                     "x": 0.01, "xanchor": "left", "font": {"size": 22}})
    chart.update(legend={"y": -0.15, "yanchor": "top"})
    fig = go.Figure(chart.figure())
    alt = f"{what} for “{spec['prompt']}”. The truth is {_truth_text(spec)}. {share}"
    return fig, alt
