"""One look for every figure: the chapter's colours, axis styling and chart options.

Colours follow the chapter's figures (reference violet, optimum blue, best-of-n green,
proxy orange, true reward aqua, correct green, incorrect red, no signal grey); they are
mid-tones that read on Streamlit's light and dark themes alike.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

COLORS = {
    "reference": "#8b5cf6",   # violet: pi0
    "optimum": "#3b82f6",     # blue: pi*
    "best_of_n": "#16a34a",   # green: pi_n
    "proxy": "#f97316",       # orange: proxy reward r
    "true": "#14b8a6",        # aqua: true reward r*
    "correct": "#22c55e",
    "incorrect": "#ef4444",
    "neutral": "#9ca3af",     # grey
    "run": "rgba(59, 130, 246, 0.35)",
    "accent": "#ec4899",
}

# Modebar: keep the camera (PNG for slides) and reset; drop the rest.
CHART_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines",
                               "hoverClosestCartesian", "hoverCompareCartesian"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def figure(x_title: str, y_title: str, height: int = 360, **layout) -> go.Figure:
    """An empty figure with the shared styling; traces are added by the page."""
    fig = go.Figure()
    fig.update_layout(
        height=height,
        margin=dict(l=8, r=8, t=36, b=8),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0,
                    bgcolor="rgba(0,0,0,0)"),
        hovermode="closest",
        bargap=0.15,
        **layout,
    )
    fig.update_xaxes(title_text=x_title, zeroline=False, automargin=True)
    fig.update_yaxes(title_text=y_title, zeroline=False, automargin=True)
    return fig


def show(fig: go.Figure, key: str | None = None) -> None:
    """Draw a figure with the app's theme and chart options."""
    st.plotly_chart(fig, theme="streamlit", config=CHART_CONFIG, key=key)
