"""Chapter 28, right panel and second experiment: where GRPO's length bias comes from."""

import streamlit as st

from klrl_core import length_bias as core
from klrl_app import controls, fmt, layout, lru, precompute
from klrl_app import length_bias_figures as figs

STEPS_MAX = 5000
# Step counts are written as the slider writes them, "1000", without a separator (issue 31:
# the readout's "1,000" disagreed). Streamlit's slider cannot group digits the same way for
# every reader: its printf formats (sprintf.js) have no grouping and "localized" follows the
# reader's locale ("1.000" in German).
RUNS_MAX = 200
BAND = figs.BAND                       # percentiles of the runs shaded around the mean

page = layout.Page(
    "length-bias", "GRPO's length bias",
    "Chapter 28 · Normalizations and their biases · right panel · Exercise 28.5",
    "A toy model answers with one of four tokens, only one of them right, then writes filler "
    "until it stops (at most 40 more tokens). The reward ignores length entirely. Train it with "
    "GRPO, which averages each response's loss over its own tokens, and with Dr. GRPO, which "
    "divides every response by the same constant, and watch what happens to the lengths.",
)
ui = page.ui
c_steps, c_more = page.control_row([4, 1])
with c_steps:
    steps = ui.integer("steps", "Training steps", default=core.STEPS_DEFAULT, lo=100,
                       hi=STEPS_MAX, step=100,
                       help=f"Updates per run; each samples a group of {core.GROUP} responses.")
with c_more, page.more_settings():
    runs = ui.integer("runs", "Independent runs", default=core.RUNS_DEFAULT, lo=1, hi=RUNS_MAX,
                      help="Runs of each method: the curves show their mean, the shaded band "
                           "the middle 80% of them (no band with a single run).")
    seed = ui.seed(default=core.SEED_DEFAULT,
                   help="The same seed draws the same runs. Another seed draws other runs, and "
                        "the means move by amounts on the order of their standard errors "
                        "(listed under “About this figure and its numbers”).")
    lr_grpo = ui.number("lr_grpo", "GRPO step size", default=core.LR_DEFAULTS["GRPO"], lo=0.1,
                        hi=10.0, step=0.1,
                        help=f"Step size on the stop logits (the answer logits get "
                             f"{fmt.short(core.ANSWER_LR_SCALE)} of it). The chapter uses "
                             f"{fmt.short(core.LR_DEFAULTS['GRPO'])}.")
    lr_dr = ui.number("lr_dr", "Dr. GRPO step size", default=core.LR_DEFAULTS["Dr. GRPO"],
                      lo=1.0, hi=100.0, step=1.0,
                      help=f"Dr. GRPO weighs every token by the constant 1/({core.GROUP}·"
                           f"{core.MAX_POS + 1}), no more than GRPO's 1/({core.GROUP}·L), and "
                           f"does not divide the advantage by the group's spread, so it needs "
                           f"a larger step size. The chapter uses "
                           f"{fmt.short(core.LR_DEFAULTS['Dr. GRPO'])}, at which its table shows both "
                           f"methods near P(correct) 0.98 by step 1,000.")
page.finish_controls()


def full_run(runs: int, lr_grpo: float, lr_dr: float, seed: int) -> core.LengthBiasResult:
    """Both methods trained to the slider's last stop, every step recorded. "Training steps"
    is a time axis: a step's random numbers do not depend on the run's length
    (core.simulate), so the first `steps` steps of this run are exactly a run of `steps`
    steps, and moving the slider only slices it. The default setting is computed in the
    background when the server starts (klrl_app.precompute)."""
    return _runs_table().get(runs, lr_grpo, lr_dr, seed)


def _runs_table() -> precompute.Stops:
    """The process's full runs, one per setting (the default one filled in the background)."""
    return precompute.stops("length-bias", _train_to_max,
                            [(core.RUNS_DEFAULT, core.LR_DEFAULTS["GRPO"],
                              core.LR_DEFAULTS["Dr. GRPO"], core.SEED_DEFAULT)])


