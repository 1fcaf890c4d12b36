"""Worked numeric instances of Exercises 28.1-28.8 of the chapter "Reinforcement Learning for
Language Models and Reasoning" (Chapter 28 of a different book), each instance's numbers and
helpers beside its worked solution.

Every answer, every number of a worked solution and every value a wrong-answer hint reacts to
is computed by ``klrl_core`` when asked for; nothing here is a typed-in result. Statements,
hints and solutions are written for this app (the chapter's sentences are not copied).
"""

from __future__ import annotations

import math

import numpy as np

from klrl_app.exercises.machinery import KAPPA_LIMIT, Exercise, Part, Trap, _f, _vec
from klrl_core import entropy, groups, kl_penalty, normalization, pass_at_k, step_labels
from klrl_core import stopping, tilt, token_credit
from klrl_core import user_model as um
from klrl_app import fmt

CH28 = "Chapter 28, *Reinforcement Learning for Language Models and Reasoning*"


# --------------------------------------------------------------------------- 28.1 (b)

PI_REF_281 = (0.5, 0.3, 0.2)
R_281 = (0.0, 1.0, 1.0)
KAPPA_TINY = 1e-6  # beta -> infinity in practice


def _t281(kappa: float):
    m = um.make_model(PI_REF_281, R_281)
    return tilt.tilt(m.log_pi0, m.r, kappa)


def _value281(kappa: float) -> float:
    """The optimal value beta ln Z = ln Z / kappa."""
    return float(_t281(kappa).log_z) / kappa


def _solution_28_1() -> str:
    sharp = _t281(KAPPA_LIMIT)
    flat = _t281(0.0)
    return "\n".join(
        [
            "**(a) in one line.** J(π) = β ln Z − β·KL(π ‖ π*), and a KL is zero only when its "
            "arguments agree, so π* is the unique maximiser and β ln Z the best value.",
            "",
            "**β → ∞.** exp(r/β) → 1 for every response, so π* → π_ref = "
            f"{_vec(flat.pi, 1)}. The value β ln Z tends to the derivative of ln Z at κ = 0, "
            f"the reference's mean reward: {fmt.fixed(_value281(KAPPA_TINY), 3)}.",
            "",
            "**β → 0.** The factor exp(r/β) of the top reward swamps all others, so only the two "
            "reward-1 responses keep probability, and between them the ratio stays the "
            f"reference's 0.3 : 0.2: π* → {_vec(sharp.pi, 1)}. The value tends to the top "
            f"reward: {fmt.fixed(_value281(KAPPA_LIMIT), 3)} at β = 10⁻⁴ (β ln Z = r_max + β ln "
            f"π_ref(top "
            "level), and the last term vanishes).",
        ]
    )


EX_28_1 = Exercise(
    id="28.1",
    source=CH28,
    title="The two limits of the KL-regularised optimum",
    statement=(
        "The optimum of E_π[r] − β·KL(π ‖ π_ref) is π* ∝ π_ref·exp(r/β), with optimal value "
        "β ln Z. A worked instance of part (b): three responses with reference probabilities "
        "0.5, 0.3 and 0.2 and rewards 0, 1 and 1 (the top reward is shared). Find π* and the "
        "optimal value in the limits β → 0 and β → ∞."
    ),
    parts=(
        Part(
            "28.1 · π*(y₂) as β → 0 (reward 1, π_ref = 0.3)",
            lambda: float(_t281(KAPPA_LIMIT).pi[1]),
            3,
            "Only the top-reward responses survive; between them nothing has changed since π_ref.",
            traps=(
                Trap(
                    lambda: 1.0 / float(np.sum(np.asarray(R_281) == max(R_281))),
                    "Tied responses do not split evenly: they keep the reference's odds.",
                ),
            ),
        ),
        Part(
            "28.1 · π*(y₃) as β → 0 (reward 1, π_ref = 0.2)",
            lambda: float(_t281(KAPPA_LIMIT).pi[2]),
            3,
            "Only the top-reward responses survive; between them nothing has changed since π_ref.",
            traps=(
                Trap(
                    lambda: 1.0 / float(np.sum(np.asarray(R_281) == max(R_281))),
                    "Tied responses do not split evenly: they keep the reference's odds.",
                ),
                Trap(lambda: PI_REF_281[2], "Renormalise over the responses that survive."),
            ),
        ),
        Part(
            "28.1 · π*(y₁) as β → ∞ (reward 0)",
            lambda: float(_t281(0.0).pi[0]),
            3,
            "When every move away from π_ref costs without limit, what is left?",
            traps=(
                Trap(
                    lambda: 1.0 / len(R_281),
                    "The limit is the reference policy, not the uniform one.",
                ),
            ),
        ),
        Part(
            "28.1 · optimal value β ln Z as β → ∞",
            lambda: _value281(KAPPA_TINY),
            3,
            "ln Z itself goes to zero, but β ln Z is ln Z / κ as κ → 0: a derivative at κ = 0.",
            traps=(
                Trap(
                    lambda: 0.0,
                    "ln Z tends to zero, but β ln Z does not: take the limit of ln Z / κ.",
                ),
            ),
        ),
        Part(
            "28.1 · optimal value β ln Z as β → 0",
            lambda: _value281(KAPPA_LIMIT),
            3,
            "As β shrinks, the largest exp(r/β) dominates Z.",
            traps=(
                Trap(
                    lambda: _value281(KAPPA_TINY),
                    "That is the other limit: as β → 0 the best reward dominates Z.",
                ),
            ),
        ),
    ),
    solution=_solution_28_1,
    link="tilt?pi0=0.5,0.3,0.2&r=0,1,1&kappa=10000",
    illustrates=(
        "A shared top reward: as β → 0 the optimum does not pick one of the best responses or "
        "split them evenly, it keeps the reference's odds between them (3 : 2); and the "
        "optimal value runs from the reference's mean reward (β → ∞) to the top reward "
        "(β → 0)."
    ),
)


