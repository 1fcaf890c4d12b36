"""Shared helpers for the page tests (streamlit.testing.v1.AppTest)."""

from __future__ import annotations

import functools
import html
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import settings
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]

# No per-example time limit: on a shared 2-core CI machine Hypothesis's 200 ms deadline failed
# a core property (groups, 323 ms at k = 48, passing when repeated) on the machine's load, not
# on the code. Speed is measured in benchmarks/.
settings.register_profile("klrl", deadline=None)
settings.load_profile("klrl")
# Page tests compute only what they show; the browser tests' server precomputes as deployed.
os.environ.setdefault("KLRL_PRECOMPUTE", "0")
BAD_TEXT = re.compile(r"\b(nan|inf|NaN|Infinity)\b|Traceback")


def _table_by_label(self):
    """layout.small_table draws a table without an index column (an index's empty header cell
    is an empty table header to a screen reader); the page tests read it, as a reader does, by
    its first column: that column becomes the index here."""
    from streamlit import dataframe_util

    df = dataframe_util.convert_arrow_bytes_to_pandas_df(self.proto.arrow_data.data)
    return df.set_index(df.columns[0]) if len(df.columns) > 1 else df


from streamlit.testing.v1 import element_tree as _element_tree  # noqa: E402

_element_tree.Table.value = property(_table_by_label)


# What a server does once at its start, AppTest does at every run: scan every installed
# package for component manifests (a third of a page test's time, parsing the venv's package
# metadata) and compile the page script anew. Neither changes during a test session, so each
# is done once per process here; the scripts' runs themselves are untouched.
def _once_per_process() -> None:
    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    manifest_scanner.scan_component_manifests = functools.cache(
        manifest_scanner.scan_component_manifests
    )
    compiled: dict[tuple[str, int, int], object] = {}
    own = ScriptCache.get_bytecode

    def get_bytecode(self, script_path: str):
        st = os.stat(script_path)
        key = (os.path.abspath(script_path), st.st_mtime_ns, st.st_size)
        if key not in compiled:
            compiled[key] = own(self, script_path)
        return compiled[key]

    ScriptCache.get_bytecode = get_bytecode


_once_per_process()


