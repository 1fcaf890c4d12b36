"""Credit inside a response: the token-level form of the KL-regularized optimum (chapter 28,
"The sequence-level objective has a token-level form"; Section 12.1.5; Exercise 28.2).

The token tree of SPEC.md ("Pages of the third round"): tokens a, b, c; every response is
three tokens, so there are 27; the reference pi_ref(a, b, c) = (0.5, 0.3, 0.2) at every node;
the reward depends on the whole response through one of four rules (RULES).

A node is a prefix s_t = y_<t (the prompt x is the empty prefix). With V*(y) = r(y) at a leaf,
the soft Bellman equations of chapter 28 give, above it,

    Q*(s_t, a) = V*(s_t a),    V*(s_t) = beta ln sum_a pi_ref(a | s_t) exp(Q*(s_t, a) / beta),
    beta ln pi*(a | s_t) / pi_ref(a | s_t) = Q*(s_t, a) - V*(s_t),

the last being a token's credit: how much the token changed the soft value. Along a response
the credits telescope to r(y) - V*(x), and V*(x) = beta ln Z of the sequence-level tilt
pi*(y) = pi_ref(y) exp(r(y) / beta) / Z (Exercise 28.2(a)).

Responses are indexed in lexicographic order, index = 9 y1 + 3 y2 + y3 with a = 0, b = 1,
c = 2; a node at depth t (t tokens written) has index sum y_i 3^(t - 1 - i) among the 3^t
nodes of its depth. Everything is in log space, so beta from 1e-4 to 1e4 stays finite;
beta = inf is the limit of no tilt (pi* = pi_ref, V* the reference's expected reward, and
the credit Q* - V* keeps its finite limit).

NumPy and the standard library only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dpo
from .model import logsumexp

TOKENS = "abc"
LENGTH = 3                      # tokens per response
PI_REF = (0.5, 0.3, 0.2)        # the reference at every node (SPEC.md)
RULES = ("middle", "last", "first", "count")
RULE_TEXT = {
    "middle": "r = [y₂ = b] + 0.2·[y₃ = c]",
    "last": "r = [y₃ = c]",
    "first": "r = [y₁ = c]",
    "count": "r = (number of c tokens)/3",
}
N_RESPONSES = len(TOKENS) ** LENGTH


# ------------------------------------------------------------------ checks

def _check_beta(beta) -> float:
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise ValueError(f"beta must be a positive number (or inf), got {beta!r}") from None
    if np.isnan(b) or b <= 0:
        raise ValueError(f"beta must be a positive number (or inf), got {beta!r}")
    return b


def _check_rule(rule):
    """A rule's name, or (for other rewards on the same tree) an array of 27 finite rewards."""
    if isinstance(rule, str):
        if rule not in RULES:
            raise ValueError(f"the reward rule must be one of {', '.join(RULES)}, got {rule!r}")
        return rule
    r = np.asarray(rule, dtype=float)
    if r.shape != (N_RESPONSES,) or not np.all(np.isfinite(r)):
        raise ValueError(f"the reward rule must be one of {', '.join(RULES)} or "
                         f"{N_RESPONSES} finite rewards in index order")
    return r


def _check_pi_ref(pi_ref) -> np.ndarray:
    p = np.asarray(pi_ref, dtype=float)
    if p.shape != (len(TOKENS),) or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"pi_ref must hold {len(TOKENS)} positive probabilities, one per "
                         f"token, got {pi_ref!r}")
    return p / p.sum()


def parse_response(y) -> tuple[int, ...]:
    """A response as token indices: "abc" -> (0, 1, 2). A tuple of indices passes through."""
    if isinstance(y, str):
        text = y.strip().lower()
        if len(text) != LENGTH or any(ch not in TOKENS for ch in text):
            raise ValueError(f"a response is {LENGTH} letters from {', '.join(TOKENS)}, "
                             f"got {y!r}")
        return tuple(TOKENS.index(ch) for ch in text)
    try:
        idx = tuple(int(i) for i in y)
    except (TypeError, ValueError):
        raise ValueError(f"a response is {LENGTH} letters from {TOKENS}, got {y!r}") from None
    if len(idx) != LENGTH or any(i < 0 or i >= len(TOKENS) for i in idx):
        raise ValueError(f"a response is {LENGTH} token indices in 0..{len(TOKENS) - 1}, "
                         f"got {y!r}")
    return idx