# --------------------------------------------------------------------------- 28.2

BETA_282, RULE_282, Y_282, Y2_282 = 0.5, "middle", "abc", "aba"


def _tree282():
    return token_credit.soft_tree(BETA_282, RULE_282)


def _v282() -> float:
    return float(_tree282().values[0][0])


def _implicit282(y: str = Y_282) -> float:
    return token_credit.implicit_reward(_tree282(), y)


def _diff282() -> float:
    return token_credit.implicit_reward_difference(_tree282(), Y_282, Y2_282)


def _solution_28_2() -> str:
    tree = _tree282()
    seq = token_credit.sequence_tilt(BETA_282, RULE_282)
    c, c2 = token_credit.token_credits(tree, Y_282), token_credit.token_credits(tree, Y2_282)
    r, r2 = token_credit.reward(Y_282, RULE_282), token_credit.reward(Y2_282, RULE_282)
    return "\n".join(
        [
            "**Backward from the leaves.** A leaf's value is its reward; one level up, "
            "V*(s) = β·ln Σ_a π_ref(a)·exp(V*(s a)/β), a soft maximum over the next token. At the "
            f"root this gives V*(x) = {fmt.fixed(_v282(), 3)}, the same number as β·ln Z of the tilt "
            f"over "
            f"whole responses ({fmt.fixed(BETA_282 * seq.log_z, 3)}): the token-level and the "
            f"sequence-level "
            "optimum are one policy.",
            "",
            f"**(a) Telescoping.** A token's credit is V*(s_(t+1)) − V*(s_t) = β·ln π*(y_t | s_t)/"
            f"π_ref(y_t | s_t). For {Y_282} the credits are {_vec(c)}; they add up to "
            f"{fmt.fixed(_implicit282(), 3)} = r({Y_282}) − V*(x) = {fmt.fixed(r, 3)} − "
            f"{fmt.fixed(_v282(), 3)}, the implicit "
            "reward β·ln π*(y)/π_ref(y).",
            "",
            f"**(b) A shared prefix cancels.** {Y2_282} shares the first two tokens with {Y_282}, "
            f"so their first two credits are the same numbers ({_vec(c2)} for {Y2_282}); the "
            f"difference of implicit rewards is {fmt.fixed(_diff282(), 3)} = r({Y_282}) − r({Y2_282}) "
            f"= "
            f"{fmt.fixed(r, 3)} − {fmt.fixed(r2, 3)}. V*(x) cancels too: this difference is what DPO "
            f"fits to "
            "preferences, which is why DPO's optimum is a soft Q-function.",
        ]
    )


EX_28_2 = Exercise(
    id="28.2",
    source=CH28,
    title="Token-level credit under the KL-regularized optimum",
    statement=(
        "A tree of responses of three tokens, each a, b or c, with the reference "
        "π_ref(a, b, c) = (0.5, 0.3, 0.2) at every node. The reward is 1 when the middle token "
        "is b, plus 0.2 when the last token is c. At β = 0.5, compute the optimal value V*(x) "
        "at the root by backward recursion, the implicit reward β·ln π*(y)/π_ref(y) of the "
        "response abc, and the difference of implicit rewards between abc and aba."
    ),
    parts=(
        Part(
            "28.2 · the root's value V*(x)",
            _v282,
            3,
            "Work up from the leaves with V*(s) = β·ln Σ π_ref(a)·exp(V*(s a)/β).",
            traps=(
                Trap(
                    lambda: float(token_credit.rewards(RULE_282).max()),
                    "That is the best reward: the soft maximum pays for the KL, so V*(x) is lower.",
                ),
                Trap(
                    lambda: float(
                        np.exp(token_credit.log_pi_ref_sequence()) @ token_credit.rewards(RULE_282)
                    ),
                    "That is the reference's mean reward, the limit β → ∞; at β = 0.5 "
                    "the optimum does better.",
                ),
            ),
        ),
        Part(
            "28.2 · implicit reward of abc",
            _implicit282,
            3,
            "Sum the three tokens' credits, or use r(y) − V*(x).",
            traps=(
                Trap(
                    lambda: token_credit.reward(Y_282, RULE_282),
                    "That is the reward itself: subtract V*(x).",
                ),
            ),
        ),
        Part(
            "28.2 · implicit reward of abc minus that of aba",
            _diff282,
            3,
            "The shared prefix ab contributes the same credits to both.",
            traps=(
                Trap(
                    lambda: -_diff282(),
                    "The difference is upside down: abc's implicit reward goes first.",
                ),
            ),
        ),
    ),
    solution=_solution_28_2,
    link=f"token-credit?beta={BETA_282:g}&reward={RULE_282}&y={Y_282}&y2={Y2_282}",
    illustrates=(
        "The optimum over whole responses is a soft Q-function token by token: a token's "
        "credit is the change in soft value it causes, the first token of abc gets none of the "
        "reward that a bandit view would spread over all three, and two responses' implicit "
        "rewards differ only through the tokens after their shared prefix."
    ),
)


