"""PPO's clipped surrogate (Equation 12.2, section 12.1.4) and its relatives, and what several
epochs on one batch do with each.

For a sampled action with advantage A and probability ratio omega = pi_theta(a) / pi_old(a):

* plain importance-weighted surrogate:  omega * A;
* PPO (Eq. 12.2):  min(omega * A, clip(omega, 1 - eps_low, 1 + eps_high) * A), with
  eps_low = eps_high = 0.2 in the chapter; DAPO's clip-higher widens only the upper side,
  [1 - 0.2, 1 + 0.28] (chapter 28, "Importance ratios, clipping, and stale samples");
* CISPO (MiniMax's): clip the importance *weight*, not the objective.  Its per-sample objective is
  sg(clip(omega, 1 - eps_low, 1 + eps_high)) * A * log pi_theta(a), where sg stops the gradient,
  so the update is clip(omega) * A * grad log pi_theta(a): bounded, never zero.  MiniMax-M1
  itself bounds the weight above only, 1 + eps_high; ``EPS_LOW_OPEN`` (eps_low = 1, a lower
  edge of 0) is that choice.

One update direction for all four.  Since grad omega = omega * grad log pi, every method's gradient
of one sample is a *score weight* c times grad log pi_theta(a) (``score_weight``):

    plain: c = omega * A;   PPO / clip-higher: c = omega * A, or 0 where the clip binds;
    CISPO: c = clip(omega) * A.

"Gradient against omega" (``ratio_gradient``) is the same thing divided by omega, i.e. the
derivative of the surrogate in omega: 1 * A for the plain surrogate; A or 0 for PPO; and for CISPO,
which has no objective in omega, the weight it puts on grad omega, clip(omega) * A / omega: equal
to A inside the range, falling like (1 + eps_high) A / omega above it and rising like
(1 - eps_low) A / omega below it, never zero.

The clip binds (zero gradient) when the objective has stopped improving in the direction the
advantage asks for: A > 0 and omega > 1 + eps_high, or A < 0 and omega < 1 - eps_low.  On the other
side (A > 0 and omega small, A < 0 and omega large) min() keeps the unclipped term and the gradient
is the plain one; that is what makes the objective a pessimistic lower bound.  Exactly at the edge
both terms agree; this module counts the edge as not binding (the derivative from inside).

The epoch experiment (``run_epochs``): a softmax policy over a few actions, one batch drawn from
the sampling policy pi_old (``draw_batch``), then full-batch gradient ascent steps on the batch
with each method.  Everything given the batch is exact: the batch objective and its gradient are
sums over the samples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 0.2  # PPO's clip range (Schulman et al. 2017, quoted in section 12.1.4)
EPS_HIGH_DAPO = 0.28  # DAPO's clip-higher upper range
# MiniMax-M1's CISPO puts no lower bound on the weight (its eps_low is set large) and tunes only
# eps_high. Here eps_low = 1 does that: the lower edge 1 - eps_low is 0, and no ratio is below 0.
EPS_LOW_OPEN = 1.0
METHODS = ("plain", "ppo", "clip_higher", "cispo")
METHOD_LABELS = {
    "plain": "plain surrogate ω·A",
    "ppo": "PPO clip [0.8, 1.2]",
    "clip_higher": "clip-higher [0.8, 1.28]",
    "cispo": "CISPO weight clip [0.8, 1.28]",
}
# Default (eps_low, eps_high) of each method; the plain surrogate has none.  CISPO gets
# clip-higher's range so that the two differ only in *what* is clipped.
METHOD_EPS = {
    "plain": (None, None),
    "ppo": (EPS, EPS),
    "clip_higher": (EPS, EPS_HIGH_DAPO),
    "cispo": (EPS, EPS_HIGH_DAPO),
}

# The epoch experiment's defaults: action 4 is rare under the sampling policy and rewarded best.
DEFAULT_P_OLD = np.array([0.40, 0.25, 0.20, 0.10, 0.05])
DEFAULT_REWARDS = np.array([0.2, 0.4, 0.0, 0.3, 1.0])
DEFAULT_SAMPLES = 64
DEFAULT_EPOCHS = 10
DEFAULT_LR = 2.0
DEFAULT_SEED = 0


# ---------------------------------------------------------------- the one-sample functions

def _eps(eps_low, eps_high) -> tuple[float, float]:
    lo = float(eps_low)
    hi = lo if eps_high is None else float(eps_high)
    if not (np.isfinite(lo) and 0.0 <= lo <= 1.0):
        raise ValueError(f"eps_low must lie in [0, 1], got {eps_low!r}")
    if not (np.isfinite(hi) and hi >= 0.0):
        raise ValueError(f"eps_high must be a finite number >= 0, got {eps_high!r}")
    return lo, hi


def _ratio(omega) -> np.ndarray:
    w = np.asarray(omega, dtype=float)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("the probability ratio omega must be finite and >= 0")
    return w


def _adv(advantage) -> np.ndarray:
    a = np.asarray(advantage, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError("advantages must be finite numbers")
    return a


def _out(x):
    return x if np.ndim(x) else float(x)


def clip_ratio(omega, eps_low=EPS, eps_high=None):
    """clip(omega, 1 - eps_low, 1 + eps_high); ``eps_high`` defaults to ``eps_low``."""
    lo, hi = _eps(eps_low, eps_high)
    return _out(np.clip(_ratio(omega), 1.0 - lo, 1.0 + hi))


def clipped_surrogate(omega, advantage, eps_low=EPS, eps_high=None):
    """Equation (12.2) for one sample: min(omega A, clip(omega, 1 - eps_low, 1 + eps_high) A)."""
    w, a = _ratio(omega), _adv(advantage)
    return _out(np.minimum(w * a, np.asarray(clip_ratio(w, eps_low, eps_high)) * a))


def clip_binds(omega, advantage, eps_low=EPS, eps_high=None):
    """True where the clipped term is the smaller one strictly: the gradient is zero there."""
    lo, hi = _eps(eps_low, eps_high)
    w, a = _ratio(omega), _adv(advantage)
    return _out(((a > 0) & (w > 1.0 + hi)) | ((a < 0) & (w < 1.0 - lo)))


def ratio_gradient(omega, advantage, method: str = "ppo", eps_low=None, eps_high=None):
    """The update's weight on grad omega (see the module notes): d surrogate / d omega.

    plain: A; ppo / clip_higher: A, or 0 where the clip binds; cispo: clip(omega) A / omega
    (at omega = 0, where grad omega = 0 anyway: with eps_low = 1, no lower edge, its limit A;
    otherwise (1 - eps_low) A / omega -> inf, returned as +-inf, or 0 when A = 0).
    """
    w, a = _ratio(omega), _adv(advantage)
    if method == "plain":
        return _out(np.broadcast_to(a, np.broadcast(w, a).shape).astype(float))
    lo, hi = _method_eps(method, eps_low, eps_high)
    if method == "cispo":
        c = np.clip(w, 1.0 - lo, 1.0 + hi) * a
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(c == 0, 0.0, c / w)
        if lo == 1.0:   # no lower edge: clip(omega) = omega near 0, so the weight tends to A
            g = np.where(w == 0, a, g)
        return _out(g)
    return _out(np.where(clip_binds(w, a, lo, hi), 0.0, a))


def score_weight(omega, advantage, method: str = "ppo", eps_low=None, eps_high=None):
    """The coefficient c of grad log pi_theta(a) in one sample's gradient (module notes)."""
    w, a = _ratio(omega), _adv(advantage)
    if method == "plain":
        return _out(w * a)
    lo, hi = _method_eps(method, eps_low, eps_high)
    if method == "cispo":
        return _out(np.clip(w, 1.0 - lo, 1.0 + hi) * a)
    return _out(np.where(clip_binds(w, a, lo, hi), 0.0, w * a))