def _train_to_max(runs: int, lr_grpo: float, lr_dr: float, seed: int) -> core.LengthBiasResult:
    return core.simulate(steps=STEPS_MAX, runs=runs, seed=seed,
                         lrs={"GRPO": lr_grpo, "Dr. GRPO": lr_dr}, record_every=1)


# No elements inside the cached functions: Streamlit replays them on every cache hit.
@lru.memo
def training(steps: int, runs: int, lr_grpo: float, lr_dr: float, seed: int) -> dict:
    """Both methods' curves up to `steps`, their values there and the chapter's checkpoints:
    a slice of the full run."""
    return figs.tables(full_run(runs, lr_grpo, lr_dr, seed), steps)


@lru.memo
def full_curves(runs: int, lr_grpo: float, lr_dr: float, seed: int) -> dict:
    """What the charts draw: the whole run's curves (figs.full_curves)."""
    return figs.full_curves(full_run(runs, lr_grpo, lr_dr, seed))


with st.spinner(f"Training {runs:,} runs of each method for {STEPS_MAX} steps (once for "
                f"every step count)…", show_time=True):
    out = training(steps, runs, lr_grpo, lr_dr, seed)
curves, final = out["curves"], out["final"]
start = float(curves["len_correct"].iloc[0])          # every run starts at the same 9.3
p_start = float(curves["p_correct"].iloc[0])          # and at 1/4 on the right answer
g, d = final["GRPO"], final["Dr. GRPO"]
lrs = {"GRPO": lr_grpo, "Dr. GRPO": lr_dr}


def lengths(f: dict) -> str:
    return f"{fmt.fixed(f['len_correct'], 1)} / {fmt.fixed(f['len_incorrect'], 1)}"


def se_text(f: dict) -> str:
    if runs == 1:
        return "a single run, so no standard error"
    return (f"the three means with their standard errors over the runs: "
            f"{fmt.mean_se(f['p_correct'], f['p_correct_se'])}, "
            f"{fmt.mean_se(f['len_correct'], f['len_correct_se'])} and "
            f"{fmt.mean_se(f['len_incorrect'], f['len_incorrect_se'])}")


def readout_at(s: int, res: core.LengthBiasResult) -> list[tuple[str, str]]:
    """The readout's items after `s` steps of the full run `res`. Every step is recorded
    (record_every=1), so step `s` is row `s` of the run."""
    items = [("after", f"{s} steps" + (" (one run)" if runs == 1
                                         else f" (mean of {runs:,} runs)"))]
    for m in core.METHODS:
        f = res.at(m, s)
        items += [(f"{m} P(correct)", fmt.fixed(f["p_correct"], 2)),
                  (f"{m} length if right / wrong", lengths(f))]
    return items


helps = [None]
for m in core.METHODS:
    f = final[m]
    helps += [f"probability of the right answer after {steps} steps ({se_text(f)}).",
              f"expected length in tokens (answer + fillers + end) of a correct response, then "
              f"of an incorrect one (averaged over the three wrong answers). Both start at "
              f"{fmt.fixed(start, 1)}; no response is shorter than 2."]


def view_at(s, res: core.LengthBiasResult | None) -> layout.View | None:
    """The readout and both panels after ``s`` steps of the full run ``res`` (None: another
    stop's run is not in this process yet; it is never computed for the browser's table)."""
    if res is None:
        return None
    s, full = int(s), full_curves(runs, lr_grpo, lr_dr, seed)
    return layout.View(readout_at(s, res), {
        f"length-bias-{m}": figs.panel(m, s, full, res.at(m, s), runs, lrs[m], start, p_start)
        for m in core.METHODS})