# --------------------------------------------------------------------------- 28.3

THETA_283, PI_REF_283 = (0.0, 0.5, -0.5), (0.5, 0.3, 0.2)


def _g283():
    return kl_penalty.estimator_gradients(list(THETA_283), list(PI_REF_283))


def _solution_28_3() -> str:
    g = _g283()
    return "\n".join(
        [
            f"**The policy.** Softmax of θ = {_vec(THETA_283, 1)} gives π_θ = {_vec(g.pi, 4)}.",
            "",
            f"**Both estimators are unbiased for the value.** E[k1] = Σ π_θ(y)·ln(π_θ(y)/π_ref(y)) "
            f"= {fmt.fixed(g.mean_k1, 4)} and E[k3] = {fmt.fixed(g.mean_k3, 4)}: both are KL(π_θ ‖ "
            f"π_ref) = "
            f"{fmt.fixed(g.kl_reverse, 4)}, because E[ρ − 1] = 0 under π_θ.",
            "",
            f"**Their gradients as losses are not.** Differentiating k1 = −ln ρ with the sample "
            f"fixed gives e_y − π_θ, whose mean is {_vec(g.grad_k1_loss, 4)}: no push at all. "
            f"k3's gradient is (1 − ρ)(e_y − π_θ), with mean π_θ − π_ref = "
            f"{_vec(g.grad_k3_loss, 4)}: the gradient of the other direction, "
            f"KL(π_ref ‖ π_θ) = {fmt.fixed(g.kl_forward, 4)}.",
            "",
            f"**What KL(π_θ ‖ π_ref) needs.** Its gradient is the score-function term "
            f"E[k1·∇ln π_θ] = {_vec(g.grad_k1_score, 4)}: what putting k1 in the reward gives.",
        ]
    )


EX_28_3 = Exercise(
    id="28.3",
    source=CH28,
    title="KL estimators as losses: the value is right, the gradient not",
    statement=(
        "A softmax policy over three responses with logits θ = (0, 0.5, −0.5) and a reference "
        "π_ref = (0.5, 0.3, 0.2). With ρ = π_ref(y)/π_θ(y) and y drawn from π_θ, the "
        "estimators are k1 = −ln ρ and k3 = ρ − 1 − ln ρ. Compute their expectations, and the "
        "expected gradient with respect to θ when each is used as a loss (differentiated "
        "with the sample held fixed), against the score-function gradient E[k1·∇ln π_θ]."
    ),
    parts=(
        Part(
            "28.3 · E[k1] under π_θ",
            lambda: _g283().mean_k1,
            4,
            "Weight −ln ρ = ln(π_θ/π_ref) by π_θ and add up.",
        ),
        Part(
            "28.3 · E[k3] under π_θ",
            lambda: _g283().mean_k3,
            4,
            "Weight ρ − 1 − ln ρ by π_θ; the ρ − 1 part averages to 0.",
            traps=(
                Trap(lambda: _g283().kl_forward, "That is KL(π_ref ‖ π_θ), the other direction."),
            ),
        ),
        Part(
            "28.3 · first component of the expected gradient of k1 as a loss",
            lambda: float(_g283().grad_k1_loss[0]),
            4,
            "∇(−ln ρ) with the sample fixed is ∇ln π_θ(y) = e_y − π_θ; average it over y.",
            traps=(
                Trap(
                    lambda: float(_g283().grad_k1_score[0]),
                    "That is the score-function gradient E[k1·∇ln π_θ]; the loss "
                    "differentiates k1 itself.",
                ),
            ),
        ),
        Part(
            "28.3 · first component of the expected gradient of k3 as a loss",
            lambda: float(_g283().grad_k3_loss[0]),
            4,
            "∇k3 = (1 − ρ)(e_y − π_θ); its mean is π_θ − π_ref.",
        ),
        Part(
            "28.3 · first component of E[k1·∇ln π_θ]",
            lambda: float(_g283().grad_k1_score[0]),
            4,
            "Weight k1·(e_y − π_θ) by π_θ and add up.",
            traps=(
                Trap(
                    lambda: float(_g283().grad_k3_loss[0]),
                    "That is k3's loss gradient, π_θ − π_ref: the gradient of the "
                    "reverse-direction KL.",
                ),
            ),
        ),
    ),
    solution=_solution_28_3,
    link="kl-penalty",
    link_note=(
        "The page trains with k1 in the reward, k1 as a loss and k3 as a loss on a ten-"
        "response prompt: the three end where this exercise's gradients point."
    ),
    illustrates=(
        "An estimator that is unbiased for the KL can have a useless or a different gradient: "
        "k1 as a loss pushes nowhere on average, k3 as a loss climbs the reverse-direction KL, "
        "and only the score-function term follows KL(π_θ ‖ π_ref)."
    ),
)


# --------------------------------------------------------------------------- 28.4 (b), (c)

REWARDS_284 = (0.9, 0.2, 0.4, 0.1)  # one group of G = 4 graded responses