def _method_eps(method: str, eps_low, eps_high) -> tuple[float, float]:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    d_lo, d_hi = METHOD_EPS[method]
    if d_lo is None:
        return (0.0, 0.0)
    lo = d_lo if eps_low is None else eps_low
    if eps_high is not None:
        hi = eps_high
    elif method == "ppo":
        hi = lo  # PPO's range is symmetric
    else:
        hi = d_hi  # clip-higher and CISPO keep their own upper range
    return _eps(lo, hi)


# ---------------------------------------------------------------- a batch and the epochs

def log_softmax(z) -> np.ndarray:
    """log pi for logits z along the last axis (shifted by the maximum: no overflow)."""
    z = np.asarray(z, dtype=float)
    s = z - z.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def kl(log_p, log_q) -> np.ndarray:
    """KL(p || q) = sum p (log p - log q) along the last axis (terms with p = 0 count zero)."""
    log_p, log_q = np.asarray(log_p, float), np.asarray(log_q, float)
    p = np.exp(log_p)
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (log_p - log_q), 0.0)
    # a KL divergence is >= 0; rounding can leave -1e-16 when p == q
    return _out(np.maximum(terms.sum(axis=-1), 0.0))


@dataclass(frozen=True)
class Batch:
    """One batch drawn from the sampling policy.

    ``log_p_old`` (n,) its log-probabilities; ``actions`` (N,) the sampled actions; ``rewards``
    (N,); ``advantages`` (N,) = reward minus the batch's mean reward (a batch baseline);
    ``counts`` (n,) how often each action was drawn.
    """

    log_p_old: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    advantages: np.ndarray
    counts: np.ndarray