def run_page(file: str, timeout: float = 60, **params: str) -> AppTest:
    """Run one page script as a fresh session opened with the given query parameters."""
    at = AppTest.from_file(str(ROOT / "pages" / file), default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


READOUT_ITEM = re.compile(
    r"<span class='klrl-label'>(.*?)</span> "
    r"<span class='klrl-value'>(.*?)</span>"
)


def metrics(at: AppTest) -> dict[str, str]:
    """The page's readout (layout.Page.readout) as {label: value}; a label that repeats gets
    " #2", " #3" in page order, as in the browser tests."""
    out: dict[str, str] = {}
    for m in at.markdown:
        if "klrl-readout" not in str(m.value):
            continue
        for label, value in READOUT_ITEM.findall(str(m.value)):
            label, value = html.unescape(label), html.unescape(value)
            key, n = label, 1
            while key in out:
                n += 1
                key = f"{label} #{n}"
            out[key] = value
    return out


def readout_live_regions(at: AppTest) -> list[str]:
    return [str(m.value) for m in at.markdown if "klrl-readout" in str(m.value)]


def charts(at: AppTest) -> list[dict]:
    """The figures the page draws (plotly JSON: data and layout), in page order."""
    live = [
        json.loads(json.loads(c.proto.json)["figure"])
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart"
    ]
    return live + [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def array(v):
    """A figure's array as NumPy: plotly's typed form {"dtype", "bdata"} or a plain list."""
    import base64
    import numpy as np

    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v)


def sent_table(at: AppTest) -> bytes:
    """The table of every stop this run named (klrl_app/instant.py), as the browser fetches
    it (gzipped JSON) from this process."""
    from klrl_app import serve

    found = [
        json.loads(c.proto.json)
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_instant" and "url" in json.loads(c.proto.json)
    ]
    assert len(found) == 1, f"{len(found)} tables of stops"
    gz = serve.STOP_TABLES.get(found[0]["id"])
    assert gz is not None and found[0]["url"].endswith("/klrl-table/" + found[0]["id"])
    return gz


def instant_table(at: AppTest) -> dict:
    """The table of every stop this run named (klrl_app/instant.py), parsed."""
    return _parsed_table(sent_table(at))


@functools.lru_cache(maxsize=16)
def _parsed_table(sent: bytes) -> dict:
    """The table from what was sent, parsed once: tests read it at every stop (do not mutate)."""
    from klrl_app.instant import unpacked

    return json.loads(unpacked(sent))


def instant_rows(at: AppTest) -> list[list]:
    """The stops of that table that are ready: [[stop key, values, labels or None, text],
    ...]; the key is the stop's index for a select slider, its value for a slider."""
    t = instant_table(at)
    return [
        [i if t["kind"] == "index" else k, row["v"], row["l"], k if t["kind"] == "index" else None]
        for i, (k, row) in enumerate(zip(t["keys"], t["rows"]))
        if row is not None
    ]


def drawn(at: AppTest, key: str) -> dict:
    """The figure this run drew for chart ``key`` (plotly JSON)."""
    found = [
        json.loads(json.loads(c.proto.json)["figure"])
        for c in at.get("bidi_component")
        if c.proto.component_name == "klrl_live_chart" and json.loads(c.proto.json)["key"] == key
    ]
    assert len(found) == 1, key
    return found[0]


def instant_figure(at: AppTest, key, chart: str) -> dict:
    """The figure the browser draws for ``chart`` at stop ``key`` (the table's base figure
    with that stop's patches applied, as instant.js does)."""
    import copy

    t = instant_table(at)
    i = (
        key
        if t["kind"] == "index"
        else next(j for j, k in enumerate(t["keys"]) if abs(k - key) <= 1e-9 * max(1, abs(key)))
    )
    fig = copy.deepcopy(t["base"][chart])
    row = t["rows"][i]
    for path, value in row["c"][chart]:
        if isinstance(value, dict) and set(value) == {"$"}:  # a repeated value, sent once
            ref_chart, j = value["$"]
            value = row["c"][ref_chart][j][1]
        node = fig
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return fig


def instant_readout_at(at: AppTest, key) -> dict[str, str]:
    """The table's readout at stop ``key``, as {label: value} (labels: the row's or this run's)."""
    row = next((r for r in instant_rows(at) if abs(r[0] - key) <= 1e-9 * max(1, abs(key))), None)
    assert row is not None, f"no instant row for {key!r}"
    labels = row[2] or instant_table(at)["labels"]  # as instant.js reads them
    return dict(zip(labels, row[1]))


def notices(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def all_text(at: AppTest) -> str:
    parts = [re.sub(r"<[^>]+>", "", str(m.value)) for m in at.markdown]
    parts += [c.value for c in at.caption] + [w.value for w in at.warning]
    parts += [e.value for e in at.error] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def assert_one_notice(at: AppTest, name: str, shown: dict[str, str]) -> None:
    """A bad link: the page is clean, says so once naming ``name``, and the link now holds
    the nearest valid values ``shown``."""
    assert_clean(at)
    assert len(notices(at)) == 1 and f"`{name}" in notices(at)[0]
    for key, value in shown.items():
        assert at.query_params[key] == value


def assert_clean(at: AppTest) -> None:
    """No exception element, and no nan/inf/traceback anywhere in the page's text."""
    assert not at.exception, [e.value for e in at.exception]
    found = BAD_TEXT.search(all_text(at))
    assert found is None, f"page shows {found.group(0)!r}"


@pytest.fixture
def page():
    return run_page


def run_async(coro):
    """asyncio.run in a thread of its own: a worker that has run a browser test holds
    Playwright's event loop in its main thread, where asyncio.run refuses to start."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
