// A Plotly chart that stays in the page and is updated in place (Plotly.react) when the
// script sends new numbers. st.plotly_chart mounts a new chart instead (its element id
// follows the figure), which costs the browser twice the drawing: benchmarks/plotly_redraw.py.

// plotly.js is published by plots.py under the app's static folder in two bundles, the basic
// one (bar, pie, scatter) and the full one for a figure with another trace type, beside this
// module (plots.MODULES: the charts are drawn only when both could be published), so it is
// found next to this module's own address, under any URL prefix.
function plotlyUrl(file) {
  return new URL(file, import.meta.url).href;
}

// One plotly.js per page: the basic bundle until a chart needs the full one, which then
// replaces it and draws every chart (it has the basic bundle's trace types too).
function loadPlotly(file) {
  const full = !/^plotly-basic-/.test(file);
  const have = window.__klrlPlotly;
  if (have && (have.full || !full)) return have.promise;
  const promise = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = plotlyUrl(file);
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => {
      if (window.__klrlPlotly?.promise === promise) window.__klrlPlotly = have;
      reject(new Error(script.src));
    };
    document.head.appendChild(script);
  });
  window.__klrlPlotly = { full, promise };
  return promise;
}

// Draw a figure into a chart div: the run's (below) and the instant driver's for a stop under
// the moving thumb (instant.js), one path for both.
function draw(chart, figure) {
  themeText(figure.layout, chart.klrlColor);
  // The config only when it is new to the chart: given one, Plotly.react copies the chart's
  // whole config and compares it with the new one at every redraw (README, performance).
  const config = chart.klrlConfig;
  const fresh = !chart._fullLayout || chart.klrlConfigDrawn !== config;
  return loadPlotly(chart.klrlPlotly).then(Plotly => {
    chart.querySelector(":scope > .klrl-chart-error")?.remove();
    return Plotly.react(chart, figure.data, figure.layout, fresh ? config : undefined);
  }).then(() => {
    chart.klrlConfigDrawn = config;
    chart.querySelectorAll("svg.main-svg").forEach(svg => svg.setAttribute("aria-hidden", "true"));
    window.klrlDrawnAt = performance.now();  // when the last chart was drawn (latency.py)
  });
}
window.klrlDrawChart = draw;

// Only a real change touches the page (a run that changes nothing changes nothing).
function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export default function ({ parentElement, data }) {
  let chart = parentElement.querySelector(":scope > .klrl-chart");
  if (!chart) {
    chart = document.createElement("div");
    chart.className = "klrl-chart";
    // Its width comes from the column, never from the drawn plot (which has a fixed width
    // until the next resize): otherwise a narrower window could not shrink it.
    chart.style.contain = "inline-size";
    chart.style.position = "relative";   // for the "computing…" note (instant.js)
    parentElement.appendChild(chart);
    // Follow the column's width (window resize, sidebar, phone rotation). An observer, not
    // Plotly's window listener, so nothing outlives the chart when the page changes.
    // Width 0 or no offsetParent: hidden or leaving the page, where Plotly refuses to resize.
    let width = 0;
    new ResizeObserver(([entry]) => {
      const w = Math.round(entry.contentRect.width);
      if (w > 0 && width > 0 && w !== width && chart.offsetParent !== null &&
          window.Plotly && chart._fullLayout) {
        window.Plotly.Plots.resize(chart).catch(() => {});  // hidden since: nothing to do
      }
      if (w > 0) width = w;
    }).observe(chart);
  }
  if (data.key) setAttr(chart, "data-klrl-key", data.key);
  // A figure with a text alternative; the drawing itself is hidden from assistive technology.
  setAttr(chart, "role", "figure");
  if (chart.klrlFigure === data.figure) return;  // called again with the same numbers
  // The thumb has moved on since this run began: the driver draws the stop under it.
  if (data.stop !== null && data.stop !== undefined && window.klrlThumbAway &&
      window.klrlThumbAway(data.key, data.stop)) return;
  setAttr(chart, "aria-label", data.alt || "chart");
  // The driver already drew this stop from the table of this setting (the same numbers,
  // computed by the same view function on the server): the run changes nothing on screen.
  // A run that moved the slider and another control at once (Reset) drew the stop from the
  // previous setting's table: its own figure is drawn.
  if (chart.klrlFromTable && chart.klrlSetting === data.setting &&
      data.stop !== null && data.stop !== undefined &&
      (chart.klrlStop === data.stop ||
       (typeof data.stop === "number" && Math.abs(chart.klrlStop - data.stop) <=
        1e-9 * Math.max(1, Math.abs(data.stop))))) {
    chart.klrlFigure = data.figure;
    chart.klrlFromTable = false;
    return;
  }
  chart.klrlFromTable = false;
  chart.klrlFigure = data.figure;
  chart.klrlStop = data.stop;
  chart.klrlRunDrawnAt = performance.now();   // instant.js: a table's later chart is not drawn over it
  if (chart.classList.contains("klrl-computing")) chart.classList.remove("klrl-computing");
  const figure = JSON.parse(data.figure);
  chart.klrlColor = getComputedStyle(parentElement).color;
  chart.klrlPlotly = data.plotly_js;
  watchTheme(chart, parentElement);
  // On a phone the modebar would sit on the legend; the chart stays zoomable by touch.
  // Kept as the same object while it is the same (draw() sends it only when it changes).
  const config = window.innerWidth < 640 ? { ...data.config, displayModeBar: false }
                                         : data.config;
  if (JSON.stringify(config) !== JSON.stringify(chart.klrlConfig)) chart.klrlConfig = config;
  if (chart.style.minHeight !== `${figure.layout.height}px`) {
    chart.style.minHeight = `${figure.layout.height}px`;
  }  // hold the space while plotly.js loads
  draw(chart, figure).catch(() => {
    chart.innerHTML = '<p class="klrl-chart-error">The chart could not be drawn: the ' +
      "charting library did not load. Reload the page to try again.</p>";
  });
}

// The reader may switch light/dark from the app's menu without a rerun: recolour the text.
function watchTheme(chart, parent) {
  if (chart.klrlThemeWatch) return;
  chart.klrlThemeWatch = setInterval(() => {
    if (!chart.isConnected) { clearInterval(chart.klrlThemeWatch); return; }
    const color = getComputedStyle(parent).color;
    if (color === chart.klrlColor || !chart._fullLayout || !window.Plotly) return;
    chart.klrlColor = color;
    const update = { "font.color": color };
    (chart.layout.annotations || []).forEach((_, i) => {
      update[`annotations[${i}].font.color`] = color;
    });
    window.Plotly.relayout(chart, update).catch(() => {});
  }, 500);
}

// Every text of the chart (ticks, titles, legend, notes) in the theme's text colour, so it
// keeps its contrast on the light and the dark background alike; lines and markers keep the
// chapter's colours.
function themeText(layout, color) {
  layout.font = { ...(layout.font || {}), color };
  for (const note of layout.annotations || []) note.font = { ...(note.font || {}), color };
}