def _loo284() -> float:
    return float(groups.leave_one_out_baseline(np.array(REWARDS_284))[0])


def _centred284() -> float:
    """r_1 minus the group mean, from the centred-only (Dr. GRPO) advantages."""
    return float(groups.group_advantages(np.array(REWARDS_284), "dr_grpo")[0])


def _ratio284() -> float:
    return _centred284() / (REWARDS_284[0] - _loo284())


P_RARE_284, P_EVEN_284 = 0.02, 0.5  # two prompts' solve rates for part (c)


def _weight284(p: float) -> float:
    """1/sqrt(p(1-p)): the factor division by the group's standard deviation puts on a prompt."""
    return float(normalization.arcsin_weight(p))


def _solution_28_4() -> str:
    g = len(REWARDS_284)
    b = groups.leave_one_out_baseline(np.array(REWARDS_284))
    centred = groups.group_advantages(np.array(REWARDS_284), "dr_grpo")
    return "\n".join(
        [
            "**(a) in one line.** b_i is built from the other responses only, which are drawn "
            "independently of y_i, so E[b_i ∇log π(y_i)] = E[b_i]·E[∇log π(y_i)] = 0.",
            "",
            f"**(b) on the group {_vec(REWARDS_284, 1)}.** Leave-one-out baselines: "
            f"{_vec(b)}. For the first response b₁ = {fmt.fixed(b[0], 3)}, so r₁ − b₁ = "
            f"{fmt.fixed(REWARDS_284[0] - b[0], 3)}; the group mean is "
            f"{fmt.fixed(np.mean(REWARDS_284), 3)}, so "
            f"r₁ − r̄ = {fmt.fixed(centred[0], 3)}. The ratio is {fmt.fixed(_ratio284(), 3)} = (G − "
            f"1)/G with G = {g}, "
            "and the same holds for every response: r_i − r̄ = (r_i − b_i)·(G − 1)/G, because r̄ "
            "mixes r_i (weight 1/G) with b_i (weight (G − 1)/G).",
            "",
            "**(c).** With 0/1 rewards the centred update of a prompt follows the gradient of its "
            "solve rate p; dividing by √(p(1 − p)) multiplies it by 1/√(p(1 − p)), which is the "
            "derivative of 2·arcsin√p. So the normalised update climbs 2·arcsin√p instead of p. "
            f"That weight is {fmt.fixed(_weight284(P_RARE_284), 2)} at p = {fmt.short(P_RARE_284)} and "
            f"{fmt.fixed(_weight284(P_EVEN_284), 2)} at p = {fmt.short(P_EVEN_284)}: a prompt almost never (or "
            f"almost always) solved counts "
            f"{fmt.fixed(_weight284(P_RARE_284) / _weight284(P_EVEN_284), 2)} "
            "times as much as one solved half the time.",
        ]
    )


EX_28_4 = Exercise(
    id="28.4",
    source=CH28,
    title="The group mean as a shortened leave-one-out baseline",
    statement=(
        "A prompt is answered G times and the answers are scored r₁, …, r_G. The "
        "leave-one-out baseline b_i of answer i averages the other G − 1 scores. Part (b) "
        "claims that "
        "centring on the full group mean is the leave-one-out advantage scaled by (G − 1)/G. "
        "Check it on a group of four with rewards 0.9, 0.2, 0.4 and 0.1, for the first "
        "response. Part (c): with 0/1 rewards, dividing advantages by the standard deviation "
        "√(p(1 − p)) turns the update into a climb on 2·arcsin√p instead of p. Find the "
        "weight this puts on a prompt solved 2% of the time and on one solved half the "
        "time."
    ),
    parts=(
        Part(
            "28.4 · leave-one-out baseline b₁ of the first response",
            _loo284,
            3,
            "Average the rewards of the other responses only.",
            traps=(
                Trap(
                    lambda: float(np.mean(REWARDS_284)),
                    "That is the mean of the whole group: leave the first response out.",
                ),
            ),
        ),
        Part(
            "28.4 · r₁ − r̄, the reward minus the group mean",
            _centred284,
            3,
            "Subtract the mean of all four rewards, the first one included.",
            traps=(
                Trap(
                    lambda: REWARDS_284[0] - _loo284(),
                    "That subtracts the leave-one-out baseline; this part uses the mean "
                    "of the whole group.",
                ),
            ),
        ),
        Part(
            "28.4 · the ratio (r₁ − r̄)/(r₁ − b₁)",
            _ratio284,
            3,
            "Divide the centred reward by the leave-one-out advantage.",
            traps=(
                Trap(
                    lambda: 1.0 / _ratio284(),
                    "The ratio is upside down: the group mean's version goes on top.",
                ),
            ),
        ),
        Part(
            "28.4 · weight 1/√(p(1 − p)) of a prompt with p = 0.02",
            lambda: _weight284(P_RARE_284),
            2,
            "Dividing by the standard deviation of 0/1 rewards divides by √(p(1 − p)).",
            traps=(
                Trap(
                    lambda: math.sqrt(P_RARE_284 * (1 - P_RARE_284)),
                    "That is the standard deviation itself: the update is divided by it.",
                ),
            ),
        ),
        Part(
            "28.4 · weight 1/√(p(1 − p)) of a prompt with p = 0.5",
            lambda: _weight284(P_EVEN_284),
            2,
            "Dividing by the standard deviation of 0/1 rewards divides by √(p(1 − p)).",
            traps=(
                Trap(
                    lambda: math.sqrt(P_EVEN_284 * (1 - P_EVEN_284)),
                    "That is the standard deviation itself: the update is divided by it.",
                ),
            ),
        ),
        Part(
            "28.4 · how many times more the p = 0.02 prompt counts than the p = 0.5 one",
            lambda: _weight284(P_RARE_284) / _weight284(P_EVEN_284),
            2,
            "Divide the rare prompt's weight by the even prompt's.",
            traps=(
                Trap(
                    lambda: _weight284(P_EVEN_284) / _weight284(P_RARE_284),
                    "The ratio is upside down: the rare prompt's weight goes on top.",
                ),
            ),
        ),
    ),
    solution=_solution_28_4,
    link=f"normalization?p={P_RARE_284:g}&k={len(REWARDS_284)}",
    link_note=(
        "It marks p = 0.02 with groups of G = 4, the size of part (b)'s group: its "
        "mean-centred weight (G − 1)/G is part (b)'s ratio, and its arcsin-law weight is part "
        "(c)'s 1/√(p(1 − p)) times that same (G − 1)/G. Set p to 0.50 for the other prompt."
    ),
    illustrates=(
        "Centring on the group mean, which includes the response's own reward, gives the "
        "unbiased leave-one-out advantage shortened by (G − 1)/G: the right direction, "
        "slightly scaled down. Dividing by the standard deviation is not harmless in the "
        "same way: it reweights prompts, most heavily those nearly always failed or nearly "
        "always solved."
    ),
)