def response_text(y) -> str:
    return "".join(TOKENS[i] for i in parse_response(y))


def response_index(y) -> int:
    """Position of a response in the lexicographic order of all 27."""
    idx = 0
    for i in parse_response(y):
        idx = idx * len(TOKENS) + i
    return idx


def responses() -> list[str]:
    """All 27 responses, in index order: aaa, aab, ..., ccc."""
    k = len(TOKENS)
    return ["".join(TOKENS[(n // k ** (LENGTH - 1 - t)) % k] for t in range(LENGTH))
            for n in range(k ** LENGTH)]


def prefixes(depth: int) -> list[str]:
    """The 3^depth nodes of one depth, in index order ('' is the prompt x)."""
    k = len(TOKENS)
    return ["".join(TOKENS[(n // k ** (depth - 1 - t)) % k] for t in range(depth))
            for n in range(k ** depth)]


# ------------------------------------------------------------------ rewards

def reward(y, rule: str = "middle") -> float:
    """r(y) under one of the SPEC's rules (or from an array of 27 rewards)."""
    rule = _check_rule(rule)
    if not isinstance(rule, str):
        return float(rule[response_index(y)])
    y1, y2, y3 = parse_response(y)
    a, b, c = range(3)
    if rule == "middle":
        return float(y2 == b) + 0.2 * float(y3 == c)
    if rule == "last":
        return float(y3 == c)
    if rule == "first":
        return float(y1 == c)
    return sum(t == c for t in (y1, y2, y3)) / 3.0


def rewards(rule: str = "middle") -> np.ndarray:
    """r of all 27 responses, in index order."""
    rule = _check_rule(rule)
    if not isinstance(rule, str):
        return rule.copy()
    return np.array([reward(y, rule) for y in responses()])


def log_pi_ref_sequence(pi_ref=PI_REF) -> np.ndarray:
    """ln pi_ref(y) = sum_t ln pi_ref(y_t | s_t) of all 27 responses (the chain rule)."""
    lp = np.log(_check_pi_ref(pi_ref))
    return (lp[:, None, None] + lp[None, :, None] + lp[None, None, :]).ravel()


# ------------------------------------------------------------------ the backward recursion

class Tree(NamedTuple):
    beta: float
    rule: object               # the rule's name (or the array of rewards given)
    pi_ref: np.ndarray         # (3,): the reference at every node
    r: np.ndarray              # (27,): r(y), index order
    values: tuple              # V*(s) per depth t = 0..3, shapes (1,), (3,), (9,), (27,) (= r)
    q: tuple                   # Q*(s, a) per depth t = 0..2, shape (3^t, 3): V* of the child
    log_pi: tuple              # ln pi*(a | s), same shapes
    credit: tuple              # Q*(s, a) - V*(s) = beta ln pi*(a|s)/pi_ref(a|s), same shapes


def soft_tree(beta, rule: str = "middle", pi_ref=PI_REF) -> Tree:
    """V*, Q*, pi* and every token's credit, by backward recursion over the tree (chapter 28's
    soft Bellman equations): exact, in log space."""
    b = _check_beta(beta)
    p = _check_pi_ref(pi_ref)
    lp = np.log(p)
    k = len(TOKENS)
    r = rewards(rule)
    values = [None] * (LENGTH + 1)
    qs, logs, credits = [None] * LENGTH, [None] * LENGTH, [None] * LENGTH
    values[LENGTH] = r
    for t in range(LENGTH - 1, -1, -1):
        q = values[t + 1].reshape(k ** t, k)          # Q*(s, a) = V*(s a)
        if np.isinf(b):
            # beta -> inf: pi* = pi_ref and V*(s) -> E_pi_ref[Q*(s, .)] (the soft maximum
            # becomes the reference's average), so the credit keeps a finite limit.
            log_pi = np.broadcast_to(lp, q.shape).copy()
            v = q @ p
        else:
            # Shift by the best Q first: Q/beta alone overflows exp for beta = 1e-4.
            top = q.max(axis=1, keepdims=True)
            logits = lp + (q - top) / b
            lse = logsumexp(logits, axis=1)
            log_pi = logits - lse[:, None]
            v = top[:, 0] + b * lse
        values[t] = v
        qs[t], logs[t] = q, log_pi
        credits[t] = q - v[:, None]
    return Tree(b, rule, p, r, tuple(values), tuple(qs), tuple(logs), tuple(credits))


def _nodes(y) -> list[tuple[int, int]]:
    """(node index at depth t, token y_t) for t = 0..2 along a response."""
    idx = parse_response(y)
    out, node = [], 0
    for t in range(LENGTH):
        out.append((node, idx[t]))
        node = node * len(TOKENS) + idx[t]
    return out


def token_credits(tree: Tree, y) -> np.ndarray:
    """Credit of each token of y: Q*(s_t, y_t) - V*(s_t) = V*(s_{t+1}) - V*(s_t)."""
    return np.array([tree.credit[t][node, a] for t, (node, a) in enumerate(_nodes(y))])


def token_log_pi(tree: Tree, y) -> np.ndarray:
    """ln pi*(y_t | s_t) of each token of y."""
    return np.array([tree.log_pi[t][node, a] for t, (node, a) in enumerate(_nodes(y))])


def node_values(tree: Tree, y) -> np.ndarray:
    """V*(s_t) along y for t = 0..3: V*(x), V*(y1), V*(y1 y2), r(y)."""
    out, node = [float(tree.values[0][0])], 0
    for t, a in enumerate(parse_response(y)):
        node = node * len(TOKENS) + a
        out.append(float(tree.values[t + 1][node]))
    return np.array(out)


def implicit_reward(tree: Tree, y) -> float:
    """beta ln pi*(y)/pi_ref(y): the sum of y's credits, = r(y) - V*(x) (Exercise 28.2(a))."""
    return float(np.sum(token_credits(tree, y)))


def shared_prefix(y, y2) -> int:
    """How many leading tokens two responses share."""
    a, b = parse_response(y), parse_response(y2)
    k = 0
    while k < LENGTH and a[k] == b[k]:
        k += 1
    return k


def implicit_reward_difference(tree: Tree, y, y2) -> float:
    """beta ln pi*(y)/pi_ref(y) - beta ln pi*(y')/pi_ref(y'), summed over the tokens after
    the shared prefix only (the shared tokens' credits are the same numbers; Ex. 28.2(b))."""
    k = shared_prefix(y, y2)
    return float(np.sum(token_credits(tree, y)[k:]) - np.sum(token_credits(tree, y2)[k:]))


def policy_sequence(tree: Tree) -> np.ndarray:
    """ln pi*(y) of all 27 responses as the product of the tree's token probabilities."""
    k = len(TOKENS)
    out = np.zeros(1)
    for t in range(LENGTH):
        out = (out[:, None] + tree.log_pi[t]).reshape(k ** (t + 1))
    return out


def node_mass(log_pi_seq) -> tuple:
    """Probability of every node of every depth (t = 0..3) under a distribution over the 27
    responses: the sum over its completions."""
    k = len(TOKENS)
    p = np.exp(np.asarray(log_pi_seq, dtype=float))
    out = [p]
    for t in range(LENGTH - 1, -1, -1):
        out.append(out[-1].reshape(k ** t, k).sum(axis=1))
    return tuple(reversed(out))


def token_conditionals(log_pi_seq) -> tuple:
    """ln pi(a | s) at every node, from a distribution over the 27 responses (marginals of
    the prefixes: the chain rule read backwards). Shapes (3^t, 3), t = 0..2."""
    k = len(TOKENS)
    lp = np.asarray(log_pi_seq, dtype=float)
    if lp.shape != (k ** LENGTH,):
        raise ValueError(f"log_pi_seq must hold one log-probability per response "
                         f"({k ** LENGTH}), got shape {lp.shape}")
    levels = [lp]
    for t in range(LENGTH - 1, -1, -1):
        levels.append(logsumexp(levels[-1].reshape(k ** t, k), axis=1))
    levels = levels[::-1]                # log mass per depth 0..3
    out = []
    for t in range(LENGTH):
        child = levels[t + 1].reshape(k ** t, k)
        with np.errstate(invalid="ignore"):
            out.append(np.where(np.isfinite(levels[t])[:, None], child - levels[t][:, None],
                                -np.inf))
    return tuple(out)


# ------------------------------------------------------------------ the sequence-level tilt

class SequenceTilt(NamedTuple):
    log_pi: np.ndarray         # ln pi*(y), 27 responses
    pi: np.ndarray
    log_z: float               # ln Z = ln sum pi_ref(y) exp(r(y)/beta); 0 at beta = inf
    value: float               # beta ln Z = V*(x) (the optimal value, Exercise 28.1)
    expected: float            # E_pi*[r]
    kl: float                  # KL(pi* || pi_ref), nats


def sequence_tilt(beta, rule: str = "middle", pi_ref=PI_REF) -> SequenceTilt:
    """pi*(y) = pi_ref(y) exp(r(y)/beta) / Z over the 27 whole responses (the bandit view's
    optimum), with beta ln Z, E_pi*[r] and KL(pi* || pi_ref)."""
    b = _check_beta(beta)
    r = rewards(rule)
    lq = log_pi_ref_sequence(pi_ref)
    if np.isinf(b):
        pi = np.exp(lq)
        return SequenceTilt(lq.copy(), pi, 0.0, float(pi @ r), float(pi @ r), 0.0)
    top = float(r.max())
    logits = lq + (r - top) / b          # shifted: exact for beta = 1e-4
    lse = float(logsumexp(logits))
    log_pi = logits - lse
    pi = np.exp(log_pi)
    kl = float(np.sum(np.where(pi > 0, pi * (log_pi - lq), 0.0)))
    return SequenceTilt(log_pi, pi, lse + top / b, top + b * lse, float(pi @ r), max(kl, 0.0))


def bandit_share(beta, rule: str, y, pi_ref=PI_REF) -> np.ndarray:
    """The bandit view's per-token advantage: the one number r(y) - E_pi*[r] on every token
    (Section 12.1.5: the estimator gives every token the same advantage)."""
    t = sequence_tilt(beta, rule, pi_ref)
    return np.full(LENGTH, reward(y, rule) - t.expected)


# ------------------------------------------------------------------ DPO on the tree

class DpoTree(NamedTuple):
    log_pi: np.ndarray         # the DPO optimum's ln pi(y), 27 responses
    log_pi_tokens: tuple       # its ln pi(a | s) per depth, shapes (3^t, 3)
    credit: tuple              # beta ln pi(a|s)/pi_ref(a|s) per depth
    optimum: dpo.Optimum


def dpo_on_tree(beta, rule: str = "middle", pi_ref=PI_REF) -> DpoTree:
    """The exact DPO optimum over the 27 responses from Bradley-Terry preferences on all pairs
    (P(y > y') = sigma(r(y) - r(y')), the expected share of each labelled pair: the dpo page's
    core, dpo.comparisons(..., "all") and dpo.dpo_optimum), factorised into per-token
    log-ratios. With these labels it is the tilt at the same beta (Section 12.6.1), so its
    per-token log-ratios are pi*'s: DPO fits the soft credits."""
    b = _check_beta(beta)
    if np.isinf(b):
        raise ValueError("DPO needs a finite beta (at beta = inf its optimum is pi_ref)")
    r = rewards(rule)
    lq = log_pi_ref_sequence(pi_ref)
    w = dpo.comparisons(lq, r, "all", "bt")
    opt = dpo.dpo_optimum(w, lq, b)
    cond = token_conditionals(opt.log_pi)
    lp = np.log(_check_pi_ref(pi_ref))
    credit = tuple(b * (c - lp) for c in cond)
    return DpoTree(opt.log_pi, cond, credit, opt)


def top_reward_mass(pi_seq, rule: str = "middle") -> float:
    """The probability that a policy over the 27 whole responses (``pi_seq``, in
    ``responses()`` order) puts on the responses with the rule's top reward."""
    pi_seq = np.asarray(pi_seq, dtype=float)
    if pi_seq.shape != (N_RESPONSES,):
        raise ValueError(f"a policy over the {N_RESPONSES} responses, one probability each")
    r = rewards(rule)
    return float(pi_seq[r == r.max()].sum())
