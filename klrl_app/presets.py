"""The preset builder: "Prepare a link for a class", at the foot of every page with controls.

A lecturer ticks, for each of the page's controls, Lock (students see it at this value and
cannot move it) or Hide (students do not see it; the page uses this value), and gets the link
of this view with that preset (``lock=``, ``hide=``: klrl_app/controls.py), its QR code and a
button that copies it. Not in the presentation view (layout.Page.details).
"""

from __future__ import annotations

import io

import segno
import streamlit as st

from klrl_app.classroom import ui as classroom_ui
from klrl_app.controls import HIDE, LOCK, Controls

# The copy button: the browser's clipboard where it is allowed (https or localhost), else the
# older copy command on a selected hidden text box (a classroom server on plain http).
_COPY_HTML = """<div class="klrl-copy"><button type="button">Copy the link</button>
<span class="klrl-copy-said" role="status" aria-live="polite"></span></div>"""
_COPY_CSS = """
.klrl-copy {display: flex; align-items: center; gap: 0.75rem; font-family: var(--st-font);}
.klrl-copy button {font: inherit; font-size: 0.95rem; color: var(--st-text-color);
  background: var(--st-background-color); border: 1px solid var(--st-border-color);
  border-radius: 0.5rem; padding: 0.3rem 0.8rem; cursor: pointer; min-height: 2.4rem;}
.klrl-copy button:hover {border-color: var(--st-primary-color); color: var(--st-primary-color);}
.klrl-copy button:focus-visible {outline: 2px solid var(--st-primary-color); outline-offset: 2px;}
.klrl-copy-said {color: var(--st-text-color); font-size: 0.95rem;}
"""
_COPY_JS = """
function fallback(text) {
  const box = document.createElement("textarea");
  box.value = text; box.setAttribute("readonly", ""); box.style.position = "fixed";
  box.style.opacity = "0"; document.body.appendChild(box); box.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
  box.remove();
  return ok;
}
export default function ({ parentElement, data }) {
  const button = parentElement.querySelector(".klrl-copy button");
  const said = parentElement.querySelector(".klrl-copy-said");
  said.textContent = "";
  button.onclick = async () => {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(data.link); ok = true;
      }
    } catch (e) { ok = false; }
    if (!ok) ok = fallback(data.link);
    said.textContent = ok ? "Copied." : "Could not copy: select the link above and copy it.";
  };
}
"""
_copy = st.components.v2.component(
    "klrl_copy_link", html=_COPY_HTML, css=_COPY_CSS, js=_COPY_JS, isolate_styles=False
)


def qr_png(link: str) -> bytes:
    """The link's QR code as a PNG: black on white with the standard quiet zone, so a phone
    reads it off a projector in either theme."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=6, border=4)
    return out.getvalue()


def choose(ui: Controls, slug: str) -> tuple[list[str], list[str], bool, str | None]:
    """The ticks: (lock, hide, presentation view, a note on what the link adds)."""
    lock, hide = [], []
    for e in ui.entries.values():
        value = ui.value_text(e.name)
        st.markdown(f"**{e.label}** · " + (f"`{value}`" if value else "its default"))
        with st.container(horizontal=True, gap="medium"):
            if st.checkbox(
                f"Lock {e.called()}",
                key=f"prepare.{slug}.lock.{e.name}",
                value=ui.in_link(e.name, LOCK),
            ):
                lock.append(e.name)
            if st.checkbox(
                f"Hide {e.called()}",
                key=f"prepare.{slug}.hide.{e.name}",
                value=ui.in_link(e.name, HIDE),
            ):
                hide.append(e.name)
    note = None
    main = ui.main_name
    if (
        main in hide
        and main not in lock
        and all(n in lock or n in hide for n in ui.entries if n != main)
    ):
        lock.append(main)  # controls.Controls.main: hidden with nothing left to move
        note = (
            f"Nothing else is left to move, so the link locks "
            f"{ui.entries[main].called()} too: a still figure."
        )
    present = st.checkbox(
        "Open in the presentation view (for the projector)", key=f"prepare.{slug}.present"
    )
    return (
        [n for n in ui.entries if n in lock],
        [n for n in ui.entries if n in hide],
        present,
        note,
    )


def builder(ui: Controls, slug: str) -> None:
    """The page's controls with their values, Lock and Hide for each, and the link they make:
    shown as text, as a QR code and with a button that copies it."""
    st.caption(
        "Tick what students may see but not move (Lock) and what they should not see "
        "(Hide). The link keeps every control at its value now; its Reset button "
        "brings a student back to this view."
    )
    lock, hide, present, note = choose(ui, slug)
    link = ui.preset_link(lock, hide, present)
    if note:
        st.caption(note)
    with st.container(key=f"klrl-{slug}-prepared"):
        st.code(link, language=None, wrap_lines=True)
        _copy(key=f"klrl-{slug}-copy", data={"link": link})
        st.image(
            qr_png(link),
            width=220,
            alt="QR code of the link above: a phone's camera opens this view.",
        )
        # in a class session: the students go to this preset at once (lock and hide included)
        classroom_ui.bring_button(
            slug,
            ui.preset_query(lock, hide, present),
            label="Bring everyone to this preset",
            key=f"klrl-{slug}-bring-preset",
        )