# --------------------------------------------------------------------------- 28.5 (b)

L1_285, L2_285 = 2, 10  # the two lengths
S_285 = 0.0  # stopping logit: q = sigma(0) = 1/2


def _q285() -> float:
    return 1.0 / (1.0 + math.exp(-S_285))


def _adv285():
    """Advantages in a group of four with one correct answer (Example 12.2): +sqrt 3, -1/sqrt 3."""
    return groups.mixed_group_advantages(1, 4)


def _push285(advantage: float, weighting: str = "per_response") -> float:
    """Expected gradient on the stopping logit (Exercise 28.5)."""
    return float(stopping.stop_logit_gradient(advantage, _q285(), L1_285, L2_285, weighting))


def _solution_28_5() -> str:
    hi, lo = _adv285()
    q = _q285()
    return "\n".join(
        [
            "**(a).** Only the stopping decision depends on s: its log-probability has gradient "
            "1 − q when the response stops at L₁ and −q when it runs to L₂. With one weight c "
            "for every token the expectation is c·A·[q(1 − q) + (1 − q)(−q)] = 0: the score of "
            "a decision has mean zero.",
            "",
            "**(b).** With weight 1/L, the term is A·(1/L)·∇_s log P(L). Since ∇_s log q = 1 − q "
            "and ∇_s log(1 − q) = −q, the expectation is A·[q(1 − q)/L₁ − (1 − q)q/L₂] = "
            "A·q(1 − q)·(1/L₁ − 1/L₂).",
            "",
            f"**The instance.** s = {fmt.short(S_285)}, so q = {fmt.fixed(q, 2)}; L₁ = {L1_285}, L₂ = {L2_285}. "
            f"In a "
            f"group of four with one correct answer, A = {fmt.fixed(hi, 3)} for it and "
            f"{fmt.fixed(lo, 3)} for each "
            f"wrong one. The pushes are {fmt.fixed(_push285(hi), 3)} and {fmt.fixed(_push285(lo), 3)}; "
            f"with a "
            f"constant weight both are {fmt.fixed(_push285(hi, 'constant'), 3)}.",
            "",
            "**Drift.** A positive push on s raises the chance of stopping early. So correct "
            "answers get shorter and wrong ones longer, although length earns nothing.",
        ]
    )


EX_28_5 = Exercise(
    id="28.5",
    source=CH28,
    title="Per-response averaging and the length of answers",
    statement=(
        "A stopping logit s decides a response's length: with probability q = σ(s) it is "
        "L₁ tokens long, otherwise L₂ > L₁. Its advantage A is the same whatever the "
        "length. With GRPO's averaging each token of a length-L response gets weight "
        "1/L, which makes the mean gradient on s equal to A·q(1 − q)·(1/L₁ − 1/L₂). Take s = 0, "
        "L₁ = 2, L₂ = 10, and a group of four with one correct answer, and compute the push "
        "on s for the correct answer and for a wrong one; then the same with one constant "
        "weight per token, as in Dr. GRPO."
    ),
    parts=(
        Part(
            "28.5 · expected push on s for the correct answer (A = √3)",
            lambda: _push285(float(_adv285()[0])),
            3,
            "Differentiate log q and log(1 − q) in s, weight each length by 1/L, then "
            "average over the two lengths.",
            traps=(
                Trap(
                    lambda: float(_adv285()[0]) * (1 / L1_285 - 1 / L2_285),
                    "The factor q(1 − q) from differentiating through σ is missing.",
                ),
            ),
        ),
        Part(
            "28.5 · expected push on s for a wrong answer (A = −1/√3)",
            lambda: _push285(float(_adv285()[1])),
            3,
            "Same formula, with the wrong answer's advantage.",
            traps=(
                Trap(
                    lambda: float(_adv285()[1]) * (1 / L1_285 - 1 / L2_285),
                    "The factor q(1 − q) from differentiating through σ is missing.",
                ),
            ),
        ),
        Part(
            "28.5 · expected push on s for the correct answer with a constant weight",
            lambda: _push285(float(_adv285()[0]), "constant"),
            3,
            "With the same weight for every response, the push is A times the average of a "
            "score function.",
        ),
    ),
    solution=_solution_28_5,
    link="length-bias",
    link_note=(
        "That page does not compute this push for a chosen s, L₁ and L₂: it trains a toy "
        "model with both weightings and shows what the push does over many steps, correct "
        "answers getting shorter and wrong ones longer under GRPO but not under Dr. GRPO."
    ),
    illustrates=(
        "The sign of the push follows the advantage: a correct answer is pushed to stop "
        "early and a wrong one to run on, so per-response averaging shortens correct "
        "answers and lengthens wrong ones even though length earns nothing; a constant "
        "weight removes the push."
    ),
)


