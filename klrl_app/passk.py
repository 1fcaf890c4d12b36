"""What the pass@k charts share (pass-at-k, loop): the log-k axis from 1 to 1,024 and Yue et
al.'s (2025) measured marks, written once; and the pass-at-k page's problem set: its control
and how it is typed.

The marks are measurements on a real model (Qwen2.5-7B, GRPO without a KL term, on its own
training problems), not computed here: the pages draw them for comparison and say so.
"""

from __future__ import annotations

import math
import re

import numpy as np
import streamlit as st

from klrl_app import controls
from klrl_app.plots import Chart

K_MAX = 1024
MAX_PROBLEMS = 50
LOG_K_AXIS = {
    "type": "log",
    "range": [-0.06, math.log10(K_MAX) + 0.1],
    "tickvals": [1, 4, 16, 64, 256, 1024],
    "ticktext": ["1", "4", "16", "64", "256", "1,024"],
}

YUE = {"base": (0.099, 0.672), "trained": (0.425, 0.643)}  # pass@1, pass@256 (measured)
YUE_K = (1, 256)
# The two marks at k = 256 are 0.03 apart, less than a mark's height: each is drawn 0.08 of a
# decade to its side (base left, trained right) so neither hides the other; the hover says k.
YUE_NUDGE = 10**0.08


def yue_x(which: str) -> list[float]:
    """Where the marks of ``which`` ("base" or "trained") are drawn on the log-k axis."""
    side = 1 / YUE_NUDGE if which == "base" else YUE_NUDGE
    return [YUE_K[0], YUE_K[1] * side]


def add_yue_marks(chart: Chart, base: dict, trained: dict, size: int = 12) -> None:
    """Yue et al.'s base (open diamonds) and after-GRPO (open squares) marks, each trace's
    ``name``, ``color`` and ``hover`` (its first line; the k and value follow) as given."""
    for which, spec, symbol, s in (
        ("base", base, "diamond-open", size),
        ("trained", trained, "square-open", size - 2),
    ):
        chart.add(
            x=yue_x(which),
            y=list(YUE[which]),
            mode="markers",
            name=spec["name"],
            customdata=list(YUE_K),
            marker={
                "symbol": symbol,
                "size": s,
                "color": spec["color"],
                "line": {"width": 2.5, "color": spec["color"]},
            },
            hovertemplate=spec["hover"] + "<br>pass@%{customdata}: %{y:.1%}<extra></extra>",
        )


def rates_text(values) -> str:
    """Solve rates as the problem set's text boxes show them."""
    return ", ".join(controls.fmt_number(v) for v in values)


_SEPARATOR = re.compile(r"\s*[,;]\s*|\s+")


def parse_rates(text: str, name: str) -> np.ndarray:
    """Solve rates typed as "0.3, 0.05" (commas, semicolons or spaces; 30% also reads)."""
    body = str(text).replace("\u2212", "-").strip().strip(",; ")
    if not body:
        raise ValueError(
            f"{name}: the list is empty; type one solve rate per problem, e.g. 0.3, 0.05"
        )
    tokens = _SEPARATOR.split(body)
    if len(tokens) > MAX_PROBLEMS:
        raise ValueError(f"{name}: {len(tokens)} rates; at most {MAX_PROBLEMS} problems")
    out = []
    for i, tok in enumerate(tokens, 1):
        if tok == "":
            raise ValueError(f"{name}: entry {i} is empty (two commas in a row?)")
        scale = 100.0 if tok.endswith("%") else 1.0
        try:
            value = float(tok.rstrip("%")) / scale
        except ValueError:
            shown = tok if len(tok) <= 12 else tok[:12] + "…"
            raise ValueError(f"{name}: “{shown}” is not a number") from None
        if not math.isfinite(value) or not 0 <= value <= 1:
            raise ValueError(f"{name}: entry {i} is not a solve rate between 0 and 1")
        out.append(value)
    return np.array(out)


def read_rates(before_text: str, after_text: str) -> tuple[np.ndarray, np.ndarray]:
    """The rates before and after a training run, one of each per problem."""
    before = parse_rates(before_text, "rates before")
    after = parse_rates(after_text, "rates after")
    if before.size != after.size:
        raise ValueError(
            f"{before.size} rates before but {after.size} after; give one of "
            f"each per problem, in the same order"
        )
    return before, after


def problems_control(
    ui, defaults: tuple[tuple, tuple], called: str, boxes: tuple[tuple[str, str], ...]
) -> tuple[np.ndarray, np.ndarray]:
    """The problem set's solve rates before and after a training run, in two text boxes
    (``boxes``: each one's label and help) linked as ``before`` and ``after``; text that cannot
    be read gives a notice and the ``defaults``, which the notice ``called``. A link may lock
    the problem set (shown, disabled) or hide it: lock=problems, hide=problems."""
    keys = {n: ui.key(n) for n in ("before", "after")}
    texts = dict(zip(keys, map(rates_text, defaults)))
    ui.linked_texts(
        ("before", "after"),
        texts,
        read_rates,
        lambda why: f"`before`/`after`: {why}; showing {called} instead.",
    )
    state = ui.declare("problems", "Problem set", ("before", "after"), short="the problem set")
    if state != controls.HIDE:
        for key, (label, help_text) in zip(keys.values(), boxes):
            st.text_input(label, key=key, disabled=state == controls.LOCK, help=help_text)
    typed = {n: st.session_state[keys[n]] for n in keys}
    try:
        before, after = read_rates(typed["before"], typed["after"])
    except ValueError as why:
        before, after = np.array(defaults[0]), np.array(defaults[1])
        ui.typed.append(f"Problem set: {why}. Showing {called} until the lists can be read.")
        typed = texts
    for n, values in (("before", before), ("after", after)):
        canonical = rates_text(values)
        ui.remember(n, typed[n], None if canonical == texts[n] else canonical)
    return before, after