full_run(runs, lr_grpo, lr_dr, seed)     # in the process's table for the stops' peek below
view = page.follow(layout.Instant(
    "steps", lambda s: view_at(s, _runs_table().peek(runs, lr_grpo, lr_dr, seed)),
    setting=(runs, lr_grpo, lr_dr, seed)), helps=helps)

cols = page.figures(2)
for col, m in zip(cols, core.METHODS):
    with col:
        st.markdown(f"**{m}** · step size {controls.fmt_number(lrs[m])}")
        page.chart(view, f"length-bias-{m}")


if runs > 1:
    caption = (f"Lines: mean of {runs:,} runs. Shaded: the middle {BAND[1] - BAND[0]}% of the "
               f"runs ({BAND[0]}th to {BAND[1]}th percentile).")
else:
    caption = ("A single run: no band and no standard error. Another seed draws another run; "
               "more runs show the mean and the spread.")
if not page.present:
    st.caption(caption)


# --- what to look for: every claim follows the numbers -------------------------------------
def clear(f: dict, key: str) -> bool:
    """Has this mean length clearly moved from the start (core.length_moved)?"""
    return core.length_moved(f[key], f[key + "_se"], start)


VERBS = (("has learned", "have learned"), ("is still learning", "are still learning"),
         ("has barely moved toward", "have barely moved toward"))
s_g, s_d = (core.learning_status(f["p_correct"], p_start) for f in (g, d))
if s_g == s_d:
    answers = (f"After {steps} steps both methods {VERBS[s_g][1]} the answer (P(correct) "
               f"{fmt.fixed(g['p_correct'], 2)} for GRPO and {fmt.fixed(d['p_correct'], 2)} for "
               f"Dr. GRPO, from {fmt.fixed(p_start, 2)}: the blue curves under the lengths).")
else:
    answers = (f"After {steps} steps GRPO {VERBS[s_g][0]} the answer (P(correct) "
               f"{fmt.fixed(g['p_correct'], 2)}) while Dr. GRPO {VERBS[s_d][0]} it "
               f"({fmt.fixed(d['p_correct'], 2)}); both started at {fmt.fixed(p_start, 2)} (the "
               f"blue curves under the lengths).")

g_fell = clear(g, "len_correct") and g["len_correct"] < start
g_grew = clear(g, "len_incorrect") and g["len_incorrect"] > start
d_moved = clear(d, "len_correct") or clear(d, "len_incorrect")
g_wrong = (f", and its incorrect ones have grown to {fmt.fixed(g['len_incorrect'], 1)}"
           if g_grew else "")
d_now = f"{fmt.fixed(d['len_correct'], 1)} if right, {fmt.fixed(d['len_incorrect'], 1)} if wrong"
# Dr. GRPO not clearly moved: either both lengths are within MOVED_LEN of the start, or a
# larger move is within Z_CLEAR standard errors, the runs' noise (only with several runs).
d_near = all(abs(d[k] - start) < core.MOVED_LEN for k in ("len_correct", "len_incorrect"))
if g_fell and not d_moved:
    d_words = (f"stay near {fmt.fixed(start, 1)} ({d_now})" if d_near else
               f"move from {fmt.fixed(start, 1)} by no more than the runs' noise "
               f"({fmt.mean_se(d['len_correct'], d['len_correct_se'])} if right, "
               f"{fmt.mean_se(d['len_incorrect'], d['len_incorrect_se'])} if wrong: within "
               f"{fmt.short(core.Z_CLEAR)} standard errors)")
    moves = (f"Only GRPO moves the lengths, and nothing in the reward asks for it: its correct "
             f"responses have fallen from {fmt.fixed(start, 1)} to "
             f"{fmt.fixed(g['len_correct'], 1)} tokens{g_wrong}, while Dr. GRPO's {d_words}.")