def _sampling_policy(p_old) -> np.ndarray:
    p = np.asarray(p_old, dtype=float)
    if p.ndim != 1 or p.size < 2 or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError("the sampling policy needs at least two strictly positive probabilities")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError("the sampling policy's probabilities must sum to one")
    return p


def make_batch(p_old, actions, rewards) -> Batch:
    """A batch from given actions and their rewards (advantage = reward - batch mean reward)."""
    p = _sampling_policy(p_old)
    a = np.asarray(actions)
    if a.ndim != 1 or a.size == 0 or not np.issubdtype(a.dtype, np.integer) \
            or a.min() < 0 or a.max() >= p.size:
        raise ValueError("actions must be a non-empty list of action indices")
    rew = np.asarray(rewards, dtype=float)
    if rew.shape != a.shape or not np.all(np.isfinite(rew)):
        raise ValueError("give one finite reward per sampled action")
    return Batch(np.log(p), a, rew, rew - rew.mean(), np.bincount(a, minlength=p.size))


def draw_batch(p_old=DEFAULT_P_OLD, action_rewards=DEFAULT_REWARDS,
               n_samples: int = DEFAULT_SAMPLES, seed: int | None = DEFAULT_SEED,
               bernoulli: bool = False) -> Batch:
    """Draw ``n_samples`` actions from ``p_old`` with ``np.random.default_rng(seed)``.

    Each sample's reward is its action's entry of ``action_rewards``; with ``bernoulli=True``
    those entries are success probabilities and each reward is a 0/1 draw (so the batch can
    flatter a lucky action, which the plain surrogate then chases).  The actions are drawn
    first, so a batch's actions do not depend on ``bernoulli``.
    """
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    p = _sampling_policy(p_old)
    r = np.asarray(action_rewards, dtype=float)
    if r.shape != p.shape or not np.all(np.isfinite(r)):
        raise ValueError("give one finite reward per action")
    if bernoulli and np.any((r < 0) | (r > 1)):
        raise ValueError("with Bernoulli rewards each action's reward is a probability in [0, 1]")
    rng = np.random.default_rng(seed)
    actions = rng.choice(p.size, size=int(n_samples), p=p / p.sum())
    rewards = r[actions]
    if bernoulli:
        rewards = (rng.random(actions.size) < rewards).astype(float)
    return make_batch(p, actions, rewards)


def mean_reward_by_action(batch: Batch) -> np.ndarray:
    """Each action's mean reward over its draws in the batch (NaN for an action not drawn)."""
    sums = np.bincount(batch.actions, weights=batch.rewards, minlength=batch.counts.size)
    return np.where(batch.counts > 0, sums / np.maximum(batch.counts, 1), np.nan)


