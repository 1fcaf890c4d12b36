"""Controls that are also query parameters: the one place where the URL becomes values and back.

SPEC.md, "The public contract": every control is read from the link on load, kept in the
address bar as it moves, and a malformed or out-of-range value never raises: the page falls
back to the default (or the nearest allowed value), says so in a visible notice, and draws.

Usage on a page::

    ui = Controls("tilt")
    kappa = ui.kappa(default=5.0)
    n = ui.integer("n", "Number of draws n", default=8, lo=1, hi=10**7)
    ui.finish()          # shows the notices, writes the URL

A value is read from the URL only when its widget has no state yet in this session (the
first run of the page); after that the widget owns the value and the URL follows it.
"""

from __future__ import annotations

import functools
import math
import re
from urllib.parse import urlencode
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import streamlit as st

from klrl_app import fmt

KAPPA_MAX = 10_000.0
PRESENT_KEY = "klrl.present"  # the presentation view: one switch for the whole session
LOCK, HIDE = "lock", "hide"  # a lecturer's preset: controls shown fixed, or not shown
RESET_KEY = "reset"  # the button that returns every control to the link's values
TRUE_WORDS = {"on", "true", "1", "yes"}
FALSE_WORDS = {"off", "false", "0", "no"}


class Refused(ValueError):
    """A query-parameter value that cannot be used as it is."""


def fmt_number(x: float) -> str:
    """Shortest text that reads back to the same number: 5 not 5.0, 0.15 not 0.15000000000000002."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _quote(name: str, raw: str) -> str:
    """How a refused parameter is named in a notice; junk such as nan or inf is not echoed."""
    if len(raw) > 24 or re.search(r"nan|inf", raw, re.IGNORECASE):
        return f"`{name}`"
    return f"`{name}={raw}`"


def parse_float(raw: str) -> float:
    try:
        value = float(raw.strip())
    except ValueError:
        raise Refused("not a number") from None
    if math.isnan(value):
        raise Refused("not a number")
    return value  # may be ±inf: clamped by the caller to the nearest allowed value


def parse_int(raw: str) -> float:
    value = parse_float(raw)
    if math.isfinite(value) and not value.is_integer():
        raise Refused("not a whole number")
    return value


def parse_bool(raw: str) -> bool:
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise Refused("not a switch value (use on/off, true/false or 1/0)")


def slider_stops(lo: float, hi: float, step: float) -> list[float]:
    """The values a float slider can take, as the browser sends them: lo + i·step rounded to
    the step's decimals (0.1 + 0.01 is sent as 0.11, not 0.11000000000000001)."""
    n = int(round((hi - lo) / step))
    decimals = max(0, -math.floor(math.log10(step)) + 3)
    return [round(lo + i * step, decimals) for i in range(n + 1)]


def kappa_options() -> list[float]:
    """The kappa slider's stops: fine where the figures change fastest, coarse up to 10,000."""
    return list(_kappa_options())


@functools.lru_cache(maxsize=1)
def _kappa_options() -> tuple[float, ...]:
    parts = [
        np.arange(0.0, 2.0, 0.1),
        np.arange(2.0, 50.0, 0.5),
        np.arange(50.0, 100.0, 2.5),
        np.arange(100.0, 1000.0, 50.0),
        np.arange(1000.0, KAPPA_MAX + 1, 500.0),
    ]
    return tuple(round(float(v), 6) for v in np.concatenate(parts))


def beta_text(kappa: float) -> str:
    """β = 1/κ to three significant figures, never in e-notation (β ≥ 0.0001 here)."""
    if kappa == 0:
        return "∞"
    beta = 1.0 / kappa
    # Below 0.001 six decimals hold β's three figures (β ≥ 1/KAPPA_MAX = 0.0001): a slider
    # label reads 0.000667, not fmt's switch to 6.67 × 10⁻⁴.
    return fmt.sig(beta, 3, trim=True) if beta >= 0.001 else fmt.fixed(beta, 6, trim=True)


def kappa_text(kappa: float) -> str:
    """κ to four significant figures, written out: 10,000 not 1e+04."""
    kappa = float(kappa)
    return fmt.fixed(kappa, 0) if kappa >= 1000 else fmt.sig(kappa, 4, trim=True)


@functools.lru_cache(maxsize=4096)  # the slider formats every stop on every run
def kappa_label(kappa: float) -> str:
    """How a kappa reads on the slider: both names of the one control (kappa = 1/beta)."""
    return f"κ = {kappa_text(kappa)}  ·  β = {beta_text(kappa)}"


