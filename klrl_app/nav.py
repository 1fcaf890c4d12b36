"""The pages of the explorer: file, URL path, title and what each one teaches."""

from __future__ import annotations

from typing import NamedTuple


class PageInfo(NamedTuple):
    file: str
    url_path: str
    title: str
    icon: str
    section: str
    teaches: str


SECTION_12 = "Chapter 12 · AI Alignment"
SECTION_28 = "Chapter 28 · RL textbook"
SECTION_EX = "Exercises"
SECTION_CLASS = "Class"

PAGES = [
    PageInfo(
        "pages/bandit.py",
        "bandit",
        "Policy gradient on a bandit",
        ":material/casino:",
        SECTION_12,
        "Figure 12.1: REINFORCE on five arms, and what a baseline changes.",
    ),
    PageInfo(
        "pages/ppo-clip.py",
        "ppo-clip",
        "PPO's clipped surrogate",
        ":material/content_cut:",
        SECTION_12,
        "Equation 12.2: where the clipped objective stops growing, clip-higher "
        "and CISPO beside it, and what several epochs on one batch do with each.",
    ),
    PageInfo(
        "pages/tilt.py",
        "tilt",
        "The KL-regularized optimum",
        ":material/tune:",
        SECTION_12,
        "Figure 12.2: the tilt π* ∝ π₀·exp(r/β) and the reward–KL frontier.",
    ),
    PageInfo(
        "pages/rarity.py",
        "rarity",
        "The price of rarity",
        ":material/diamond:",
        SECTION_12,
        "Section 12.3.3, Equation 12.7 and Section 12.4.2: how rare a response "
        "can be and still dominate the optimum, the prior within a reward level, and a tilt "
        "of a tilt.",
    ),
    PageInfo(
        "pages/best-of-n.py",
        "best-of-n",
        "Best-of-n against the optimum",
        ":material/filter_list:",
        SECTION_12,
        "Figure 12.3: exact best-of-n at the same KL, and why the folklore formula is a bound.",
    ),
    PageInfo(
        "pages/groups.py",
        "groups",
        "When a group carries signal",
        ":material/groups:",
        SECTION_12,
        "Figure 12.4: GRPO's group-relative advantages and the groups that teach nothing.",
    ),
    PageInfo(
        "pages/overoptimization.py",
        "overoptimization",
        "Overoptimizing a proxy",
        ":material/trending_down:",
        SECTION_12,
        "Figure 12.5: the proxy keeps rising while the true reward peaks and falls.",
    ),
    PageInfo(
        "pages/dpo.py",
        "dpo",
        "Direct preference optimization",
        ":material/compare_arrows:",
        SECTION_12,
        "Section 12.6: DPO's optimum on comparisons, and what finite pairs, "
        "deterministic labels and finite training do to it.",
    ),
    PageInfo(
        "pages/kl-penalty.py",
        "kl-penalty",
        "Where the KL penalty goes",
        ":material/functions:",
        SECTION_28,
        "KL estimators k1, k2, k3, and which policy each placement of the penalty reaches.",
    ),
    PageInfo(
        "pages/length-bias.py",
        "length-bias",
        "GRPO's length bias",
        ":material/straighten:",
        SECTION_28,
        "Per-response averaging drifts lengths; Dr. GRPO's constant does not.",
    ),
    PageInfo(
        "pages/normalization.py",
        "normalization",
        "Group normalisation across prompts",
        ":material/balance:",
        SECTION_28,
        "Section 12.7.1 and Exercise 28.4: which prompts dividing by the group's standard "
        "deviation favours, the arcsin law, and the group mean as a leave-one-out baseline.",
    ),
    PageInfo(
        "pages/entropy.py",
        "entropy",
        "Why entropy collapses",
        ":material/blur_on:",
        SECTION_28,
        "Exercise 28.6: the entropy along a natural-gradient step, its "
        "first-order prediction −η·Cov(log π, A), and Cui et al.'s law over repeated steps.",
    ),
    PageInfo(
        "pages/pass-at-k.py",
        "pass-at-k",
        "pass@k at the optimum",
        ":material/target:",
        SECTION_28,
        "Exercise 28.7 and Section 12.7.4: pass@k never falls at the optimum, a "
        "training run that loses the rare problems, and estimating pass@k from n samples.",
    ),
    PageInfo(
        "pages/loop.py",
        "loop",
        "What narrows pass@k in training",
        ":material/model_training:",
        SECTION_12,
        "Section 12.7.4: parameters shared across problems or one set per "
        "problem, sampled or with the exact expected gradient: which one narrows pass@k "
        "as training goes, beside the KL-matched optimum, which never does.",
    ),
    PageInfo(
        "pages/token-credit.py",
        "token-credit",
        "Credit inside a response",
        ":material/account_tree:",
        SECTION_28,
        "Exercise 28.2 and Section 12.1.5: the optimum token by token (soft Bellman "
        "equations), each token's credit beside the bandit view's one advantage, and DPO's "
        "optimum on the same tree.",
    ),
    PageInfo(
        "pages/step-labels.py",
        "step-labels",
        "Rewarding the steps: labels from rollouts",
        ":material/checklist:",
        SECTION_28,
        "Exercise 28.8 and Section 12.7.3: soft and hard step labels from N completions, "
        "what a process reward model fitted to them learns, and the measured results.",
    ),
    PageInfo(
        "pages/exercises.py",
        "exercises",
        "Exercises",
        ":material/quiz:",
        SECTION_EX,
        "Exercises 12.1–12.4 and worked instances of Exercises 28.1–28.8: type an "
        "answer, get Correct or a hint, then the worked solution and the live page.",
    ),
    PageInfo(
        "pages/handout.py",
        "handout",
        "Printable handout",
        ":material/print:",
        SECTION_EX,
        "Every figure page's prediction questions on paper, with links to their settings, "
        "and the answers after a page break: print it or download it.",
    ),
    PageInfo(
        "pages/class.py",
        "class",
        "Class session",
        ":material/co_present:",
        SECTION_CLASS,
        "A lecturer opens a prediction question; the class answers on their phones; the "
        "reveal draws their answers on the exact figure.",
    ),
]

# The pages that draw a chapter's figure or argument (not the exercises, the handout or the
# class console): each has notes for the lecturer and questions in the class sessions' bank.
FIGURE_PAGES = [p for p in PAGES if p.section in (SECTION_12, SECTION_28)]