def luckiest_action(batch: Batch, action_rewards) -> int | None:
    """The drawn action whose mean reward in the batch is furthest above its expected reward
    (``action_rewards``: with 0/1 rewards, its success rate), the lowest index on a tie; None
    when no drawn action paid more than expected (the batch flatters none)."""
    r = np.asarray(action_rewards, dtype=float)
    excess = np.where(batch.counts > 0, mean_reward_by_action(batch) - r, -np.inf)
    k = int(np.argmax(excess))
    return k if excess[k] > 0 else None


def batch_ratios(logits, batch: Batch) -> np.ndarray:
    """omega_i = pi_theta(a_i) / pi_old(a_i) for every sample."""
    lp = log_softmax(logits)
    return np.exp(lp[batch.actions] - batch.log_p_old[batch.actions])


def batch_objective(logits, batch: Batch, method: str = "ppo", eps_low=None, eps_high=None):
    """Mean over the batch of the method's surrogate at ``logits``.

    plain: mean omega A; ppo / clip_higher: mean of Equation (12.2).  CISPO has no objective of
    its own (its weight is held fixed); use ``cispo_surrogate``.
    """
    w = batch_ratios(logits, batch)
    if method == "plain":
        return float(np.mean(w * batch.advantages))
    if method == "cispo":
        raise ValueError("CISPO is defined by its gradient; use cispo_surrogate")
    lo, hi = _method_eps(method, eps_low, eps_high)
    return float(np.mean(clipped_surrogate(w, batch.advantages, lo, hi)))


def cispo_surrogate(logits, batch: Batch, frozen_logits, eps_low=None, eps_high=None):
    """CISPO's objective with the stop-gradient made explicit: the clipped weights are computed
    at ``frozen_logits`` and held fixed, mean_i clip(omega_i) A_i log pi_logits(a_i).  Its
    gradient in ``logits`` at ``logits = frozen_logits`` is CISPO's update."""
    lo, hi = _method_eps("cispo", eps_low, eps_high)
    c = np.clip(batch_ratios(frozen_logits, batch), 1.0 - lo, 1.0 + hi) * batch.advantages
    return float(np.mean(c * log_softmax(logits)[batch.actions]))


def batch_gradient(logits, batch: Batch, method: str = "ppo", eps_low=None, eps_high=None):
    """The update direction on the logits: mean_i c_i (onehot(a_i) - pi_theta), c_i the score
    weight (grad of log softmax is onehot - pi, section 12.1.2)."""
    z = np.asarray(logits, dtype=float)
    lp = log_softmax(z)
    w = np.exp(lp[batch.actions] - batch.log_p_old[batch.actions])
    c = np.asarray(score_weight(w, batch.advantages, method, eps_low, eps_high), dtype=float)
    n = z.size
    per_action = np.bincount(batch.actions, weights=c, minlength=n)
    return (per_action - c.sum() * np.exp(lp)) / batch.actions.size


@dataclass(frozen=True)
class EpochTrace:
    """Epoch by epoch (index 0 = before the first step, the sampling policy itself).

    ``policy`` (E+1, n); ``kl`` (E+1,) KL(pi_theta || pi_old); ``p_rare`` (E+1,) the probability
    of ``rare`` (the action of highest reward, least probable among those, by default);
    ``clipped_share`` (E+1,) the share of the batch whose gradient is zero at that policy (always
    0 for plain and CISPO); ``objective`` (E+1,) the batch surrogate (for CISPO the plain one,
    mean omega A, as a yardstick); ``expected_reward`` (E+1,) of the policy (rewards per action).
    """

    method: str
    eps_low: float
    eps_high: float
    rare: int
    policy: np.ndarray
    kl: np.ndarray
    p_rare: np.ndarray
    clipped_share: np.ndarray
    objective: np.ndarray
    expected_reward: np.ndarray


