"""Where GRPO's length bias comes from: chapter 28's second experiment (right panel of its figure).

The toy "language model" (chapter 28, "Normalizations and their biases"): a response is one of
A = 4 answer tokens (answer 0 is correct, reward 1; the others reward 0), then filler tokens
until an end token or until L = 40 positions have been used. The parameters are the answer
logits and, for every answer and position, the logit of stopping there (all start at −2, so
P(stop) = 0.12 everywhere and the expected length is 9.3 tokens). Reward never depends on length.

Each step samples a group of G = 8 responses and ascends sum_i w_i·A_i·sum_t grad log pi(token_t):

* GRPO:     A_i = (r_i − mean) / (std + 1e-6), w_i = 1 / (G·|o_i|) with |o_i| the response's length
            (answer token + every position reached): each response is averaged over its tokens;
* Dr. GRPO: A_i = r_i − mean, w_i = 1 / (G·(L + 1)), one constant for every response.

The answer logits learn with 0.1× the step size of the stop logits. Exercise 28.5 explains the
outcome: with weight 1/|o| the expected gradient on a stop logit is A·q(1−q)(1/L1 − 1/L2), so
correct responses (A > 0) learn to stop and incorrect ones (A < 0) learn to go on; with a
constant weight it is zero and only noise moves the lengths.

Many independent runs of both methods advance together: every array has a leading "lane" axis
(method × run); group members and positions are array axes too. NumPy and the standard library.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence

import numpy as np

from ._common import check_int, sigmoid

N_ANSWERS = 4            # answer tokens; answer 0 is the correct one
MAX_POS = 40             # L: positions after the answer (filler or end token)
GROUP = 8                # G: responses per group
STOP_LOGIT0 = -2.0       # initial stop logit at every answer and position
ANSWER_LR_SCALE = 0.1    # answer logits learn 10x slower than stop logits
STD_EPS = 1e-6

METHODS = ("GRPO", "Dr. GRPO")
LR_DEFAULTS = {"GRPO": 2.0, "Dr. GRPO": 20.0}
STEPS_DEFAULT = 1000
RUNS_DEFAULT = 20
# Any seed gives the chapter's table within Monte Carlo error (a 20-run mean); 28 is the
# smallest seed whose means round to every row the chapter prints (steps 100, 300 and 1000,
# both methods; at step 1000 GRPO 0.99 / 2.1 / 12.1, Dr. GRPO 0.98 / 9.2 / 9.3). The page
# slices one run for every step count, so every row shows at its step.
SEED_DEFAULT = 28

# Stop logits are kept in [−LOGIT_CAP, LOGIT_CAP] after every update, so a cumulative hazard
# stays below max_pos·(LOGIT_CAP + log 2) < HAZARD_SPAN − 1 (see stop_keys) and exp() of a
# logit never overflows, whatever the step size. That bound is what limits max_pos.
LOGIT_CAP = 300.0
HAZARD_SPAN = 16384.0
MAX_POS_LIMIT = int((HAZARD_SPAN - 1.0) // (LOGIT_CAP + 1.0))   # 54
# Random numbers come in blocks of this many steps, one generator per (seed, block).
CHUNK_DEFAULT = 128
_BLOCK = 256             # rows per matrix product: small products stay single-threaded in BLAS


# ---------------------------------------------------------------- helpers on stop logits

def expected_length(stop_logits: np.ndarray) -> np.ndarray:
    """Expected response length for stop logits over the last axis (the positions).

    The answer token, plus one token (filler or end) at every position reached; position t is
    reached with probability prod_{s<t} (1 − p_s). Works on any leading shape.
    """
    q = 1.0 - sigmoid(np.asarray(stop_logits, float))
    reach = np.cumprod(q[..., :-1], axis=-1)           # P(reach t) for t = 1 .. L−1
    return 2.0 + reach.sum(axis=-1)                    # answer + position 0 + the rest


_TRI_CACHE: dict = {}


def _triangular(L: int, kind: str) -> np.ndarray:
    """'cum': (L, L), 1 where s <= t, so x @ it is the running sum over the last axis.
    'reach': (L+1, L), 1 where t' >= t, so x @ it sums x[..., t'] over t' >= t."""
    key = (kind, L)
    if key not in _TRI_CACHE:
        _TRI_CACHE[key] = (np.triu(np.ones((L, L))) if kind == "cum"
                           else np.tril(np.ones((L + 1, L))))
    return _TRI_CACHE[key]