def and_list(words: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@dataclass(frozen=True)
class Entry:
    """A control as a preset names it: its name in the link, the other names the link may
    give it (kappa and beta; the lists of a model), its label and how a note names it."""

    name: str
    label: str
    aliases: tuple[str, ...] = ()
    short: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def called(self) -> str:
        """How the lecturer's note names it: its short name, or its label in quotes (without
        a parenthesis at the end)."""
        return self.short or "“" + re.sub(r" \(.*\)$", "", self.label) + "”"


@dataclass
class Controls:
    """The controls of one page, with their notices and their URL.

    Presets (SPEC.md, "Presets"): ``lock=<names>`` shows those controls at the link's values,
    disabled; ``hide=<names>`` does not show them, and the page uses the link's values. The
    names are the controls' link names (either name of kappa/beta, a model's ``pi0``/``r`` or
    its group name ``model``). The value a control read from the link on its first run is its
    preset: a locked or hidden control is held there, and ``reset`` returns every control to
    it. The control the figures follow (``main``) is hidden only when another control is left
    to move or it is locked too (a still figure); else it stays shown, with a notice.
    """

    page: str
    notices: list[str] = field(default_factory=list)
    _url: dict[str, str] = field(default_factory=dict)
    _first_values: dict[str, object] = field(default_factory=dict)
    typed: list[str] = field(default_factory=list)  # typed values replaced, this run only
    notes: list[str] = field(default_factory=list)  # what was done with a usable link
    # Each slider's label and its stops (layout.Page.readout's instant readout): name ->
    # (label, "index" for a select_slider or "value" for a slider, the stops in order, the
    # text a select slider shows for each stop or None).
    sliders: dict[str, tuple[str, str, list, list | None]] = field(default_factory=dict)
    # A select slider's own stops, without a linked value between them (klrl_app/instant.py
    # sends the figures at these, the same table whatever the current value).
    grids: dict[str, list] = field(default_factory=dict)
    # The page's controls as presets name them, in the order built (``_place``, ``declare``).
    entries: dict[str, Entry] = field(default_factory=dict)
    _slots: dict[str, tuple] = field(default_factory=dict)  # hidden: where each would be
    _main: str | None = None
    _slot: object = None  # where finish showed the notices

    def __post_init__(self) -> None:
        self._lock = self._items(LOCK)
        self._hide = self._items(HIDE)
        # A new link (or this page opened afresh with another one): its names are read now
        # and their notices given once, like any parameter's.
        spec, key = (self._raw(LOCK), self._raw(HIDE)), self._key("__spec")
        self._fresh = st.session_state.get(key) != spec
        if self._fresh:
            st.session_state[key] = spec
            st.session_state[self._key("__shown")] = set()
        # Hidden in the link but shown: the main control when nothing else would move.
        self._shown: set[str] = st.session_state.get(self._key("__shown"), set())

    # ----- presets ----------------------------------------------------------------------
    def _items(self, param: str) -> list[str]:
        """The names a preset parameter lists, read case-blind, each once, in order."""
        raw = self._raw(param)
        if raw is None:
            return []
        return list(dict.fromkeys(t.strip().lower() for t in raw.split(",") if t.strip()))

    def _state_of(self, name: str, names: Iterable[str]) -> str | None:
        names = set(names)
        if names & set(self._hide) and name not in self._shown:
            return HIDE
        if names & set(self._lock):
            return LOCK
        return None

    def state(self, name: str) -> str | None:
        """ "hide", "lock" or None: what the link's preset does with control ``name``."""
        entry = self.entries.get(name)
        return self._state_of(name, entry.names if entry else (name,))

    @property
    def main_name(self) -> str | None:
        """The control the figures follow (set by ``main``), or None."""
        return self._main

    def in_link(self, name: str, param: str) -> bool:
        """True if the link's ``lock`` or ``hide`` (``param``) names control ``name``."""
        entry = self.entries.get(name)
        return bool(
            set(entry.names if entry else (name,))
            & set(self._lock if param == LOCK else self._hide)
        )

    def fixed(self, name: str) -> bool:
        """True if the link locks or hides control ``name``: a page's button that would move
        it (New runs sets the seed) is then disabled or left out."""
        return self.state(name) is not None

    def declare(
        self, name: str, label: str, aliases: Sequence[str] = (), short: str | None = None
    ) -> str | None:
        """Register a control that the page builds itself (a model's select box and lists)
        under the preset name ``name`` (the link may also name it by ``aliases``). Returns
        what the preset does with it: "hide" (build nothing), "lock" (build it disabled) or
        None."""
        self.entries[name] = Entry(name, label, tuple(aliases), short)
        return self.state(name)

    def _begin(self, name: str, aliases: Sequence[str] = ()) -> bool:
        """True on the control's first run (read the link then); on a later run a locked or
        hidden control is put back at its preset, whatever moved it (a button, a model's
        preset)."""
        key = self._key(name)
        if key not in st.session_state:
            return True
        if self._state_of(name, (name, *aliases)) is not None:
            preset = st.session_state.get(self._key("__preset"), {})
            if key in preset and st.session_state[key] != preset[key]:
                st.session_state[key] = preset[key]
        return False

    def _place(
        self,
        name: str,
        label: str,
        build: Callable[[bool], object],
        aliases: Sequence[str] = (),
        short: str | None = None,
    ) -> object:
        """Build a control's widget (``build(disabled)``) as the preset says: disabled when
        locked; not at all when hidden (its value is the session's, the link's), though a
        place is kept where ``main`` can still build it."""
        state = self.declare(name, label, [a for a in aliases if a], short)
        if state == HIDE:
            self._slots[name] = (st.empty(), build)
            return st.session_state.get(self._key(name))
        return build(state == LOCK)

    def main(self, name: str) -> None:
        """``name`` is the control the figures follow (layout.Page.follow). Hidden, it must
        be locked too or leave another control to move; else it is shown after all."""
        self._main = name
        if self.state(name) != HIDE or set(self.entries[name].names) & set(self._lock):
            return
        if any(n != name and self.state(n) is None for n in self.entries):
            return
        self._shown.add(name)
        st.session_state[self._key("__shown")] = self._shown
        slot, build = self._slots.pop(name)
        with slot.container():
            build(False)
        if self._fresh:
            given = next(n for n in self._hide if n in self.entries[name].names)
            self.notices.append(
                f"`hide={given}`: {self.entries[name].called()} is what the figures follow, "
                f"and nothing else would be left to move, so it stays shown (add it to "
                f"`lock` too for a still figure)."
            )
            if self._slot is not None:
                st.session_state[self._key("__notices")] = (
                    list(self.notices),
                    dict(self._first_values),
                )
        if self._slot is not None:
            self._render()

    def _valid(self, param: str) -> list[str]:
        """The names of ``param`` that name a control of this page; a notice for the others
        (on the link's first run)."""
        known = {n for e in self.entries.values() for n in e.names}
        valid = [n for n in (self._lock if param == LOCK else self._hide) if n in known]
        if self._fresh:
            for n in self._lock if param == LOCK else self._hide:
                if n in known:
                    continue
                what = (
                    "this page has no controls"
                    if not known
                    else "not a control of this page (its controls: "
                    + ", ".join(e.name for e in self.entries.values())
                    + ")"
                )
                self.notices.append(f"{_quote(param, n)}: {what}; ignored.")
        return valid

    def lecturer_note(self) -> str | None:
        """One sentence naming what the link fixed and hid, or None."""
        locked = [e.called() for e in self.entries.values() if self.state(e.name) == LOCK]
        hidden = [e.called() for e in self.entries.values() if self.state(e.name) == HIDE]
        if not locked and not hidden:
            return None
        if not hidden:
            return f"The lecturer fixed {and_list(locked)} for this view."
        not_shown = fmt.agree(len(hidden), "it is not shown", "they are not shown")
        if not locked:
            return f"The lecturer set {and_list(hidden)} for this view; {not_shown}."
        return (
            f"The lecturer fixed {and_list(locked)} for this view and set "
            f"{and_list(hidden)}, which {fmt.agree(len(hidden), 'is', 'are')} not shown."
        )

    def reset(self) -> None:
        """Every control back at the link's value (the button ``reset``'s callback)."""
        for key, value in st.session_state.get(self._key("__preset"), {}).items():
            st.session_state[key] = value

    def value_text(self, name: str) -> str | None:
        """A control's value as the link writes it (``kappa=5``), None when the link leaves
        it at its default."""
        entry = self.entries[name]
        texts = [f"{n}={self._url[n]}" for n in entry.names if n in self._url]
        return " & ".join(texts) or None

    def preset_query(
        self, lock: Iterable[str] = (), hide: Iterable[str] = (), present: bool = False
    ) -> dict[str, str]:
        """The query of this view's values with the preset ``lock`` and ``hide`` (names as
        in ``entries``), and ``present=1`` for the presentation view."""
        query = {k: v for k, v in self._url.items() if k not in (LOCK, HIDE, "present")}
        for param, names in ((LOCK, list(lock)), (HIDE, list(hide))):
            if names:
                query[param] = ",".join(names)
        if present:
            query["present"] = "1"
        return query

    def preset_link(
        self, lock: Iterable[str] = (), hide: Iterable[str] = (), present: bool = False
    ) -> str:
        """The full address of this view with a preset (``preset_query``)."""
        query = urlencode(self.preset_query(lock, hide, present), safe=",")
        base = st.context.url or ""
        return f"{base}?{query}" if query else base

    # ----- reading the link -------------------------------------------------------------
    def _key(self, name: str) -> str:
        return f"{self.page}.{name}"

    def key(self, name: str) -> str:
        """The session-state key of this page's control ``name`` (for controls built outside
        this class, such as tilt_figures.choose_model)."""
        return self._key(name)

    def notice(self, text: str) -> None:
        """A notice about this page's link (shown above the readout by finish)."""
        self.notices.append(text)

    def note(self, text: str) -> None:
        """Something the page did with a usable link (e.g. normalised a list): shown as a
        note, not as a refusal."""
        self.notes.append(text)

    def remember(self, name: str, value: object, url_text: str | None) -> None:
        """Record a control built outside this class: its value (a link's notice goes away
        once it moves) and its text in the link."""
        self._remember(name, value, url_text)

    def link_param(self, name: str, text: str) -> None:
        """Keep ``name=text`` in the link (a control this class does not build)."""
        self._url[name] = text

    def _first_run(self, name: str) -> bool:
        return self._key(name) not in st.session_state

    def _raw(self, name: str) -> str | None:
        raw = st.query_params.get(name)
        return None if raw is None else str(raw)

    def _refuse(self, name: str, raw: str, why: str, shown: str) -> None:
        self.notices.append(f"{_quote(name, raw)}: {why}; showing {shown} instead.")

    def _read_number(
        self,
        name: str,
        default: float | None,
        lo: float,
        hi: float,
        parse: Callable[[str], float],
        unit_fmt: Callable[[float], str],
        default_text: str | None = None,
    ) -> float | None:
        raw = self._raw(name)
        if raw is None:
            return default
        try:
            value = parse(raw)
        except Refused as why:
            self._refuse(name, raw, str(why), default_text or f"the default {unit_fmt(default)}")
            return default
        if value < lo:
            self._refuse(
                name, raw, f"below the smallest allowed value {unit_fmt(lo)}", unit_fmt(lo)
            )
            return lo
        if value > hi:
            self._refuse(name, raw, f"above the largest allowed value {unit_fmt(hi)}", unit_fmt(hi))
            return hi
        return value

    def _init(self, name: str, value: object) -> None:
        st.session_state[self._key(name)] = value
        # the preset: what the link gave (reset returns here; lock and hide hold it)
        preset = st.session_state.setdefault(self._key("__preset"), {})
        preset[self._key(name)] = value

    def _remember(self, name: str, value: object, url_text: str | None) -> None:
        self._first_values.setdefault(name, value)
        if url_text is not None:
            self._url[name] = url_text

    # ----- controls ---------------------------------------------------------------------
    def kappa(
        self, default: float, label: str = "Inverse KL weight κ = 1/β", help: str | None = None
    ) -> float:
        """The one control with two names: ``kappa`` or ``beta`` in the link (kappa = 1/beta).

        A link that gives ``beta`` keeps it, as the reader wrote it, until the slider moves
        (``?beta=0.03`` stays ``beta=0.03``, not ``kappa=33.333333333333336``)."""
        options = kappa_options()
        self.grids["kappa"] = options
        key = self._key("kappa")
        alias_key = self._key("kappa.__beta")
        if self._begin("kappa", ("beta",)):
            value, beta_given = self._read_kappa(default)
            self._init("kappa", value)
            st.session_state[alias_key] = (value, beta_given)
        value = float(st.session_state[key])
        if value not in options:  # a linked value between stops keeps its exact value
            options = sorted(set(options) | {value})
        self.sliders["kappa"] = (label, "index", options, [kappa_label(o) for o in options])
        kappa = self._place(
            "kappa",
            label,
            lambda off: st.select_slider(
                label,
                options=options,
                key=key,
                format_func=kappa_label,
                disabled=off,
                help=help
                or "Drag right to weaken the anchor to the reference policy (larger κ, "
                "smaller β). Arrow keys step through the values.",
            ),
            aliases=("beta",),
            short="κ",
        )
        linked_value, beta_given = st.session_state.get(alias_key, (None, None))
        if beta_given is not None and linked_value == kappa:
            self._remember("kappa", kappa, None)
            self._url["beta"] = beta_given
        else:
            self._remember("kappa", kappa, fmt_number(kappa))
        return float(kappa)

    def _read_kappa(self, default: float) -> tuple[float, str | None]:
        """(kappa, the beta text to keep in the link, or None)."""
        kappa_raw, beta_raw = self._raw("kappa"), self._raw("beta")
        if kappa_raw is not None:
            if beta_raw is not None:
                self.notices.append(
                    f"{_quote('beta', beta_raw)} was ignored: the link also "
                    f"sets `kappa`, and κ = 1/β is one control."
                )
            return self._read_number(
                "kappa", default, 0.0, KAPPA_MAX, parse_float, kappa_text
            ), None
        if beta_raw is None:
            return default, None
        try:
            beta = parse_float(beta_raw)
        except Refused as why:
            self._refuse("beta", beta_raw, str(why), f"the default β = {beta_text(default)}")
            return default, None
        beta_min = 1.0 / KAPPA_MAX
        if beta < beta_min:
            self._refuse(
                "beta",
                beta_raw,
                f"β must be at least {beta_text(KAPPA_MAX)} (κ at most {kappa_text(KAPPA_MAX)})",
                f"β = {beta_text(KAPPA_MAX)} (κ = {kappa_text(KAPPA_MAX)})",
            )
            return KAPPA_MAX, None
        if math.isinf(beta):
            return 0.0, None
        return 1.0 / beta, fmt_number(beta)

    def number(
        self,
        name: str,
        label: str,
        default: float,
        lo: float,
        hi: float,
        step: float,
        help: str | None = None,
        fmt: str | None = None,
        inverse_alias: str | None = None,
    ) -> float:
        """A float slider, linked as ``name``. With ``inverse_alias`` (e.g. "kappa" for a beta
        control) a link may give the value's reciprocal under that name instead."""
        if self._begin(name, (inverse_alias,) if inverse_alias else ()):
            if inverse_alias and self._raw(inverse_alias) is not None:
                value = self._read_inverse(name, inverse_alias, default, lo, hi)
            else:
                value = self._read_number(name, default, lo, hi, parse_float, fmt_number)
            self._init(name, float(value))
        self.sliders[name] = (label, "value", slider_stops(lo, hi, step), None)
        value = self._place(
            name,
            label,
            lambda off: st.slider(
                label,
                min_value=float(lo),
                max_value=float(hi),
                step=float(step),
                key=self._key(name),
                help=help,
                format=fmt,
                disabled=off,
            ),
            aliases=(inverse_alias,) if inverse_alias else (),
        )
        self._remember(name, value, fmt_number(value))
        return float(value)

    def _read_inverse(self, name: str, alias: str, default: float, lo: float, hi: float) -> float:
        """The value 1/x from a link's ``alias=x`` (kappa = 1/beta: one control, two names)."""
        raw = self._raw(alias)
        if self._raw(name) is not None:
            self.notices.append(
                f"`{alias}` was ignored: the link also sets `{name}`, and κ = 1/β is one control."
            )
            return self._read_number(name, default, lo, hi, parse_float, fmt_number)
        try:
            x = parse_float(raw)
            if not 0 < x < math.inf:
                raise Refused("must be a positive number (it is 1/" + name + ")")
        except Refused as why:
            self._refuse(alias, raw, str(why), f"the default {name} = {fmt_number(default)}")
            return default
        value = 1.0 / x
        if not lo <= value <= hi:
            value = min(max(value, lo), hi)
            self._refuse(
                alias,
                raw,
                f"must lie between {fmt.short(1 / hi)} and {fmt.short(1 / lo)}",
                f"{name} = {fmt.short(value)}",
            )
        return value

    def stops(
        self,
        name: str,
        label: str,
        stops: list[float],
        default: float,
        integer: bool = False,
        fmt: Callable[[float], str] | None = None,
        help: str | None = None,
        inverse_alias: str | None = None,
        lo: float | None = None,
        hi: float | None = None,
    ) -> float:
        """A slider over uneven stops (log-spaced, say), linked as ``name`` (or, with
        ``inverse_alias``, as its reciprocal). A linked value between stops is kept exactly;
        one outside [lo, hi] (default: the first and last stop) is clamped with a notice."""
        lo = stops[0] if lo is None else lo
        hi = stops[-1] if hi is None else hi
        cast = int if integer else float
        fmt = fmt or ((lambda v: f"{int(v):,}") if integer else fmt_number)
        if self._begin(name, (inverse_alias,) if inverse_alias else ()):
            if inverse_alias and self._raw(inverse_alias) is not None:
                value = self._read_inverse(name, inverse_alias, default, lo, hi)
            else:
                value = self._read_number(
                    name, default, lo, hi, parse_int if integer else parse_float, fmt
                )
            self._init(name, cast(value))
        value = cast(st.session_state[self._key(name)])
        options = stops if value in stops else sorted(set(stops) | {value})
        self.grids[name] = [cast(o) for o in stops]
        self.sliders[name] = (label, "index", [cast(o) for o in options], [fmt(o) for o in options])
        value = cast(
            self._place(
                name,
                label,
                lambda off: st.select_slider(
                    label,
                    options=options,
                    key=self._key(name),
                    format_func=fmt,
                    help=help,
                    disabled=off,
                ),
                aliases=(inverse_alias,) if inverse_alias else (),
            )
        )
        self._remember(name, value, str(value) if integer else fmt_number(value))
        return value

    def count_or_all(
        self,
        name: str,
        label: str,
        stops: list,
        default: int,
        hi: int,
        unit: str,
        word: str = "all",
        word_text: str = "all (the limit)",
        word_means: str = "the limit",
        help: str | None = None,
    ) -> int | str:
        """A count or a word: a select slider over ``stops`` (whole counts in order, then
        ``word``, which the slider shows as ``word_text``), linked as ``name`` (``name=word``
        or the count). A link keeps any whole count from 1 to ``hi`` exactly (a count between
        stops is added as a stop); one above ``hi`` is clamped, and text that is not a count,
        or a count below 1, gives the default; each with a notice that names ``unit`` ("a
        number of pairs") and says what ``word`` means."""
        if stops[-1] != word or any(s == word for s in stops[:-1]):
            raise ValueError(f"the stops must end with {word!r}, and only there")
        counts = [int(s) for s in stops[:-1]]

        def fmt(v: int | str) -> str:
            return word_text if v == word else f"{int(v):,}"

        if self._begin(name):
            self._init(name, self._read_count_or_word(name, default, hi, unit, word, word_means))
        value = st.session_state[self._key(name)]
        if value != word:
            value = int(value)
        options = [*counts, word] if value in stops else [*sorted({*counts, value}), word]
        self.grids[name] = [*counts, word]
        self.sliders[name] = (label, "index", options, [fmt(o) for o in options])
        value = self._place(
            name,
            label,
            lambda off: st.select_slider(
                label,
                options=options,
                key=self._key(name),
                format_func=fmt,
                help=help,
                disabled=off,
            ),
        )
        value = word if value == word else int(value)
        self._remember(name, value, word if value == word else str(value))
        return value

    def _read_count_or_word(
        self, name: str, default: int, hi: int, unit: str, word: str, word_means: str
    ) -> int | str:
        raw = self._raw(name)
        if raw is None:
            return default
        if raw.strip().lower() == word:
            return word
        shown = _quote(name, raw)
        instead = f"showing the default {default:,} {unit} instead."
        try:
            value = parse_int(raw)
        except Refused as why:
            self.notices.append(f"{shown}: {why} (a count or `{word}`); {instead}")
            return default
        if value < 1:
            self.notices.append(f"{shown}: a number of {unit} must be at least 1; {instead}")
            return default
        if value > hi:
            self.notices.append(
                f"{shown}: above the largest allowed count {hi:,} (use "
                f"`{word}` for {word_means}); showing {hi:,} instead."
            )
            return int(hi)
        return int(value)

    def integer(
        self,
        name: str,
        label: str,
        default: int,
        lo: int,
        hi: int,
        step: int = 1,
        widget: str = "slider",
        help: str | None = None,
    ) -> int:
        """An integer slider (or number box for wide ranges), linked as ``name``."""
        if self._begin(name):
            value = self._read_number(name, default, lo, hi, parse_int, lambda v: f"{int(v):,}")
            self._init(name, int(value))
        if widget == "number":
            value = self._place(
                name,
                label,
                lambda off: self._number_box(
                    name, label, lo, hi, step, help, empty=default, disabled=off
                ),
            )
            value = default if value is None else value
        else:
            self.sliders[name] = (
                label,
                "value",
                list(range(int(lo), int(hi) + 1, int(step))),
                None,
            )
            value = self._place(
                name,
                label,
                lambda off: st.slider(
                    label,
                    min_value=int(lo),
                    max_value=int(hi),
                    step=int(step),
                    key=self._key(name),
                    help=help,
                    disabled=off,
                ),
            )
        value = int(value)
        self._remember(name, value, str(value))
        return value

    def _number_box(
        self,
        name: str,
        label: str,
        lo: int,
        hi: int,
        step: int,
        help: str | None,
        placeholder: str | None = None,
        empty: int | None = None,
        disabled: bool = False,
    ) -> int | None:
        """A whole-number box that takes any typed value: one outside [lo, hi] is replaced by
        the nearest allowed value, in the box too, with a message (a box with bounds would
        only turn red and keep the old value). An emptied box holds ``empty`` (None: stays
        empty and gives None)."""
        key = self._key(name)
        said = self._key(name + ".__typed")

        def clamp() -> None:
            typed = st.session_state.get(key)
            if typed is None:
                if empty is not None:
                    st.session_state[key] = empty
                return
            shown = int(min(max(round(typed), lo), hi))
            if shown != typed:
                st.session_state[key] = shown
                # Exactly as typed (up to six decimals): rounded, a value just above the
                # largest allowed one could read as allowed.
                typed_text = (
                    fmt.fixed(typed, 6, trim=True)
                    if abs(typed) < 1e15
                    else fmt.standard_form(typed, 6, trim=True)
                )
                st.session_state[said] = (
                    f"{label}: {typed_text} is not allowed (whole numbers "
                    f"from {lo:,} to {hi:,}); using {shown:,}."
                )

        value = st.number_input(
            label,
            value=None,
            step=int(step),
            key=key,
            help=help,
            placeholder=placeholder,
            on_change=clamp,
            disabled=disabled,
        )
        if said in st.session_state:
            self.typed.append(st.session_state.pop(said))
        return None if value is None else int(value)

    def optional_integer(
        self, name: str, label: str, lo: int, hi: int, when_empty: str, help: str | None = None
    ) -> int | None:
        """A number box that may be left empty (``None``: the page chooses); linked as
        ``name`` only while it holds a number. ``when_empty`` says what empty means."""
        if self._begin(name):
            value = self._read_number(
                name, None, lo, hi, parse_int, lambda v: f"{int(v):,}", default_text=when_empty
            )
            self._init(name, None if value is None else int(value))
        value = self._place(
            name,
            label,
            lambda off: self._number_box(
                name, label, lo, hi, 1, help, placeholder=when_empty, disabled=off
            ),
        )
        self._remember(name, value, None if value is None else str(value))
        return value

    def seed(
        self, name: str = "seed", label: str = "Seed", default: int = 0, help: str | None = None
    ) -> int:
        """A non-negative integer seed, linked as ``name``."""
        return self.integer(
            name,
            label,
            default,
            0,
            2**31 - 1,
            widget="number",
            help=help or "The same seed draws the same random runs.",
        )

    def switch(self, name: str, label: str, default: bool, help: str | None = None) -> bool:
        """An on/off toggle, linked as ``name`` (on/off, true/false, 1/0 in any case)."""
        if self._begin(name):
            raw, value = self._raw(name), default
            if raw is not None:
                try:
                    value = parse_bool(raw)
                except Refused as why:
                    self._refuse(name, raw, str(why), "the default " + ("on" if default else "off"))
            self._init(name, value)
        value = bool(
            self._place(
                name,
                label,
                lambda off: st.toggle(label, key=self._key(name), help=help, disabled=off),
            )
        )
        self._remember(name, value, "on" if value else "off")
        return value

    def choice(
        self, name: str, label: str, options: dict[str, str], default: str, help: str | None = None
    ) -> str:
        """One of a few options as a segmented control, linked as ``name`` by its key
        (``options`` maps link value -> label)."""
        if self._begin(name):
            raw, value = self._raw(name), default
            if raw is not None:
                if raw.strip().lower() in options:
                    value = raw.strip().lower()
                else:
                    self._refuse(
                        name, raw, "not one of " + ", ".join(options), f"the default {default}"
                    )
            self._init(name, value)

        def keep_one() -> None:  # a click on the chosen option would unselect it
            if st.session_state.get(self._key(name)) is None:
                st.session_state[self._key(name)] = default

        value = (
            self._place(
                name,
                label,
                lambda off: st.segmented_control(
                    label,
                    list(options),
                    key=self._key(name),
                    help=help,
                    format_func=options.get,
                    selection_mode="single",
                    on_change=keep_one,
                    disabled=off,
                ),
            )
            or default
        )
        self._remember(name, value, value)
        return value

    def word(
        self,
        name: str,
        label: str,
        default: str,
        alphabet: str,
        length: int,
        help: str | None = None,
    ) -> str:
        """A short word over a small alphabet (say three letters from a, b, c), typed in a
        box and linked as ``name``. Letters are read case-blind; anything else is replaced by
        the nearest allowed word, position by position (a letter outside the alphabet, or a
        missing one, takes the default's letter there; extra letters are dropped), with a
        notice for a link and a message for a typed value."""
        if len(default) != length or any(ch not in alphabet for ch in default):
            raise ValueError(f"the default {default!r} is not {length} letters from {alphabet}")
        letters = ", ".join(alphabet)

        def nearest(text: str) -> str:
            t = text.strip().lower()
            return "".join(
                t[i] if i < len(t) and t[i] in alphabet else default[i] for i in range(length)
            )

        if self._begin(name):
            raw, value = self._raw(name), default
            if raw is not None:
                value = nearest(raw)
                if value != raw.strip().lower():
                    self._refuse(name, raw, f"not {length} letters from {letters}", value)
            self._init(name, value)
        key, said = self._key(name), self._key(name + ".__typed")

        def clamp() -> None:
            typed = str(st.session_state.get(key) or "")
            shown = nearest(typed)
            if shown != typed:
                st.session_state[key] = shown
                if shown != typed.strip().lower():
                    st.session_state[said] = (
                        f"{label}: “{typed[:24]}” is not {length} letters "
                        f"from {letters}; using {shown}."
                    )

        value = self._place(
            name,
            label,
            lambda off: st.text_input(label, key=key, help=help, on_change=clamp, disabled=off),
        )
        if said in st.session_state:
            self.typed.append(st.session_state.pop(said))
        value = nearest(str(value or ""))
        self._remember(name, value, value)
        return value

    def integer_or_none(
        self,
        name: str,
        label: str,
        default: int | None,
        lo: int,
        hi: int,
        none_word: str = "none",
        help: str | None = None,
    ) -> int | None:
        """A whole number from lo to hi, or none (``None``): a drop-down, linked as ``name``
        (``name=none_word`` for none). A linked number outside [lo, hi] gives the nearest
        allowed one with a notice; when ``hi`` shrinks on a later run (another control moved),
        a value above it becomes ``hi``, with a note."""
        options: list[int | None] = [None, *range(int(lo), int(hi) + 1)]
        show = lambda v: none_word if v is None else str(v)  # noqa: E731
        key = self._key(name)
        if self._begin(name):
            raw, value = self._raw(name), default
            if raw is not None and raw.strip().lower() == none_word:
                value = None
            elif raw is not None:
                value = self._read_number(
                    name,
                    default,
                    lo,
                    hi,
                    parse_int,
                    lambda v: f"{int(v):,}",
                    default_text=f"the default {show(default)}",
                )
                value = None if value is None else int(value)
            self._init(name, value)
        current = st.session_state.get(key)
        if current is not None and not lo <= current <= hi:
            shown = int(min(max(current, lo), hi))
            st.session_state[key] = shown
            self.notes.append(f"{label}: {current} is outside {lo} to {hi} now; using {shown}.")
        value = self._place(
            name,
            label,
            lambda off: st.selectbox(
                label, options, key=key, format_func=show, help=help, disabled=off
            ),
        )
        self._remember(name, value, show(value))
        return value

    def preset_or_lists(
        self,
        name: str,
        presets: Iterable[str],
        default: str,
        own: str,
        lists: Sequence[str],
        parse: Callable[..., object],
        match: Callable[[object], str],
        *,
        missing: str,
        required: Sequence[str] | None = None,
        bad: Callable[[ValueError], str] | None = None,
        preset_texts: Callable[[str], Sequence[str]] | None = None,
        preset_param: str | None = None,
        own_word: str = "",
        unknown: str = "",
    ) -> str:
        """The link of a "preset or lists of your own" control: read on the first run into
        the control ``name`` (which holds a preset name or ``own``) and the text boxes of
        ``lists`` (keys ``key(n)``); the page then builds the select box and the boxes on
        those keys. Returns the control's current value.

        A link gives lists (parameters ``lists``; all of ``required``, default all of them,
        or none: a missing optional one is None to ``parse`` and empty in its box), or, with
        ``preset_param``, a preset's name (read case-blind). ``parse(*texts)`` reads the
        lists (ValueError if they cannot be used) and ``match(parsed)`` names the preset they
        repeat, or ``own``. Notices, all whole texts: ``missing`` (some required lists are
        absent: the default preset), ``bad(why)`` (the lists cannot be used: the default
        preset; with ``bad=None`` they are kept as the reader's own, and the page says what is
        wrong), ``own_word`` (``preset_param=own`` without lists) and ``unknown`` (any other
        name). The link's texts go into the boxes when it gives usable lists of one's own, or
        any complete lists if there is no ``preset_texts``; otherwise the boxes show
        ``preset_texts(preset)`` (without ``preset_texts`` they are left as they are)."""
        if self._first_run(name):
            self._init(
                name,
                self._read_preset_or_lists(
                    presets,
                    default,
                    own,
                    lists,
                    parse,
                    match,
                    missing,
                    required or lists,
                    bad,
                    preset_texts,
                    preset_param,
                    own_word,
                    unknown,
                ),
            )
        return st.session_state[self._key(name)]

    def _read_preset_or_lists(
        self,
        presets,
        default,
        own,
        lists,
        parse,
        match,
        missing,
        required,
        bad,
        preset_texts,
        preset_param,
        own_word,
        unknown,
    ) -> str:
        raws = {n: self._raw(n) for n in lists}
        chosen, keep = default, False
        if any(raws[n] is not None for n in required):
            if any(raws[n] is None for n in required):
                self.notices.append(missing)
            else:
                try:
                    parsed = parse(*(raws[n] for n in lists))
                except ValueError as why:
                    if bad is None:
                        chosen, keep = own, True
                    else:
                        self.notices.append(bad(why))
                else:
                    chosen = match(parsed)
                    keep = chosen == own or preset_texts is None
        elif preset_param is not None and self._raw(preset_param) is not None:
            word = self._raw(preset_param).strip().lower()
            names = {p.lower(): p for p in presets}
            if word in names:
                chosen = names[word]
            else:
                self.notices.append(own_word if word == own.lower() else unknown)
        if keep:
            for n in lists:
                self._init(n, raws[n] or "")
        elif preset_texts is not None:
            for n, text in zip(lists, preset_texts(chosen)):
                self._init(n, text)
        return chosen

    def linked_texts(
        self,
        names: Sequence[str],
        defaults: dict[str, str],
        check: Callable[..., object],
        bad: Callable[[ValueError], str],
    ) -> None:
        """Text boxes that are read together (keys ``key(n)``), linked as ``names``: on the
        first run each box takes the link's text, or its default when the link has none. If
        ``check(*texts)`` raises ValueError, the notice ``bad(why)`` is given and every box
        takes its default. The page builds the boxes on those keys."""
        if not self._first_run(names[0]):
            return
        texts = [defaults[n] if self._raw(n) is None else self._raw(n) for n in names]
        try:
            check(*texts)
        except ValueError as why:
            self.notices.append(bad(why))
            texts = [defaults[n] for n in names]
        for n, text in zip(names, texts):
            self._init(n, text)

    def set(self, name: str, value: object) -> None:
        """Change a control's value before the next run (e.g. from a button)."""
        st.session_state[self._key(name)] = value

    # ----- after the controls -----------------------------------------------------------
    def finish(self, notice_slot=None) -> None:
        """Show the notices of this page's link, and write the current values to the URL
        (with ``present=1`` in the presentation view)."""
        lock, hide = self._valid(LOCK), self._valid(HIDE)
        if lock:
            self._url[LOCK] = ",".join(lock)
        if hide:
            self._url[HIDE] = ",".join(hide)
        store = self._key("__notices")
        if self.notices:  # parsed on this run: keep them for the reruns that follow
            st.session_state[store] = (list(self.notices), dict(self._first_values))
        elif store in st.session_state:
            notices, first = st.session_state[store]
            if first == self._first_values:
                self.notices = notices
            else:  # the reader has moved a control since: the link's problem is history
                del st.session_state[store]
        self._slot = notice_slot or st.empty()
        self._render()
        if st.session_state.get(PRESENT_KEY):
            self._url["present"] = "1"
        if st.query_params.to_dict() != self._url:
            st.query_params.from_dict(self._url)

    def _render(self) -> None:
        """The notices, messages and the lecturer's note, in finish's slot (again when the
        main control's preset changes them)."""
        slot = self._slot.container()
        if self.notices:
            slot.warning(
                "**Part of this link could not be used.**\n\n"
                + "\n".join(f"- {n}" for n in self.notices),
                icon="⚠️",
            )
        for text in self.typed:
            slot.warning(text, icon="⚠️")
        for text in self.notes:
            slot.info(text, icon=":material/info:")
        note = self.lecturer_note()
        if note:
            slot.caption(f":material/lock: {note}")

    def link(self) -> str:
        """The full address of this view: the page's URL with the controls' values."""
        query = urlencode(self._url)
        base = st.context.url or ""
        return f"{base}?{query}" if query else base