# --------------------------------------------------------------------------- 28.6

PI_286 = (0.6, 0.3, 0.1)
A_LIKELY_286 = (1.0, 0.0, -1.0)  # the likely action is the rewarded one
A_RARE_286 = (-1.0, 0.0, 1.0)  # the rare action is the rewarded one


def _logits286() -> np.ndarray:
    return np.log(np.array(PI_286))


def _slope286(advantages) -> float:
    """dH/d eta at eta = 0 for the step z <- z + eta A."""
    return float(entropy.entropy_slope(_logits286(), np.array(advantages)))


def _cov286(advantages) -> float:
    """Cov_pi(log pi, A), from the slope's definition dH/d eta = -Cov."""
    return -_slope286(advantages)


def _solution_28_6() -> str:
    h = float(entropy.entropy(_logits286()))
    return "\n".join(
        [
            "**The derivative.** Along z_a ← z_a + ηA(a), d log π(a)/dη = A(a) − E_π[A], so "
            "dπ(a)/dη = π(a)(A(a) − E_π[A]). Then dH/dη = −Σ (dπ(a)/dη)(log π(a) + 1) = "
            "−Σ π(a)(A(a) − E_π[A]) log π(a) = −Cov_π(log π, A) (the +1 drops out because the "
            "changes in π sum to zero).",
            "",
            f"**The instance.** π = {_vec(PI_286, 1)}, entropy {fmt.fixed(h, 3)} nats. If the likely "
            f"action "
            f"is the rewarded one, A = {_vec(A_LIKELY_286, 0)}: Cov = "
            f"{fmt.fixed(_cov286(A_LIKELY_286), 3)} "
            f"and dH/dη = {fmt.fixed(_slope286(A_LIKELY_286), 3)}, entropy falls. If the rare action "
            f"is "
            f"rewarded, A = {_vec(A_RARE_286, 0)}: dH/dη = {fmt.fixed(_slope286(A_RARE_286), 3)}, "
            f"entropy "
            "rises.",
            "",
            "**When it collapses.** Entropy falls whenever the actions the policy already "
            "prefers are the ones with high advantage, which is most of training once the "
            "policy is good: confidence and reward line up.",
        ]
    )


EX_28_6 = Exercise(
    id="28.6",
    source=CH28,
    title="The entropy of a softmax policy under a natural-gradient step",
    statement=(
        "A softmax policy π = softmax(z) is updated by adding η·A(a) to each logit z_a, "
        "with A the advantages (for a softmax this is a natural-gradient step). Show that dH/dη at η = 0 is "
        "−Cov_π(log π, A), with H the entropy. Worked instance: three actions with "
        "π = (0.6, 0.3, 0.1); compare rewarding the likely action, A = (1, 0, −1), with "
        "rewarding the rare one, A = (−1, 0, 1)."
    ),
    parts=(
        Part(
            "28.6 · entropy H(π) in nats",
            lambda: float(entropy.entropy(_logits286())),
            3,
            "H = −Σ π(a) log π(a), with natural logarithms.",
            traps=(
                Trap(
                    lambda: float(entropy.entropy(_logits286())) / math.log(2.0),
                    "That is in bits: use natural logarithms for nats.",
                ),
            ),
        ),
        Part(
            "28.6 · Cov_π(log π, A) when the likely action is rewarded",
            lambda: _cov286(A_LIKELY_286),
            3,
            "E_π[log π · A] − E_π[log π]·E_π[A], every expectation weighted by π.",
            traps=(
                Trap(
                    lambda: float(
                        np.mean(_logits286() * np.array(A_LIKELY_286))
                        - np.mean(_logits286()) * np.mean(A_LIKELY_286)
                    ),
                    "Weight the averages by π, not equally over the actions.",
                ),
            ),
        ),
        Part(
            "28.6 · dH/dη at η = 0 when the likely action is rewarded",
            lambda: _slope286(A_LIKELY_286),
            3,
            "The rate is minus the covariance of log π and A under π.",
        ),
        Part(
            "28.6 · dH/dη at η = 0 when the rare action is rewarded",
            lambda: _slope286(A_RARE_286),
            3,
            "The rate is minus the covariance of log π and A under π.",
        ),
    ),
    solution=_solution_28_6,
    # pi up to a shift of the logits: log(pi / pi_3), to six decimals (pi to about 1e-6)
    link=(
        "entropy?logits="
        + ",".join(f"{math.log(p / PI_286[-1]):.6f}".rstrip("0").rstrip(".") for p in PI_286)
        + "&advantages="
        + ",".join(f"{a:g}" for a in A_LIKELY_286)
    ),
    link_note=(
        "It opens on the first case, the likely action rewarded; for the second, open its "
        "policy settings and type −1, 0, 1 as the advantages."
    ),
    illustrates=(
        "Entropy falls when the policy's favourite action is the rewarded one (log π and A "
        "move together) and rises when a rare action is rewarded: collapse is what "
        "confident, correct policies do to themselves."
    ),
)