def rare_action(p_old, action_rewards) -> int:
    """The rewarded action the sampling policy neglects: highest reward, then least probable."""
    p = np.asarray(p_old, float)
    r = np.asarray(action_rewards, float)
    best = np.flatnonzero(r == r.max())
    return int(best[np.argmin(p[best])])


def run_epochs(batch: Batch, method: str = "ppo", epochs: int = DEFAULT_EPOCHS,
               lr: float = DEFAULT_LR, eps_low=None, eps_high=None,
               action_rewards=None, rare: int | None = None) -> EpochTrace:
    """``epochs`` full-batch gradient-ascent steps of size ``lr`` on the logits, from pi_old.

    ``action_rewards`` (one per action) gives the expected-reward column and picks ``rare``
    when it is not given; without it, the rewards recorded in the batch are used.
    """
    if int(epochs) != epochs or epochs < 0:
        raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
    if not np.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be a positive finite number, got {lr!r}")
    lo, hi = _method_eps(method, eps_low, eps_high)
    n = batch.log_p_old.size
    if action_rewards is None:
        r = np.full(n, np.nan)
        r[batch.actions] = batch.rewards
    else:
        r = np.asarray(action_rewards, dtype=float)
        if r.shape != (n,):
            raise ValueError("give one reward per action")
    if rare is None:
        rare = rare_action(np.exp(batch.log_p_old), np.where(np.isnan(r), -np.inf, r))
    e = int(epochs)
    # Samples with the same action and advantage act alike: work on the distinct pairs, weighted
    # by their count (the same sums, fewer terms), and inline the per-sample rules (this loop is
    # the page's hot path).
    pairs, count = np.unique(np.stack([batch.actions, batch.advantages]), axis=1,
                             return_counts=True)
    act = pairs[0].astype(int)
    adv = pairs[1]
    frac = count / batch.actions.size
    lp_old = batch.log_p_old[act]
    onehot = np.zeros((act.size, n))
    onehot[np.arange(act.size), act] = 1.0
    clipping = method in ("ppo", "clip_higher")
    z = batch.log_p_old.copy()
    pol = np.empty((e + 1, n))
    log_pol = np.empty((e + 1, n))
    obj = np.empty(e + 1)
    share = np.zeros(e + 1)
    for t in range(e + 1):
        s = z - z.max()
        lp = s - np.log(np.exp(s).sum())
        log_pol[t] = lp
        pi = np.exp(lp)
        pol[t] = pi
        w = np.exp(lp[act] - lp_old)
        plain = w * adv
        if clipping:
            binds = ((adv > 0) & (w > 1.0 + hi)) | ((adv < 0) & (w < 1.0 - lo))
            obj[t] = frac @ np.minimum(plain, np.clip(w, 1.0 - lo, 1.0 + hi) * adv)
            share[t] = frac @ binds
            c = np.where(binds, 0.0, plain)
        else:
            obj[t] = frac @ plain
            c = np.clip(w, 1.0 - lo, 1.0 + hi) * adv if method == "cispo" else plain
        if t < e:
            fc = frac * c
            z = z + lr * (fc @ onehot - fc.sum() * pi)  # mean_i c_i (onehot(a_i) - pi)
    return EpochTrace(
        method=method, eps_low=lo, eps_high=hi, rare=int(rare), policy=pol,
        kl=np.asarray(kl(log_pol, batch.log_p_old)), p_rare=pol[:, rare],
        clipped_share=share, objective=obj,
        expected_reward=pol @ np.where(np.isnan(r), 0.0, r),
    )


def compare_methods(batch: Batch, epochs: int = DEFAULT_EPOCHS, lr: float = DEFAULT_LR,
                    action_rewards=None, methods=METHODS, eps=None) -> dict:
    """``run_epochs`` for several methods on one batch; ``eps`` optionally maps a method to
    its (eps_low, eps_high)."""
    eps = eps or {}
    out = {}
    for m in methods:
        lo, hi = eps.get(m, (None, None))
        out[m] = run_epochs(batch, m, epochs, lr, lo, hi, action_rewards)
    return out