elif g_fell:
    moves = (f"GRPO's correct responses have fallen from {fmt.fixed(start, 1)} to "
             f"{fmt.fixed(g['len_correct'], 1)} tokens{g_wrong}, though nothing in the reward "
             f"asks for it. Dr. GRPO's lengths have moved too ({d_now}), but its expected push on its "
             f"stop logits is zero: what moves them is the sampling noise, a random walk whose "
             f"steps grow with the step size ({controls.fmt_number(lr_dr)} here).")
    if runs > 1 and max(d["len_correct"], d["len_incorrect"]) < start and core.STOP_LOGIT0 < 0:
        moves += (" Averaged over runs, such a walk still shortens responses a little: at the "
                  "starting logit the stop probability σ(s) curves upward, so noise in s "
                  "raises it on average.")
else:
    more = ("more steps or a larger step size" if steps < STEPS_MAX else "a larger step size")
    moves = (f"GRPO's correct responses have not clearly shortened yet "
             f"({fmt.fixed(g['len_correct'], 1)} tokens if right, "
             f"{fmt.fixed(g['len_incorrect'], 1)} if wrong, from {fmt.fixed(start, 1)}): the push builds up over training, so give it {more}. "
             f"Dr. GRPO's: {d_now}.")

if g["len_correct"] <= 2.5:
    shortest = (f"so its stop logits climb until it ends almost straight after the answer "
                f"({fmt.fixed(g['len_correct'], 1)} tokens here; 2 is the shortest possible)")
else:
    shortest = ("so its stop logits climb toward ending straight after the answer (2 tokens, "
                "the shortest possible)")
noise = "the sampling noise (the band)" if runs > 1 else "the sampling noise"
mechanism = (
    f"Per-response averaging gives every token of a response of length L the weight 1/L, so "
    f"whether a response stops early changes how hard each of its tokens is pushed. A correct "
    f"answer has a positive advantage and is reinforced more per token when it is short, "
    f"{shortest}. A wrong answer has a negative advantage and is penalised less per token when "
    f"it is long, so its stop logits fall and it rambles on. Exercise 28.5 makes this exact: "
    f"with weight 1/L the expected push on a stop logit is A·q(1−q)(1/L₁ − 1/L₂), which has the "
    f"sign of the advantage; with Dr. GRPO's constant weight it is zero, and its lengths only "
    f"wander with {noise}."
)
late = ""
if (runs > 1 and g["p_correct"] >= core.LEARNED
        and g["len_incorrect_sd"] >= 0.05 and g["len_incorrect_sd"] > 2 * g["len_correct_sd"]):
    rare = 1 - g["p_correct"]
    rare_text = fmt.pct(rare, 1) if rare >= 0.0005 else "under 0.1%"
    late = (f" Late in GRPO training wrong answers are rare ({rare_text} of responses), so "
            f"their lengths are updated seldom and differ most from run to run: a spread of "
            f"{fmt.fixed(g['len_incorrect_sd'], 2)} tokens across runs, against "
            f"{fmt.fixed(g['len_correct_sd'], 2)} for right answers.")

page.explain(f"{answers} {moves} {mechanism}{late}")


def numbers() -> None:
    st.markdown("**At the chapter's checkpoints** (mean of the runs)")
    table = out["checkpoints"].rename(columns={
        "p_correct": "P(correct)", "len_correct": "length if correct",
        "len_incorrect": "length if incorrect"})
    layout.small_table(table, {"step": 0, "P(correct)": 2,
                               "length if correct": 1, "length if incorrect": 1})
    stem = (f"length_bias_steps_{steps}_runs_{runs}_lr_grpo_{controls.fmt_number(lr_grpo)}"
            f"_lr_dr_{controls.fmt_number(lr_dr)}_seed_{seed}")
    layout.csv_download(curves, f"{stem}.csv", key="length-bias-csv")
    layout.csv_download(out["checkpoints"], f"{stem}_checkpoints.csv",
                        label="Download the checkpoint table (CSV)", key="length-bias-table-csv")


page.details(numbers)