# --------------------------------------------------------------------------- 28.7 (b)

BEFORE_287 = (0.3, 0.05)  # problems A and B, base model
AFTER_287 = (0.9, 0.0)  # after RL


def _mix287(rates, k) -> float:
    return float(pass_at_k.mixture_pass_at_k(list(rates), k))


def _crossover287() -> float:
    return float(pass_at_k.crossover_k(list(BEFORE_287), list(AFTER_287)))


def _est287(kind: str) -> float:
    f = pass_at_k.unbiased_estimate if kind == "unbiased" else pass_at_k.plugin_estimate
    return float(f(3, 20, 10))


def _solution_28_7() -> str:
    k = int(_crossover287())
    return "\n".join(
        [
            "**(a) in one line.** C(n − c, k)/C(n, k) is the chance that k samples drawn without "
            "replacement from the n are all wrong; averaged over c it equals (1 − p)^k.",
            "",
            f"**pass@1** is the average solve rate: {fmt.fixed(_mix287(BEFORE_287, 1), 3)} before RL, "
            f"{fmt.fixed(_mix287(AFTER_287, 1), 3)} after.",
            "",
            "**pass@32** averages 1 − (1 − p)³² over the two problems: before, "
            f"{fmt.fixed(pass_at_k.pass_at_k(BEFORE_287[0], 32), 3)} and "
            f"{fmt.fixed(pass_at_k.pass_at_k(BEFORE_287[1], 32), 3)}, mean "
            f"{fmt.fixed(_mix287(BEFORE_287, 32), 3)}; "
            f"after, {fmt.fixed(pass_at_k.pass_at_k(AFTER_287[0], 32), 3)} and "
            f"{fmt.fixed(pass_at_k.pass_at_k(AFTER_287[1], 32), 3)}, mean "
            f"{fmt.fixed(_mix287(AFTER_287, 32), 3)}.",
            "",
            f"**The crossover.** The base model's pass@k first exceeds the trained one's at k = {k} "
            f"({fmt.fixed(_mix287(BEFORE_287, k), 3)} against {fmt.fixed(_mix287(AFTER_287, k), 3)}). "
            f"RL sharpened "
            "problem A and lost problem B: better with one try, worse with many.",
            "",
            f"**Estimating from samples (a).** With 3 correct out of 20, the unbiased estimate of "
            f"pass@10 is 1 − C(17, 10)/C(20, 10) = {fmt.fixed(_est287('unbiased'), 3)}; plugging in "
            f"c/n "
            f"gives {fmt.fixed(_est287('plugin'), 3)}, which is biased low.",
        ]
    )


EX_28_7 = Exercise(
    id="28.7",
    source=CH28,
    title="pass@k before and after training",
    statement=(
        "pass@k is the chance that at least one of k independent samples is correct, "
        "1 − (1 − p)^k for a problem solved with probability p, averaged over problems. "
        "Part (b): before training, the model's solve rates on two problems are 0.3 (A) "
        "and 0.05 (B); after RL they are 0.9 (A) and 0 (B). Compare pass@1 and pass@32, and "
        "find where the curves cross. A numeric instance of part (a): estimate pass@10 from "
        "20 samples of which 3 are correct."
    ),
    parts=(
        Part(
            "28.7 · pass@1 of the base model",
            lambda: _mix287(BEFORE_287, 1),
            3,
            "With one try, pass@1 is the solve rate; average it over the two problems.",
        ),
        Part(
            "28.7 · pass@1 after RL",
            lambda: _mix287(AFTER_287, 1),
            3,
            "With one try, pass@1 is the solve rate; average it over the two problems.",
            traps=(
                Trap(lambda: AFTER_287[0], "Problem B counts in the average too, even at zero."),
            ),
        ),
        Part(
            "28.7 · pass@32 of the base model",
            lambda: _mix287(BEFORE_287, 32),
            3,
            "Compute 1 − (1 − p)³² for each problem, then average.",
            traps=(
                Trap(
                    lambda: float(pass_at_k.pass_at_k(np.mean(BEFORE_287), 32)),
                    "Average the two problems' pass@32, not the solve rates first.",
                ),
            ),
        ),
        Part(
            "28.7 · pass@32 after RL",
            lambda: _mix287(AFTER_287, 32),
            3,
            "Compute 1 − (1 − p)³² for each problem, then average.",
            traps=(
                Trap(
                    lambda: float(pass_at_k.pass_at_k(AFTER_287[0], 32)),
                    "Problem B counts in the average too: no number of tries solves it.",
                ),
            ),
        ),
        Part(
            "28.7 · smallest k at which the base model's pass@k is higher",
            _crossover287,
            0,
            "Tabulate both averages for k = 1, 2, 3, … and stop at the first k where the "
            "base model is ahead.",
        ),
        Part(
            "28.7 · unbiased estimate of pass@10 from 3 correct in 20",
            lambda: _est287("unbiased"),
            3,
            "One minus the chance that 10 of the 20 samples, picked without replacement, "
            "are all wrong.",
            traps=(
                Trap(
                    lambda: _est287("plugin"),
                    "That plugs c/n into 1 − (1 − p)^k, which is biased; count subsets "
                    "of the samples instead.",
                ),
            ),
        ),
    ),
    solution=_solution_28_7,
    link="pass-at-k?k=32",
    illustrates=(
        "Training that sharpens the problems it often solves and loses the ones it rarely "
        "solves wins at pass@1 and loses at large k: a crossover like the one Yue et al. "
        "measured, which the exact optimum (never below the base at any k) cannot produce."
    ),
)


