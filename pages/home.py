"""Home: the one equation the pages share, and a link to every page."""

import streamlit as st

from klrl_app.layout import ensure_app_navigation
from klrl_app.nav import PAGES

ensure_app_navigation()

st.title("How reinforcement learning reshapes a language model")
st.markdown(
    "Almost every page of this explorer turns on one formula. Train a policy to earn reward "
    "while paying β for every nat of KL divergence it moves away from a reference policy π₀, "
    "and the best policy it can reach is the reference, reweighted by exponentiated reward:"
)
st.latex(r"\pi^\ast(y) \;=\; \frac{\pi_0(y)\,\exp\!\big(r(y)/\beta\big)}{Z}")
st.latex(r"Z=\sum_y \pi_0(y)\,\exp\!\big(r(y)/\beta\big),\qquad \kappa = 1/\beta")
st.markdown(
    "A small β (a large κ) is a weak anchor: probability flows toward high reward, even onto "
    "responses the reference almost never writes. A large β keeps π* close to π₀. "
    "The pages recompute the textbook's figures exactly as you move the sliders, and every "
    "view has its own link: copy the address bar to share exactly what you see."
)

for section in dict.fromkeys(p.section for p in PAGES):
    st.header(section, divider=False)
    cards = [p for p in PAGES if p.section == section]
    for row in range(0, len(cards), 2):
        for col, p in zip(st.columns(2), cards[row:row + 2]):
            with col.container(border=True):
                st.page_link(p.file, label=f"**{p.title}**", icon=p.icon)
                st.caption(p.teaches)

st.divider()
st.markdown(
    "**Two chapters from two different books.** The Chapter 12 pages follow *Reinforcement "
    "Learning*, Chapter 12 of the book *AI Alignment* (Figures 12.1–12.5, Exercises 12.1–12.4). "
    "The Chapter 28 pages follow *Reinforcement Learning for Language Models and Reasoning*, "
    "Chapter 28 of a different book, a reinforcement-learning textbook: its cross-references "
    "(\"NLP chapter 11\", \"Lab 16\", Exercises 28.1–28.8) point into that book, not into "
    "*AI Alignment*. The reference policy and rewards of Figures 12.2, 12.3 and 12.5 are the "
    "stated illustrative model; everything else is computed exactly from it."
)