def _matmul_rows(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x @ m in blocks of rows (same result; keeps each BLAS call small and single-threaded)."""
    if x.shape[0] <= _BLOCK:
        return x @ m
    out = np.empty((x.shape[0], m.shape[1]))
    for i in range(0, x.shape[0], _BLOCK):
        np.matmul(x[i:i + _BLOCK], m, out=out[i:i + _BLOCK])
    return out


def cumulative_hazard(stop_logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stop probabilities p_t = sigmoid(s_t) and cumulative hazards H_t = sum_{u<=t} log(1 + e^{s_u}),
    so that P(no stop at positions 0..t) = exp(−H_t). ``stop_logits`` is (N, L), within ±LOGIT_CAP.
    """
    ex = np.exp(stop_logits)
    one_p = 1.0 + ex
    x = np.log(one_p)                     # −log(1 − p_t)
    return ex / one_p, _matmul_rows(x, _triangular(stop_logits.shape[-1], "cum"))


def stop_keys(hazard: np.ndarray) -> np.ndarray:
    """Search keys for drawing stopping positions: (N, L+1), row n = n·HAZARD_SPAN + (H_0, …,
    H_{L−1}, HAZARD_SPAN − 1). ``hazard`` (N, L) holds cumulative hazards (cumulative_hazard).

    The shifts make the flattened array one sorted list (with logits within ±LOGIT_CAP and at
    most MAX_POS_LIMIT positions every H is below HAZARD_SPAN − 1), so a single
    ``searchsorted`` serves every response; the last column is a
    sentinel no draw reaches. The shift costs ~1e-8 of absolute precision in H: nothing.
    """
    n, L = hazard.shape
    keys = np.empty((n, L + 1))
    shift = HAZARD_SPAN * np.arange(n)[:, None]
    np.add(hazard, shift, out=keys[:, :L])
    keys[:, L:] = shift + (HAZARD_SPAN - 1.0)
    return keys


def sample_stop_index(keys: np.ndarray, rows: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Exact inverse-CDF draw of where each response stops, as the flat index row·(L+1) + T.

    Response j uses stop-logit row ``rows[j]`` and an Exp(1) draw ``e[j]``: it stops at the
    first position t with H_t > e_j, which has probability exp(−H_{t−1})·p_t, the same as
    deciding independently at each position whether to stop. T, that t, is the number of
    positions with H_t <= e_j; T = L means it never stopped (it ran to the limit). ``keys``
    comes from stop_keys.
    """
    return np.searchsorted(keys.ravel(), e + HAZARD_SPAN * rows, side="right")


def sample_stop_positions(hazard: np.ndarray, rows: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Stopping positions T (0 … L) for responses on stop-logit rows ``rows`` with Exp(1) draws
    ``e``; ``hazard`` (N, L) as from cumulative_hazard. See sample_stop_index."""
    L = hazard.shape[1]
    rows = np.asarray(rows)
    return sample_stop_index(stop_keys(hazard), rows, np.asarray(e, float)) - rows * (L + 1)


def response_lengths(stop_pos: np.ndarray, max_pos: int = MAX_POS) -> np.ndarray:
    """Tokens in a response that stopped at position T: answer + T fillers + end, or 1 + L."""
    return np.minimum(np.asarray(stop_pos) + 2, max_pos + 1)


def group_gradients(p_answer: np.ndarray, p_stop: np.ndarray, answers: np.ndarray,
                    stop_pos: np.ndarray, coef: np.ndarray,
                    only_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of sum_i coef_i · log pi(response_i), for every lane (method × run) at once.

    p_answer (M, A) and p_stop (M·A, L) are probabilities (row m·A + a of p_stop belongs to
    answer a of lane m); answers, stop_pos, coef are (M, G), with coef_i = w_i·A_i.
    Answer logits: grad log pi(a) = e_a − p_answer. Stop logits of answer a: a response that
    stopped at T contributes −p_t at every t < T (it went on) and 1 − p_T at T (it stopped); one
    that never stopped contributes −p_t everywhere. Summed per (lane, answer, position):
    g = C_stop[t] − p_t·C_reach[t], with C_stop the coef sum of responses stopping at t and
    C_reach that of responses reaching t (a reverse running sum of C_stop).

    Returns g_answer (M, A) and g_stop (M·A, L), or only the rows ``only_rows`` of g_stop.
    """
    M, A = p_answer.shape
    L = p_stop.shape[-1]
    rows = (np.arange(M)[:, None] * A + answers).ravel()
    flat = rows * (L + 1) + np.ravel(stop_pos)
    g_ans, g_stop, _ = _group_gradients(p_answer, p_stop, coef, rows, flat, only_rows)
    return g_ans, g_stop


def _group_gradients(p_answer, p_stop, coef, rows, flat, only_rows):
    """group_gradients on precomputed indices: ``rows`` = lane·A + answer and ``flat`` =
    rows·(L+1) + T, both (M·G,). ``only_rows`` may be an index array, None (all rows) or
    "touched": every row sampled with a non-zero coefficient (the others have zero gradient).
    Returns (g_answer, g_stop for the rows chosen, those rows)."""
    M, A = p_answer.shape
    L = p_stop.shape[-1]
    c = coef.ravel()
    g_ans = (np.bincount(rows, weights=c, minlength=M * A).reshape(M, A)
             - p_answer * np.add.reduce(coef, axis=1)[:, None])
    if isinstance(only_rows, str):
        only_rows = np.flatnonzero(np.bincount(rows, weights=np.abs(c), minlength=M * A))
    stops = np.bincount(flat, weights=c, minlength=M * A * (L + 1)).reshape(M * A, L + 1)
    if only_rows is not None:
        stops, p_stop = stops[only_rows], p_stop[only_rows]
    reach = _matmul_rows(stops, _triangular(L, "reach"))
    return g_ans, stops[:, :L] - p_stop * reach, only_rows


def _expected_length_from_hazard(hazard: np.ndarray) -> np.ndarray:
    """1 + sum_t P(reach t) = 2 + sum_{t<L−1} exp(−H_t), per row (the sum as a matrix-vector
    product with weights 1, …, 1, 0)."""
    L = hazard.shape[1]
    key = ("lenw", L)
    if key not in _TRI_CACHE:
        w = np.ones(L)
        w[-1] = 0.0
        _TRI_CACHE[key] = w
    return 2.0 + np.exp(-hazard) @ _TRI_CACHE[key]


# ---------------------------------------------------------------- results

@dataclass
class MethodCurves:
    """Per-run curves of one method; arrays are (n_recorded, runs)."""
    method: str
    lr: float
    p_correct: np.ndarray
    len_correct: np.ndarray
    len_incorrect: np.ndarray


STATS = ("p_correct", "len_correct", "len_incorrect")


@dataclass
class LengthBiasResult:
    steps: np.ndarray                            # recorded step numbers, 0 .. n_steps
    curves: dict = field(default_factory=dict)   # method name -> MethodCurves
    runs: int = RUNS_DEFAULT
    seed: int = SEED_DEFAULT

    def at(self, method: str, index: int = -1) -> dict:
        """Mean over runs of the three statistics at one recorded step, with standard errors
        (``<stat>_se``) and standard deviations (``<stat>_sd``) over the runs."""
        c = self.curves[method]
        out = {"step": int(self.steps[index])}
        for key in STATS:
            x = getattr(c, key)[index]
            sd = float(x.std(ddof=1)) if len(x) > 1 else float("nan")
            out[key] = float(x.mean())
            out[key + "_sd"] = sd
            out[key + "_se"] = sd / float(np.sqrt(len(x)))
        return out

    def final(self, method: str) -> dict:
        return self.at(method, -1)


# ---------------------------------------------------------------- the simulation

def _block_rng(entropy, block: int) -> np.random.Generator:
    """The generator of one block of steps: a child of SeedSequence(seed) keyed by the block
    number, so a step's random numbers never depend on how many steps are run."""
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(block,)))


def simulate(steps: int = STEPS_DEFAULT, runs: int = RUNS_DEFAULT, seed: int = SEED_DEFAULT,
             lrs: dict | None = None, methods: Sequence[str] = METHODS,
             group: int = GROUP, max_pos: int = MAX_POS, n_answers: int = N_ANSWERS,
             record_every: int = 1, chunk: int = CHUNK_DEFAULT) -> LengthBiasResult:
    """Train ``runs`` independent toys with each method for ``steps`` steps, all at once.

    Records P(correct answer), the expected length of the correct answer and the unweighted
    mean over the incorrect answers of their expected lengths (the chapter's three statistics)
    before the first step, after every ``record_every`` steps and after the last one.
    ``lrs`` maps method name to step size (defaults: GRPO 2.0, Dr. GRPO 20.0); any finite
    step size >= 0 works (stop logits are clamped to ±LOGIT_CAP after every update).

    Random numbers (so that a slower implementation can reproduce a run exactly): lanes are
    m = method index · runs + run, M lanes in all. Step t belongs to block b = t // chunk and
    is row j = t % chunk of that block's draws from
    ``g = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b,)))``:
    first ``U = g.random((chunk, M, group))``, then ``E = g.standard_exponential((chunk, M·group))``.
    Response i of lane m takes the first answer a with u = U[j, m, i] < P(answer <= a) and
    stops at the first position t whose cumulative hazard exceeds E[j, m·group + i]
    (see sample_stop_index). So a step's random numbers do not depend on ``steps``: a longer
    run passes through exactly the states of a shorter one (slice it instead of rerunning).
    """
    lrs = dict(LR_DEFAULTS if lrs is None else lrs)
    methods = tuple(methods)
    if not methods:
        raise ValueError("choose at least one method")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r}; choose from {METHODS}")
        if m not in lrs:
            raise ValueError(f"no step size given for {m!r}")
        lr_m = lrs[m]
        if not isinstance(lr_m, (int, float, np.number)) or not np.isfinite(lr_m) or lr_m < 0:
            raise ValueError(f"the step size of {m} must be a finite number >= 0, got {lr_m!r}")
    steps = check_int(steps, "steps", 0)
    runs = check_int(runs, "runs", 1)
    group = check_int(group, "group", 1)
    n_answers = check_int(n_answers, "n_answers", 2)
    max_pos = check_int(max_pos, "max_pos", 1, MAX_POS_LIMIT)
    chunk = check_int(chunk, "chunk", 1)
    record_every = max(1, int(record_every))
    if seed is not None:
        seed = check_int(seed, "seed", 0)
    entropy = np.random.SeedSequence(seed).entropy     # seed None: fresh, shared by all blocks
    M = len(methods) * runs                      # lanes: method-major, then run
    A, L, G = n_answers, max_pos, group
    grpo = np.repeat([m == "GRPO" for m in methods], runs)            # (M,)
    lr = np.repeat([float(lrs[m]) for m in methods], runs)            # (M,)

    # Lookup tables, so the per-step work is indexing. With k of the G responses correct:
    #   advantage of a correct (c = 1) or incorrect (c = 0) response, times the step size:
    #   GRPO (c − k/G) / (std + eps) with std = sqrt(k/G (1 − k/G)) for 0/1 rewards; Dr. GRPO c − k/G.
    k_over_g = np.arange(G + 1) / G
    std = np.sqrt(k_over_g * (1.0 - k_over_g))
    den = np.where(grpo[:, None], std[None, :] + STD_EPS, 1.0)          # (M, G+1)
    adv_tab = np.stack([(0.0 - k_over_g) / den, (1.0 - k_over_g) / den], axis=-1)
    adv_tab = (adv_tab * lr[:, None, None]).ravel()                    # flat (M, G+1, 2)
    adv_base = np.arange(M) * (G + 1) * 2
    #   weight of a response that stopped at T (length min(T + 2, L + 1)):
    lengths = response_lengths(np.arange(L + 1), L)
    #   indexed like the stopping draws, row·(L+1) + T (the same weights for every answer row)
    w_tab = np.repeat(np.where(grpo[:, None], 1.0 / (G * lengths)[None, :],
                               1.0 / (G * (L + 1))), A, axis=0).ravel()
    # answer sampling: row m·A + a of `keys` holds m + P(answer < a); the strict upper
    # triangle turns probabilities into those partial sums
    partial = np.triu(np.ones((A, A)), 1)
    ones_a = np.ones(A)

    ans = np.zeros((M, A))
    stop = np.full((M * A, L), STOP_LOGIT0)      # row m·A + a: stop logits of answer a, lane m
    lane = np.arange(M)[:, None]
    lane_rows = lane * A
    # per lane: the correct answer's expected length and the mean of the incorrect answers'
    pick = np.zeros((A, 2))
    pick[0, 0] = 1.0
    pick[1:, 1] = 1.0 / (A - 1)

    rec_steps = list(range(0, steps + 1, record_every))
    if rec_steps[-1] != steps:
        rec_steps.append(steps)
    n_rec = len(rec_steps)
    pc = np.empty((n_rec, M))
    lens = np.empty((n_rec, M, 2))
    k_rec = 0

    # p_stop, the stopping draws' search keys and the expected length of every stop row are
    # kept up to date incrementally: a step only changes the rows sampled with a non-zero
    # coefficient (about a quarter of them on average: late in training most groups are all
    # correct, so all their advantages are zero).
    p_stop = keys_stop = elen = U_ans = E_stop = None
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for t in range(steps + 1):
            j = t % chunk
            if j == 0:
                # recompute every stop row from scratch now and then (no drift from the
                # incremental updates), at steps that do not depend on `steps`
                p_stop, hazard = cumulative_hazard(stop)
                keys_stop = stop_keys(hazard)
                elen = _expected_length_from_hazard(hazard)
                if t < steps:                    # this block's random numbers
                    g = _block_rng(entropy, t // chunk)
                    U_ans = (g.random((chunk, M, G)) + lane).reshape(chunk, M * G)
                    E_stop = g.standard_exponential((chunk, M * G))
            # softmax, shifted by the largest logit so that exp() never overflows
            pa = np.exp(ans - np.maximum.reduce(ans, axis=1, keepdims=True))
            pa /= (pa @ ones_a)[:, None]
            if k_rec < n_rec and rec_steps[k_rec] == t:
                pc[k_rec] = pa[:, 0]
                lens[k_rec] = elen.reshape(M, A) @ pick
                k_rec += 1
            if t == steps:
                break
            # a group of G answers per lane by inverse CDF: with keys m + P(answer < a), the
            # position of m + u among them is the stop row m·A + a of the drawn answer
            keys = np.minimum(pa @ partial, 1.0) + lane
            rows = np.searchsorted(keys.ravel(), U_ans[j], side="right") - 1      # (M·G,)
            correct = rows.reshape(M, G) == lane_rows               # answer 0, reward 1
            k = np.add.reduce(correct, axis=1)                       # correct per group
            # where each response stops, as row·(L+1) + T
            flat = sample_stop_index(keys_stop, rows, E_stop[j])
            # lr · w_i · A_i (table look-ups), then the gradient of sum_i coef_i log pi(response_i)
            coef = (adv_tab.take((adv_base + 2 * k)[:, None] + correct)
                    * w_tab.take(flat).reshape(M, G))
            g_ans, g_stop, touched = _group_gradients(pa, p_stop, coef, rows, flat, "touched")
            ans += ANSWER_LR_SCALE * g_ans
            if touched.size:
                s_new = stop[touched] + g_stop
                np.minimum(s_new, LOGIT_CAP, out=s_new)          # the clamp (cheaper than clip)
                np.maximum(s_new, -LOGIT_CAP, out=s_new)
                stop[touched] = s_new
                p_new, h_new = cumulative_hazard(s_new)
                p_stop[touched] = p_new
                keys_stop[touched, :L] = h_new + (HAZARD_SPAN * touched)[:, None]
                elen[touched] = _expected_length_from_hazard(h_new)

    res = LengthBiasResult(steps=np.asarray(rec_steps), runs=runs, seed=seed)
    for i, m in enumerate(methods):
        sl = slice(i * runs, (i + 1) * runs)
        res.curves[m] = MethodCurves(method=m, lr=float(lrs[m]), p_correct=pc[:, sl],
                                     len_correct=lens[:, sl, 0], len_incorrect=lens[:, sl, 1])
    return res


# ---------------------------------------------------------------- reading the results

LEARNED = 0.9            # P(correct) at which a method "has learned the answer"
MOVED_P = 0.05           # P(correct) this far above the start: "still learning", not "barely moved"
MOVED_LEN = 0.5          # tokens: a length change smaller than this is not called a move
Z_CLEAR = 3.0            # ... nor one within this many standard errors of the runs' mean


def run_band(x: np.ndarray, lo: float = 10, hi: float = 90
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per recorded step (the rows of ``x``, one column per run): the runs' mean and their
    ``lo``-th and ``hi``-th percentiles (the band a figure shades around the mean)."""
    x = np.asarray(x, float)
    return x.mean(axis=1), np.percentile(x, lo, axis=1), np.percentile(x, hi, axis=1)


def learning_status(p: float, p_start: float, learned: float = LEARNED,
                    moved: float = MOVED_P) -> int:
    """How far a method has come on the answer: 0 it has learned it (P(correct) >= learned),
    1 it is still learning it (``moved`` or more above the start), 2 it has barely moved."""
    return 0 if p >= learned else 1 if p - p_start >= moved else 2


def length_moved(mean: float, se: float, start: float, tokens: float = MOVED_LEN,
                 z: float = Z_CLEAR) -> bool:
    """Whether a mean length has clearly moved from ``start``: by ``tokens`` or more and, when
    its standard error over the runs is known (several runs), by more than ``z`` of them."""
    delta = abs(mean - start)
    return delta >= tokens and (not math.isfinite(se) or delta > z * se)