# --------------------------------------------------------------------------- 28.8

Q_288, G_288, N_288, T_288 = 0.3, 0.05, 8, 6


def _lab288(error):
    return step_labels.labels(step_labels.step_values(Q_288, G_288, T_288, error=error), N_288)


def _soft288(error) -> float:
    return float(_lab288(error).soft_mean[0])


def _hard288(error) -> float:
    return float(_lab288(error).hard_mean[0])


def _solution_28_8() -> str:
    right_s, right_h = _soft288(None), _hard288(None)
    wrong_s, wrong_h = _soft288(1), _hard288(1)
    q_star = step_labels.crossing_skill(G_288, T_288, 1)
    return "\n".join(
        [
            f"**What a label estimates.** Completing after step 1 leaves {T_288 - 1} steps. After a "
            f"correct first step, a completion is right only if μ gets all of them: "
            f"v = q^{T_288 - 1} = {_f(right_s, 4)}. After a wrong first step it is right only by a "
            f"lucky guess: v = g = {_f(wrong_s, 4)}.",
            "",
            f"**Soft labels** average the N = {N_288} completions and estimate v: {_f(right_s, 4)} "
            f"for the correct step, {_f(wrong_s, 4)} for the wrong one. **Hard labels** ask "
            f"whether any completion succeeded, with mean 1 − (1 − v)^N: {_f(right_h, 3)} against "
            f"{_f(wrong_h, 3)}.",
            "",
            f"**The wrong step ranks higher** under both labels: a reward model trained on them "
            f"learns μ's value of the prefix, not the step's correctness. With this weak completer "
            f"the correct path almost never finishes, while the guess rescues the wrong one; the "
            f"order turns only for a skill above q = g^(1/{T_288 - 1}) = {_f(q_star, 3)}.",
        ]
    )


EX_28_8 = Exercise(
    id="28.8",
    source=CH28,
    title="Step labels from rollouts: what a process reward learns",
    statement=(
        "A solution has 6 steps. Each step is labelled by completing the solution from after "
        "it 8 times with a completer that gets each remaining step right with probability "
        "q = 0.3. A completion of a correct prefix succeeds only if all its remaining steps "
        "are right (a slip of the completer's own is never rescued); once the partial "
        "solution being labelled contains a wrong step, a completion still reaches the right "
        "answer with probability g = 0.05, by a lucky guess. The soft label is the share of completions that succeed, the "
        "hard label is 1 if any does. Find the expected soft and hard labels of a correct "
        "first step and of a wrong first step, and say which step a reward model trained on "
        "them would rank higher."
    ),
    parts=(
        Part(
            "28.8 · expected soft label of a correct first step",
            lambda: _soft288(None),
            4,
            "All five remaining steps must be right: multiply five factors of q.",
            traps=(
                Trap(
                    lambda: Q_288**T_288, "Six factors of q: step 1 is already done, five remain."
                ),
            ),
        ),
        Part(
            "28.8 · expected hard label of a correct first step",
            lambda: _hard288(None),
            3,
            "The chance that at least one of 8 completions succeeds: 1 − (1 − v)⁸.",
        ),
        Part(
            "28.8 · expected soft label of a wrong first step",
            lambda: _soft288(1),
            4,
            "After a wrong step only the lucky guess reaches the right answer.",
        ),
        Part(
            "28.8 · expected hard label of a wrong first step",
            lambda: _hard288(1),
            3,
            "1 − (1 − g)⁸: at least one lucky completion in eight.",
            traps=(
                Trap(
                    lambda: G_288,
                    "That is the soft label; the hard one asks for at least one success.",
                ),
            ),
        ),
        Part(
            "28.8 · which ranks higher: 1 for the correct step, 2 for the wrong one",
            lambda: 1.0 if _soft288(None) > _soft288(1) else 2.0,
            0,
            "Compare the two steps' expected labels.",
        ),
    ),
    solution=_solution_28_8,
    link=f"step-labels?skill={Q_288:g}&guess={G_288:g}&n={N_288}&steps={T_288}&error=1",
    illustrates=(
        "Labels from rollouts measure what the completer can finish from a prefix, not whether "
        "the prefix is right: with a weak completer and guessable answers, a wrong step can "
        "outscore a correct one."
    ),
)


EXERCISES: list[Exercise] = [EX_28_1, EX_28_2, EX_28_3, EX_28_4, EX_28_5, EX_28_6, EX_28_7, EX_28_8]
