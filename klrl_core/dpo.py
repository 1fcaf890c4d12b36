"""Direct preference optimisation on a tabular policy (Section 12.6, Equation 12.9).

The policy is a softmax over one logit per response, pi = softmax(z), next to a fixed
reference pi0. Its implied reward is r_hat(y) = beta * log(pi(y) / pi0(y)) (Section 12.6.1),
defined up to a constant per prompt. Comparisons are aggregated into a count matrix

    W[i, j] = how many times response i was preferred to response j,

and the DPO loss of Equation (12.9), summed over the comparisons, is

    L(z) = -sum_ij W[i, j] * log sigma(r_hat(i) - r_hat(j)).

Everything the loss knows about the data is W. In the differences the normaliser log Z of
the softmax cancels, so L depends on the logits only through the log ratios
u = z - log pi0, and only through their differences within pairs.

Conventions (the loss leaves them open, so they are fixed here and stated once):

* Gauge. Adding a constant to every logit changes nothing. Worse, the loss says nothing
  about the offset between two groups of responses that are never compared with each
  other (two connected components of the comparison graph), nor about a response that
  never appears in a pair. Plain gradient steps from pi0 never change the sum of u over a
  component (the gradient sums to zero there), so their limit, when it exists, is the
  minimiser with sum(u) = 0 on every component. That is the one returned: in particular a
  response never compared keeps u = 0, its logit stays at log pi0, and all such responses
  keep their reference probability ratios to each other.
* When no minimiser exists. If some set of responses is beaten by others it never beats
  (with deterministic labels, as soon as two different rewards meet; often with a few
  Bradley-Terry pairs, when a rare response wins or loses all of its comparisons), the loss only
  approaches its infimum as those gaps grow without bound: every response beaten (directly
  or along a chain of wins) by one it never beats back (even along a chain) goes to
  probability 0, whatever beta is
  (Azar et al., 2024). ``dpo_optimum`` returns that limit with ``exists=False``. The loss
  does not say how the never-beaten responses share the mass in the limit, so the same
  gauge is kept: each never-beaten group of mutually reachable responses keeps mean log
  ratio 0 (a single never-beaten response keeps its reference ratio). Gradient steps
  instead raise the winners' logits like log T, so runs agree with the limit on which
  responses vanish, not on how the rest is shared.
* Labels. ``bt`` uses the Bradley-Terry model on the reward itself, P(y > y') =
  sigma(r(y) - r(y')) (Section 12.6.1): with these labels and infinitely many pairs the DPO
  optimum is exactly the tilt pi* = pi0 exp(r / beta) / Z at the same beta. ``deterministic``
  prefers the higher reward always and settles ties by a fair coin (the limit of Bradley-Terry
  with the reward scaled up without bound, since sigma(0) = 1/2).

NumPy and the standard library only. Sizes: a few hundred responses at most (dense n x n).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common import check_int, sigmoid
from .model import logsumexp
from .tilt import kl_divergence

LABELS = ("bt", "deterministic")
MAX_PAIRS = 10**7          # pairs behind one count matrix ("all" is the exact limit instead)
MAX_LISTED_PAIRS = 10**6   # pairs listed one by one (sample_pairs): 16 bytes each
MAX_STEPS = 100_000
MAX_NEWTON = 200
CENTRES = ("pi0", "mean", "none")


class Optimum(NamedTuple):
    pi: np.ndarray            # the optimal (or limit) policy
    log_pi: np.ndarray        # its log; -inf where the limit gives probability 0
    iterations: int           # Newton iterations (IPO: 1, a single linear solve)
    grad_norm: float          # max |d(L / sum W) / dz| at the result (see dpo_optimum)
    exists: bool              # False: the loss has no minimiser, pi is the limit policy


class Trajectory(NamedTuple):
    step: np.ndarray          # the recorded step numbers, 0 (= pi0) to steps
    log_pi: np.ndarray        # log policy at each recorded step, shape (len(step), n)
    pi: np.ndarray
    kl: np.ndarray            # KL(pi || pi0) at each recorded step, nats
    loss: np.ndarray          # the normalised loss L / sum W at each recorded step


# ------------------------------------------------------------------ checks

def _check_log_pi0(log_pi0) -> np.ndarray:
    a = np.asarray(log_pi0, dtype=float)
    if a.ndim != 1 or a.size < 1:
        raise ValueError("log_pi0 must be a 1-D array with one entry per response")
    if not np.all(np.isfinite(a)):
        raise ValueError("every response needs a reference probability > 0 (finite log pi0): "
                         "the implied reward divides by pi0")
    return a - logsumexp(a)          # renormalise: callers may pass unnormalised logits


def _check_positive(x, name: str = "beta") -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {x!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {x!r}")
    return v


def _check_w(W, n: int) -> np.ndarray:
    w = np.asarray(W, dtype=float)
    if w.shape != (n, n):
        raise ValueError(f"the count matrix W must be {n} x {n} (one row and column per response), "
                         f"got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("the count matrix W must hold finite non-negative counts")
    return w


def _per_response(x, n: int, name: str = "the logits") -> np.ndarray:
    """``x`` as a float array of n finite entries, one per response (the rewards, the logits)."""
    a = np.asarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"{name} must hold one entry per response ({n}), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite numbers")
    return a


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(_check_seed(seed))


def _check_seed(seed) -> int:
    try:
        ok = not isinstance(seed, bool) and int(seed) == seed and seed >= 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


# ------------------------------------------------------------------ small pieces

def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def implied_reward(log_pi, log_pi0, beta, centre: str = "pi0") -> np.ndarray:
    """r_hat(y) = beta * log(pi(y) / pi0(y)), shifted by a constant (Section 12.6.1).

    The constant beta * log Z is not determined by the policy, so one is chosen by ``centre``:
    "pi0" (default) makes the pi0-weighted mean 0, i.e. rewards are read relative to a
    typical reference response (for the tilt pi* this returns r - E_pi0[r] exactly);
    "mean" makes the plain mean over responses 0; "none" leaves beta * log(pi / pi0).
    Responses with pi = 0 (a limit policy) get -inf and are left out of the centring.
    """
    lq = _check_log_pi0(log_pi0)
    b = _check_positive(beta)
    lp = np.asarray(log_pi, dtype=float)
    if lp.shape != lq.shape or np.any(np.isnan(lp)) or np.any(lp == np.inf):
        raise ValueError("log_pi must hold one log-probability (or -inf) per response")
    if centre not in CENTRES:
        raise ValueError(f"centre must be one of {CENTRES}, got {centre!r}")
    lp = lp - logsumexp(lp)
    rhat = b * (lp - lq)
    ok = np.isfinite(rhat)
    if centre == "none" or not ok.any():
        return rhat
    if centre == "pi0":
        w = np.exp(lq[ok])
        shift = np.sum(w * rhat[ok]) / np.sum(w)
    else:
        shift = np.mean(rhat[ok])
    return rhat - shift


# ------------------------------------------------------------------ data

def sample_pairs(log_pi0, n_pairs: int, seed) -> np.ndarray:
    """n_pairs pairs (y, y'), both drawn independently from pi0: an (n_pairs, 2) int array.

    A pair may repeat a response (y = y', probability sum pi0^2, about 6% on the stated
    model); such a pair carries no information and leaves the loss's gradient unchanged.
    ``seed`` is a non-negative integer or a numpy Generator.
    """
    lq = _check_log_pi0(log_pi0)
    n_pairs = check_int(n_pairs, "the number of pairs listed", 0, MAX_LISTED_PAIRS)
    p = np.exp(lq)
    return _rng(seed).choice(lq.size, size=(n_pairs, 2), p=p / p.sum())


def _win_probability(d: np.ndarray, mode: str) -> np.ndarray:
    """P(first preferred) given the reward difference d = r(first) - r(second)."""
    if mode == "bt":
        return sigmoid(d)
    if mode == "deterministic":
        return np.where(d > 0, 1.0, np.where(d < 0, 0.0, 0.5))
    raise ValueError(f"labels must be one of {LABELS}, got {mode!r}")


def win_probability(d, labels: str = "bt") -> np.ndarray:
    """The probability that a response beats another whose reward is lower by d, under the
    labels: sigma(d) for Bradley-Terry (Section 12.6.1); 1, 0 or 1/2 (a tie by a fair coin)
    for deterministic labels."""
    return _win_probability(np.asarray(d, dtype=float), labels)


def label_pairs(pairs, r, mode: str, seed) -> np.ndarray:
    """Label each pair: an (n_pairs, 2) array of (winner, loser).

    mode "bt": the first response wins with probability sigma(r(y) - r(y')) (Bradley-Terry on
    the reward itself, Section 12.6.1). mode "deterministic": the higher reward always wins,
    a tie by a fair coin. Both use one uniform draw per pair, so "deterministic" is what
    "bt" becomes when the reward is scaled up without bound.
    """
    if mode not in LABELS:
        raise ValueError(f"labels must be one of {LABELS}, got {mode!r}")
    pr = np.asarray(pairs)
    r = np.asarray(r, dtype=float)
    if pr.ndim != 2 or pr.shape[1] != 2 or (pr.size and (pr.min() < 0 or pr.max() >= r.size)):
        raise ValueError("pairs must be an (n_pairs, 2) array of response indices")
    r = _per_response(r, r.size, "the rewards r")
    first_wins = _rng(seed).random(pr.shape[0]) < _win_probability(r[pr[:, 0]] - r[pr[:, 1]], mode)
    return np.where(first_wins[:, None], pr, pr[:, ::-1])


def count_matrix(labelled, n: int) -> np.ndarray:
    """W[i, j] = number of labelled pairs (winner i, loser j), as floats."""
    lab = np.asarray(labelled)
    flat = lab[:, 0] * n + lab[:, 1]
    return np.bincount(flat, minlength=n * n).reshape(n, n).astype(float)


def comparisons(log_pi0, r, pairs, labels: str = "bt", seed=0) -> np.ndarray:
    """The count matrix W behind one setting of the page's controls.

    ``pairs`` is a count (that many pairs drawn from pi0 and labelled, as sample_pairs and
    label_pairs do one by one) or "all": the exact infinite-data limit, the expected share
    of pairs in each cell, W[i, j] = 2 pi0(i) pi0(j) P(i beats j), which sums to 1. The
    pairs and their labels come from two independent streams spawned from ``seed``.
    """
    lq = _check_log_pi0(log_pi0)
    r = _per_response(r, lq.size, "the rewards r")
    if labels not in LABELS:
        raise ValueError(f"labels must be one of {LABELS}, got {labels!r}")
    if isinstance(pairs, str):
        text = pairs.strip().lower()
        if text.isdigit():
            pairs = int(text)
        elif text != "all":
            raise ValueError(f"pairs must be a count or 'all', got {pairs!r}")
    if isinstance(pairs, str):
        p = np.exp(lq)
        # i beats j when drawn as (i, j) and the first wins, or as (j, i) and the second wins:
        # 2 pi0(i) pi0(j) P(i beats j), the expected share of pairs in each cell (sums to 1).
        return 2.0 * np.outer(p, p) * _win_probability(r[:, None] - r[None, :], labels)
    n_pairs = check_int(pairs, "the number of pairs", 0, MAX_PAIRS)
    draw, label = (np.random.default_rng(s)
                   for s in np.random.SeedSequence(_check_seed(seed)).spawn(2))
    # Same distribution as sample_pairs + label_pairs + count_matrix, drawn cell by cell:
    # how many of the n_pairs fall on each ordered pair (multinomial), then how many of those
    # the first response wins (binomial). O(n^2) instead of O(n_pairs): 10^6 pairs stay cheap.
    p = np.exp(lq)
    cell = np.outer(p, p).ravel()
    drawn = draw.multinomial(n_pairs, cell / cell.sum()).reshape(lq.size, lq.size)
    first = label.binomial(drawn, _win_probability(r[:, None] - r[None, :], labels))
    return (first + (drawn - first).T).astype(float)


def responses_seen(W) -> np.ndarray:
    """True for each response compared with a different response in at least one pair.

    A pair of a response with itself (W's diagonal, drawn with probability sum pi0^2) does
    not count: its log-ratio difference is 0 whatever the policy, so it adds a constant to
    the loss and nothing to its gradient. It teaches DPO nothing, and a response met only
    that way keeps its reference ratio like one never drawn at all.
    """
    w = np.asarray(W, dtype=float)
    met = w + w.T
    np.fill_diagonal(met, 0.0)
    return met.sum(axis=1) > 0


# ------------------------------------------------------------------ losses

def _ratio_diff(logits, log_pi0) -> np.ndarray:
    u = logits - log_pi0            # log ratio up to the softmax's log Z, which cancels below
    return u[:, None] - u[None, :]


def dpo_loss(logits, W, log_pi0, beta) -> float:
    """-sum_ij W[i, j] log sigma(beta [(z_i - log pi0_i) - (z_j - log pi0_j)]), Equation (12.9)
    summed over the comparisons (divide by W.sum() for the mean the chapter writes)."""
    lq = _check_log_pi0(log_pi0)
    z, w, b = _per_response(logits, lq.size), _check_w(W, lq.size), _check_positive(beta)
    h = b * _ratio_diff(z, lq)
    return float(-np.sum(np.where(w > 0, w * _log_sigmoid(h), 0.0)))


def dpo_gradient(logits, W, log_pi0, beta) -> np.ndarray:
    """dL/dz. Each pair (i beat j) pushes z_i up and z_j down by beta * sigma(r_hat_j - r_hat_i)
    (the derivation's step 4: d(-log sigma(h))/dh = -sigma(-h))."""
    lq = _check_log_pi0(log_pi0)
    z, w, b = _per_response(logits, lq.size), _check_w(W, lq.size), _check_positive(beta)
    a = w * sigmoid(-b * _ratio_diff(z, lq))
    return -b * (a - a.T).sum(axis=1)


def dpo_hessian(logits, W, log_pi0, beta) -> np.ndarray:
    """d2L/dz2 = beta^2 times the Laplacian of the comparison graph weighted by
    (W + W^T) sigma(h) sigma(-h): positive semidefinite, so the loss is convex in z."""
    lq = _check_log_pi0(log_pi0)
    z, w, b = _per_response(logits, lq.size), _check_w(W, lq.size), _check_positive(beta)
    h = b * _ratio_diff(z, lq)
    c = w * sigmoid(h) * sigmoid(-h)
    return b * b * _laplacian(c + c.T)


def ipo_loss(logits, W, log_pi0, beta) -> float:
    """IPO (Azar et al., 2024): sum_ij W[i, j] (h_ij - 1/(2 beta))^2 with h_ij the log-ratio
    difference (z_i - log pi0_i) - (z_j - log pi0_j). A square, not a log-sigmoid: each pair
    asks for a finite gap 1/(2 beta), so the optimum stays finite with deterministic labels."""
    lq = _check_log_pi0(log_pi0)
    z, w, b = _per_response(logits, lq.size), _check_w(W, lq.size), _check_positive(beta)
    return float(np.sum(w * (_ratio_diff(z, lq) - 0.5 / b) ** 2))


def ipo_gradient(logits, W, log_pi0, beta) -> np.ndarray:
    """dL_IPO/dz."""
    lq = _check_log_pi0(log_pi0)
    z, w, b = _per_response(logits, lq.size), _check_w(W, lq.size), _check_positive(beta)
    e = w * (_ratio_diff(z, lq) - 0.5 / b)
    return 2.0 * (e.sum(axis=1) - e.sum(axis=0))


def ipo_hessian(logits, W, log_pi0, beta) -> np.ndarray:
    """d2L_IPO/dz2 = 2 x the Laplacian weighted by W + W^T (constant: the loss is quadratic)."""
    lq = _check_log_pi0(log_pi0)
    _per_response(logits, lq.size), _check_positive(beta)
    w = _check_w(W, lq.size)
    return 2.0 * _laplacian(w + w.T)


def pair_weights(logits, log_pi0, beta, winners=None, losers=None) -> np.ndarray:
    """The gradient weight sigma(r_hat(y_l) - r_hat(y_w)) of a pair at the current policy
    (Section 12.6.1, derivation step 4): near 1 when the implied reward orders the pair the
    wrong way, near 0 when it already orders it right by a wide margin.

    With ``winners`` and ``losers`` (index arrays of equal shape) returns one weight per pair;
    without them the n x n matrix M[i, j] = weight of a pair that i won against j. Logits may
    hold -inf (a limit policy): a pair won by a response with probability 0 gets weight 1,
    one lost by it weight 0, and a pair of two such responses NaN (undefined).
    """
    lq = _check_log_pi0(log_pi0)
    b = _check_positive(beta)
    z = np.asarray(logits, dtype=float)
    if z.shape != lq.shape or np.any(np.isnan(z)) or np.any(z == np.inf):
        raise ValueError("logits must hold one finite number (or -inf) per response")
    rhat = b * (z - lq)
    if winners is None and losers is None:
        with np.errstate(invalid="ignore"):
            return sigmoid(rhat[None, :] - rhat[:, None])
    wi, lo = np.asarray(winners), np.asarray(losers)
    if wi.shape != lo.shape or (wi.size and (min(wi.min(), lo.min()) < 0
                                             or max(wi.max(), lo.max()) >= lq.size)):
        raise ValueError("winners and losers must be index arrays of the same shape")
    with np.errstate(invalid="ignore"):
        return sigmoid(rhat[lo] - rhat[wi])


# ------------------------------------------------------------------ graph structure

def _laplacian(c: np.ndarray) -> np.ndarray:
    c = c - np.diag(np.diag(c))      # self-comparisons carry no information
    return np.diag(c.sum(axis=1)) - c


def _reach(adj: np.ndarray) -> np.ndarray:
    """Transitive closure (with the diagonal) of a boolean adjacency matrix, by squaring."""
    r = adj | np.eye(adj.shape[0], dtype=bool)
    while True:
        r2 = (r.astype(np.int64) @ r.astype(np.int64)) > 0
        if np.array_equal(r2, r):
            return r
        r = r2


def _labels_from_reach(reach: np.ndarray) -> np.ndarray:
    """Class label per node: i and j share one iff each reaches the other."""
    same = reach & reach.T
    return np.argmax(same, axis=1)          # the first member of i's class names it


def _classes(w: np.ndarray):
    """Strongly connected classes of the win graph (edge i -> j when i beat j) and which of
    them are never beaten from outside (sources). Returns (class label per response,
    boolean per response: its class is a source)."""
    beat = (w > 0) & ~np.eye(w.shape[0], dtype=bool)
    cls = _labels_from_reach(_reach(beat))
    cross = beat & (cls[:, None] != cls[None, :])       # i beat j, j never beats i back
    beaten = np.zeros(w.shape[0], dtype=bool)
    beaten[cls[cross.any(axis=0)]] = True               # mark the class of every such loser
    return cls, ~beaten[cls]


def _components(w: np.ndarray) -> np.ndarray:
    """Connected components of the comparison graph (ignoring who won)."""
    adj = ((w + w.T) > 0) & ~np.eye(w.shape[0], dtype=bool)
    return _labels_from_reach(_reach(adj))


def _centre(v: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """Subtract each class's mean: the gauge of the module docstring."""
    sums = np.bincount(cls, weights=v, minlength=v.size)
    counts = np.bincount(cls, minlength=v.size)
    return v - (sums / np.maximum(counts, 1))[cls]


def _solve_laplacian(h: np.ndarray, rhs: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """Solve h x = rhs for a weighted Laplacian h whose null space is spanned by the class
    indicators (rhs sums to 0 on each class); the answer has mean 0 on each class.

    Jacobi scaling first (rows of rare responses carry weights ~pi0^2, far below the rest),
    then each class's null direction is filled by adding its projector, which leaves the
    solution on the complement unchanged.
    """
    n = h.shape[0]
    d = np.sqrt(np.diag(h))
    d = np.where(d > 1e-150, d, 1.0)
    hs = h / d[:, None] / d[None, :]
    onehot = cls[:, None] == np.arange(n)[None, :]
    q = onehot * d[:, None]
    q = q[:, q.any(axis=0)]
    q = q / np.linalg.norm(q, axis=0)
    try:
        y = np.linalg.solve(hs + q @ q.T, rhs / d)
    except np.linalg.LinAlgError:
        y = np.linalg.lstsq(hs, rhs / d, rcond=None)[0]
    return _centre(y / d, cls)


# ------------------------------------------------------------------ optima

def _bt_loss(v, w):
    return float(np.sum(w * -_log_sigmoid(v[:, None] - v[None, :])))


def _fit_bradley_terry(w: np.ndarray, cls: np.ndarray, tol_v: float):
    """Maximum-likelihood Bradley-Terry scores v on comparisons that stay inside classes in
    which every member can be reached from every other (so the maximum exists): Newton with
    backtracking on the convex loss, from v = 0. Stops once a full Newton step moves no score
    by more than tol_v. Returns (v, iterations)."""
    n = w.shape[0]
    v = np.zeros(n)
    if not np.any(w[~np.eye(n, dtype=bool)] > 0):
        return v, 0
    f = _bt_loss(v, w)
    last = np.inf
    for it in range(1, MAX_NEWTON + 1):
        d = v[:, None] - v[None, :]
        s_minus = sigmoid(-d)                          # not 1 - sigma(d): keeps tiny values
        a = w * s_minus
        g = -(a - a.T).sum(axis=1)     # net per pair first: balanced rare pairs cancel exactly
        c = w * sigmoid(d) * s_minus
        step = _solve_laplacian(_laplacian(c + c.T), -g, cls)
        decrease = float(g @ step)                      # < 0 for a descent direction
        t = 1.0
        while True:                                     # Armijo backtracking
            f_new = _bt_loss(v + t * step, w)
            if f_new <= f + 1e-4 * t * decrease or t < 1e-12:
                break
            t *= 0.5
        # Near the optimum the loss's change drops below rounding; a full step is then exact.
        if abs(decrease) < 1e-13 * max(abs(f), 1e-300):
            t = 1.0
            f_new = _bt_loss(v + step, w)
        v = _centre(v + t * step, cls)
        f = f_new
        size = float(np.max(np.abs(step)))
        if t == 1.0 and size <= tol_v:
            return v, it
        # Full steps that stop shrinking (quadratic convergence would square them) have hit
        # the rounding floor of the sums: nothing more can be gained.
        if t == 1.0 and size <= 1e-8 and size >= 0.5 * last:
            return v, it
        last = size if t == 1.0 else np.inf
    return v, MAX_NEWTON


def _policy(lq: np.ndarray, u: np.ndarray, keep: np.ndarray):
    """log pi and pi for logits lq + u, restricted to the responses in ``keep``."""
    logits = np.where(keep, lq + u, -np.inf)
    log_pi = logits - logsumexp(logits)
    return log_pi, np.exp(log_pi)


def dpo_optimum(W, log_pi0, beta, tol: float = 1e-10) -> Optimum:
    """The exact minimiser of the DPO loss over tabular softmax policies (or its limit).

    In the implied reward v = beta * (z - log pi0) the loss is the Bradley-Terry negative
    log-likelihood -sum W[i, j] log sigma(v_i - v_j), which does not involve beta: the fitted
    scores v are the maximum-likelihood Bradley-Terry rewards, and the policy is
    pi ∝ pi0 exp(v / beta), the tilt of pi0 by those scores (Table 12.2, last row). Newton's
    method with backtracking minimises it from v = 0; it stops once a full Newton step
    changes no log ratio log(pi / pi0) by more than ``tol`` (Newton converges quadratically,
    so the error left is far smaller). Gauge and the case with no minimiser: see the module
    docstring. ``grad_norm`` is max_k |d(L / W.sum()) / dz_k| at the result; when the
    minimum is not attained it is that of the comparisons inside classes (the others are
    satisfied exactly in the limit).
    """
    lq = _check_log_pi0(log_pi0)
    w, b = _check_w(W, lq.size), _check_positive(beta)
    try:
        tol = float(tol)
    except (TypeError, ValueError):
        tol = float("nan")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, got {tol!r}")
    cls, keep = _classes(w)
    inside = np.where(cls[:, None] == cls[None, :], w, 0.0)
    v, iterations = _fit_bradley_terry(inside, cls, tol * b)
    log_pi, pi = _policy(lq, v / b, keep)
    a = inside * sigmoid(v[None, :] - v[:, None])
    grad = -b * (a - a.T).sum(axis=1) / max(w.sum(), 1e-300)
    return Optimum(pi, log_pi, iterations, float(np.max(np.abs(grad))), bool(keep.all()))


def ipo_optimum(W, log_pi0, beta) -> Optimum:
    """The exact minimiser of the IPO loss over tabular softmax policies.

    In v = beta * (z - log pi0) the loss is beta^-2 sum W[i, j] (v_i - v_j - 1/2)^2, a least
    squares problem on the comparison graph, solved by one linear solve (the normal
    equations L v = (row sums - column sums of W) / 2 with L the Laplacian of W + W^T). It
    always has a minimiser; same gauge as DPO (mean log ratio 0 on each component). With
    pairs="all" it gives pi ∝ pi0 exp(P(y beats pi0) / beta), Azar et al.'s closed form.
    """
    lq = _check_log_pi0(log_pi0)
    w, b = _check_w(W, lq.size), _check_positive(beta)
    comp = _components(w)
    v = _solve_laplacian(_laplacian(w + w.T), 0.5 * (w.sum(axis=1) - w.sum(axis=0)), comp)
    log_pi, pi = _policy(lq, v / b, np.ones(lq.size, dtype=bool))
    e = w * (v[:, None] - v[None, :] - 0.5)
    grad = 2.0 / b * (e.sum(axis=1) - e.sum(axis=0)) / max(w.sum(), 1e-300)
    return Optimum(pi, log_pi, 1, float(np.max(np.abs(grad))), True)


# ------------------------------------------------------------------ gradient steps

def step_size(W, beta, loss: str = "dpo") -> float:
    """A learning rate 1/L for gradient steps on the normalised loss L / W.sum() in the logits,
    with L a bound on its curvature valid everywhere, so every step lowers the loss.

    Both Hessians are Laplacians of the comparison graph: IPO's is 2 Lap(Wn + Wn^T), DPO's is
    beta^2 Lap((Wn + Wn^T) sigma(h) sigma(-h)) <= beta^2 / 4 Lap(Wn + Wn^T), since
    sigma(h) sigma(-h) <= 1/4 (Wn = W / W.sum()). L is the largest eigenvalue of that bound.
    For DPO it scales as 1/beta^2: the implied reward beta * log ratio moves at a rate that
    does not depend on beta.
    """
    w, b = np.asarray(W, dtype=float), _check_positive(beta)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError("the count matrix W must be square")
    w = _check_w(w, w.shape[0])
    if loss not in ("dpo", "ipo"):
        raise ValueError(f"loss must be 'dpo' or 'ipo', got {loss!r}")
    total = w.sum()
    if total <= 0:
        return 1.0                      # no comparisons: the loss is flat, any step is safe
    lam = float(np.linalg.eigvalsh(_laplacian((w + w.T) / total))[-1])
    if lam <= 0:
        return 1.0                      # only self-comparisons: flat again
    return 4.0 / (b * b * lam) if loss == "dpo" else 1.0 / (2.0 * lam)


def _gradient_steps(W, log_pi0, beta, steps, lr, record_every, loss: str) -> Trajectory:
    lq = _check_log_pi0(log_pi0)
    w, b = _check_w(W, lq.size), _check_positive(beta)
    steps = check_int(steps, "steps", 0, MAX_STEPS)
    if lr is None:
        lr = step_size(w, b, loss)
    lr = _check_positive(lr, "lr")
    every = check_int(record_every, "record_every", 1, MAX_STEPS + 1)
    wn = w / w.sum() if w.sum() > 0 else w        # the normalised loss: mean over pairs
    record = np.unique(np.r_[np.arange(0, steps + 1, every), steps])
    # Per pair (i, j): W_ij sigma(-h) - W_ji sigma(h) = (W_ij - W_ji)/2 - (W_ij + W_ji)/2 tanh(h/2),
    # so a DPO step is one tanh of an n x n matrix; an IPO step is affine in u. The gradient
    # sums to zero over the responses, so the logits' sum never drifts. Constants are folded
    # in before the loop: a slider move may ask for thousands of steps.
    net = 0.5 * (wn - wn.T).sum(axis=1)
    both = 0.5 * (wn + wn.T)
    np.fill_diagonal(both, 0.0)
    half_b, c = 0.5 * b, 0.5 / b
    out_u = np.empty((record.size, lq.size))
    x = np.zeros(lq.size)                 # DPO: beta/2 * u; IPO: u (u = z - log pi0, 0 at pi0)
    if loss == "dpo":
        # u <- u - lr * (-b) * (net - sum_j both_ij tanh(x_i - x_j)), in units x = b u / 2
        push = (half_b * lr * b) * net
        pull = (half_b * lr * b) * both
        to_u = 1.0 / half_b
    else:
        # u <- u - lr * (2 Lap u - 4 c net) = (I - 2 lr Lap) u + 4 c lr net
        step_matrix = np.eye(lq.size) - 2.0 * lr * _laplacian(wn + wn.T)
        push = (4.0 * c * lr) * net
        to_u = 1.0
    buf = np.empty((lq.size, lq.size))
    k = 0
    for t in range(steps + 1):
        if t == record[k]:
            out_u[k] = to_u * x
            k += 1
            if t == steps:
                break
        if loss == "dpo":
            np.subtract.outer(x, x, out=buf)
            np.tanh(buf, out=buf)
            x = x + push - np.einsum("ij,ij->i", pull, buf)
        else:
            x = step_matrix @ x + push
    z = lq + out_u
    log_pi = z - logsumexp(z)[:, None]
    losses = np.empty(record.size)
    for s0 in range(0, record.size, 256):          # blocks keep the n x n x block arrays small
        d = out_u[s0:s0 + 256, :, None] - out_u[s0:s0 + 256, None, :]
        if loss == "dpo":
            terms = np.where(wn > 0, wn * -_log_sigmoid(b * d), 0.0)
        else:
            terms = wn * (d - c) ** 2
        losses[s0:s0 + 256] = terms.sum(axis=(1, 2))
    return Trajectory(record, log_pi, np.exp(log_pi), kl_divergence(log_pi, lq), losses)


def dpo_gradient_steps(W, log_pi0, beta, steps: int, lr=None, record_every: int = 1) -> Trajectory:
    """The policy along ``steps`` plain gradient steps z <- z - lr * d(L / W.sum())/dz from
    z = log pi0: what a training run on these comparisons reaches after T steps.

    The gradient in z carries a factor beta, and each response's share of it is about its
    share of the pairs, so rare responses move slowly; a learning rate of order 1/beta^2
    moves the common responses at a rate that does not depend on beta. ``lr=None`` takes
    ``step_size(W, beta)``, the largest rate guaranteed to lower the loss at every step.
    Records every ``record_every`` steps and the last one.
    """
    return _gradient_steps(W, log_pi0, beta, steps, lr, record_every, "dpo")


def ipo_gradient_steps(W, log_pi0, beta, steps: int, lr=None, record_every: int = 1) -> Trajectory:
    """As ``dpo_gradient_steps`` for the IPO loss (curvature independent of beta in z:
    ``lr=None`` takes ``step_size(W, beta, "ipo")``)."""
    return _gradient_steps(W, log_pi0, beta, steps, lr, record_every, "ipo")
