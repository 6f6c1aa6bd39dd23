/* SPDX-License-Identifier: MIT
 * app.js - the web view's own script (served from the binary at /ui/assets/app.js): SVG plots
 * of a job (convergence, model vs measurement, per-parameter effect), live updates of running
 * jobs over Server-Sent Events, the jobs list refresh, copy buttons and sim traces for Perfetto.
 * No framework and nothing fetched from the internet: it talks only to this daemon's /v1 API.
 * Everything the pages show as tables is already there without it.
 */
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 560, H = 300, PAD = { l: 66, r: 14, t: 12, b: 38 };
  const PLOT_MAX = 20000;   /* trials the plots read, in pages of 1000 (the API's largest) */

  function el(name, attrs, parent, text) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmtUs(us) {
    if (!(us > 0)) return "-";
    return us >= 1000 ? (us / 1000).toPrecision(3) + " ms" : us.toPrecision(3) + " us";
  }
  async function getJSON(url, opts) {
    const r = await fetch(url, Object.assign({ headers: { Accept: "application/json" } }, opts || {}));
    const body = await r.json().catch(() => null);
    if (!r.ok) throw new Error((body && body.error && body.error.message) || r.status + " " + r.statusText);
    return body;
  }

  /* A linear or log scale mapping [lo, hi] onto [a, b]. */
  function scale(lo, hi, a, b, log) {
    if (log) { lo = Math.log10(lo); hi = Math.log10(hi); }
    if (hi <= lo) { hi = lo + 1; }
    const f = (v) => a + ((log ? Math.log10(v) : v) - lo) / (hi - lo) * (b - a);
    f.ticks = function () {
      const out = [];
      const linear = (a, b) => {
        const step = Math.pow(10, Math.floor(Math.log10((b - a) / 4 || 1)));
        const mult = (b - a) / step > 20 ? 5 : (b - a) / step > 8 ? 2 : 1;
        for (let v = Math.ceil(a / (step * mult)) * step * mult; v <= b + 1e-9; v += step * mult) out.push(v);
      };
      if (log) {
        for (let e = Math.floor(lo); e <= Math.ceil(hi); e++)
          for (const m of [1, 2, 5]) { const v = m * Math.pow(10, e); if (Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9) out.push(v); }
        if (out.length < 3) { out.length = 0; linear(Math.pow(10, lo), Math.pow(10, hi)); }
      } else {
        linear(lo, hi);
      }
      return out;
    };
    return f;
  }
  /* An empty SVG in host, named for screen readers by its figure's caption. */
  function plotSvg(host, w, h) {
    const cap = host.closest("figure") && host.closest("figure").querySelector("figcaption");
    host.textContent = "";
    return el("svg", { viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": cap ? cap.textContent : "plot" }, host);
  }
  function frame(host, xs, ys, xlabel, ylabel, xfmt, yfmt) {
    const svg = plotSvg(host, W, H);
    for (const t of ys.ticks()) {
      const y = ys(t);
      el("line", { class: "grid", x1: PAD.l, x2: W - PAD.r, y1: y, y2: y }, svg);
      el("text", { x: PAD.l - 6, y: y + 4, "text-anchor": "end" }, svg, yfmt(t));
    }
    for (const t of xs.ticks()) {
      const x = xs(t);
      el("text", { x: x, y: H - PAD.b + 15, "text-anchor": "middle" }, svg, xfmt(t));
    }
    el("line", { class: "axis", x1: PAD.l, x2: W - PAD.r, y1: H - PAD.b, y2: H - PAD.b }, svg);
    el("line", { class: "axis", x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: H - PAD.b }, svg);
    el("text", { x: (PAD.l + W - PAD.r) / 2, y: H - 4, "text-anchor": "middle" }, svg, xlabel);
    el("text", { x: 10, y: (PAD.t + H - PAD.b) / 2, transform: `rotate(-90 10 ${(PAD.t + H - PAD.b) / 2})`, "text-anchor": "middle" }, svg, ylabel);
    return svg;
  }
  function okTrials(trials) {
    return trials.filter((t) => t.status === "ok" && t.median_us > 0);
  }

  /* Best so far (line) and every trial (one dot each) against the trial number. */
  function plotConvergence(host, trials) {
    const ok = okTrials(trials);
    if (!ok.length) { host.textContent = "no successful trials yet"; return; }
    const n = Math.max(...trials.map((t) => t.seq));
    const lo = Math.min(...ok.map((t) => t.median_us)), hi = Math.max(...ok.map((t) => t.median_us));
    const log = hi / lo > 20;
    const xs = scale(1, Math.max(n, 2), PAD.l + 4, W - PAD.r - 4, false);
    const ys = scale(log ? lo / 1.1 : Math.max(0, lo - (hi - lo) * 0.05), hi * 1.05, H - PAD.b - 2, PAD.t, log);
    const svg = frame(host, xs, ys, "trial", "time", (v) => String(Math.round(v)), fmtUs);
    const g = el("g", { class: "trials" }, svg);
    let best = Infinity;
    const pts = [];
    for (const t of trials.slice().sort((a, b) => a.seq - b.seq)) {
      if (!(t.status === "ok" && t.median_us > 0)) continue;
      const c = el("circle", { class: "trial", cx: xs(t.seq).toFixed(1), cy: ys(t.median_us).toFixed(1), r: 3, "data-seq": t.seq }, g);
      el("title", {}, c, `#${t.seq}: ${fmtUs(t.median_us)}`);
      if (t.median_us < best) {
        if (pts.length) pts.push(`${xs(t.seq).toFixed(1)},${ys(best).toFixed(1)}`);
        best = t.median_us;
      }
      pts.push(`${xs(t.seq).toFixed(1)},${ys(best).toFixed(1)}`);
    }
    pts.push(`${xs(n).toFixed(1)},${ys(best).toFixed(1)}`);
    el("polyline", { class: "best", points: pts.join(" ") }, svg);
  }

  function ranks(v) {
    const idx = v.map((x, i) => i).sort((a, b) => v[a] - v[b]);
    const r = new Array(v.length);
    for (let i = 0; i < idx.length;) {
      let j = i;
      while (j + 1 < idx.length && v[idx[j + 1]] === v[idx[i]]) j++;
      for (let k = i; k <= j; k++) r[idx[k]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  }
  function spearman(a, b) {
    if (a.length < 3) return NaN;
    const ra = ranks(a), rb = ranks(b), n = a.length;
    const ma = ra.reduce((s, x) => s + x, 0) / n, mb = rb.reduce((s, x) => s + x, 0) / n;
    let sab = 0, saa = 0, sbb = 0;
    for (let i = 0; i < n; i++) { sab += (ra[i] - ma) * (rb[i] - mb); saa += (ra[i] - ma) ** 2; sbb += (rb[i] - mb) ** 2; }
    return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : NaN;
  }
  function quantile(sorted, q) {
    const p = (sorted.length - 1) * q, i = Math.floor(p);
    return i + 1 < sorted.length ? sorted[i] + (sorted[i + 1] - sorted[i]) * (p - i) : sorted[i];
  }

  /* Cost-model prediction (x) vs measurement (y), log-log, with y = x, the band in which the
   * middle 80 % of this job's measured/predicted ratios lie (or per-trial low/high bounds when
   * the model reports them) and Spearman's rank correlation. */
  function plotScatter(host, trials) {
    const ok = okTrials(trials).filter((t) => t.predicted_us > 0);
    if (ok.length < 2) { host.textContent = "needs two trials with a prediction"; return; }
    const all = ok.flatMap((t) => [t.median_us, t.predicted_us, t.low_us || t.predicted_us, t.high_us || t.predicted_us]);
    const lo = Math.min(...all) / 1.15, hi = Math.max(...all) * 1.15;
    const xs = scale(lo, hi, PAD.l + 2, W - PAD.r - 2, true);
    const ys = scale(lo, hi, H - PAD.b - 2, PAD.t, true);
    const svg = frame(host, xs, ys, "predicted (cost model)", "measured", fmtUs, fmtUs);
    const ratios = ok.map((t) => t.median_us / t.predicted_us).sort((a, b) => a - b);
    const r10 = quantile(ratios, 0.1), r90 = quantile(ratios, 0.9);
    const band = [[lo, lo * r10], [hi, hi * r10], [hi, hi * r90], [lo, lo * r90]]
      .map(([x, y]) => `${xs(x).toFixed(1)},${ys(Math.min(Math.max(y, lo), hi)).toFixed(1)}`).join(" ");
    el("polygon", { class: "band", points: band }, svg);
    el("line", { class: "ideal", x1: xs(lo), y1: ys(lo), x2: xs(hi), y2: ys(hi) }, svg);
    const g = el("g", { class: "points" }, svg);
    for (const t of ok) {
      if (t.low_us > 0 && t.high_us > 0)
        el("line", { class: "axis", x1: xs(t.low_us), x2: xs(t.high_us), y1: ys(t.median_us), y2: ys(t.median_us) }, g);
      const c = el("circle", { class: "trial", cx: xs(t.predicted_us).toFixed(1), cy: ys(t.median_us).toFixed(1), r: 3, "data-seq": t.seq }, g);
      el("title", {}, c, `#${t.seq}: predicted ${fmtUs(t.predicted_us)}, measured ${fmtUs(t.median_us)}`);
    }
    const rho = spearman(ok.map((t) => t.predicted_us), ok.map((t) => t.median_us));
    const txt = `Spearman ${isNaN(rho) ? "-" : rho.toFixed(3)} · band: measured/predicted ${r10.toFixed(2)}–${r90.toFixed(2)} (middle 80 %)`;
    el("text", { x: PAD.l + 6, y: PAD.t + 12, id: "spearman", "data-rho": isNaN(rho) ? "" : rho.toFixed(4) }, svg, txt);
  }

  /* For each tunable: the best time seen at each of its values, as horizontal bars. */
  function plotParams(host, trials) {
    const ok = okTrials(trials);
    if (!ok.length || !ok[0].config) { host.textContent = "no successful trials yet"; return; }
    const names = Object.keys(ok[0].config);
    const groups = names.map((name) => {
      const best = new Map();
      for (const t of ok) {
        const v = t.config[name];
        if (!best.has(v) || t.median_us < best.get(v)) best.set(v, t.median_us);
      }
      const vals = [...best.keys()].sort((a, b) => (typeof a === "number" && typeof b === "number") ? a - b : String(a).localeCompare(String(b)));
      return { name, vals, best };
    });
    const rows = groups.reduce((s, g) => s + g.vals.length + 1, 0);
    const rowH = 16, h = rows * rowH + 24, labelW = 150;
    const svg = plotSvg(host, W * 1.6, h);
    const worst = Math.max(...ok.map((t) => t.median_us)), overall = Math.min(...ok.map((t) => t.median_us));
    /* bars start a little left of the overall best, so differences of a few % show */
    const xs = scale(overall - (worst - overall) * 0.15 - overall * 0.005, worst, labelW, W * 1.6 - 90, false);
    let y = 14;
    for (const g of groups) {
      el("text", { x: 4, y: y, "font-weight": "600", class: "pname" }, svg, g.name);
      y += rowH;
      for (const v of g.vals) {
        const t = g.best.get(v);
        el("text", { x: labelW - 6, y: y - 3, "text-anchor": "end" }, svg, String(v));
        el("rect", { class: "bar" + (t === overall ? " top" : ""), x: labelW, y: y - 13, height: 11, width: Math.max(1, xs(t) - labelW).toFixed(1) }, svg);
        el("text", { x: xs(t) + 4, y: y - 3 }, svg, fmtUs(t));
        y += rowH;
      }
    }
  }

  /* Simulator trace of the best config, for Perfetto (only for sim jobs). */
  function traceButton(job) {
    const host = document.getElementById("trace");
    if (!host || host.firstChild || !document.getElementById("best-args") || job.dataset.backend !== "sim") return;
    const btn = document.createElement("button");
    btn.type = "button";
    btn.textContent = "simulator trace of the best config (Perfetto)";
    host.appendChild(btn);
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      try {
        const cfg = {};
        for (const part of document.getElementById("best-args").textContent.trim().split(/\s+/)) {
          const m = /^--([^=]+)=(.*)$/.exec(part);
          if (m) cfg[m[1]] = isNaN(Number(m[2])) ? m[2] : Number(m[2]);
        }
        const ans = await getJSON("/v1/simulate", { method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ template: job.dataset.template, target: job.dataset.target, problem: job.dataset.problem, config: cfg, trace: true }) });
        const blob = new Blob([JSON.stringify(ans.trace)], { type: "application/json" });
        const url = URL.createObjectURL(blob);
        const a = document.createElement("a");
        a.href = url;
        a.download = `tiletune-job${job.dataset.job}-trace.json`;
        a.textContent = "download the trace (Chrome JSON)";
        const open = document.createElement("a");
        open.href = "https://ui.perfetto.dev/";
        open.textContent = "open it in Perfetto";
        open.addEventListener("click", (ev) => {
          ev.preventDefault();
          const win = window.open("https://ui.perfetto.dev/#!/");
          const buf = new TextEncoder().encode(JSON.stringify(ans.trace)).buffer;
          const ping = setInterval(() => win && win.postMessage("PING", "https://ui.perfetto.dev"), 100);
          window.addEventListener("message", function onPong(e) {
            if (e.data !== "PONG") return;
            clearInterval(ping);
            window.removeEventListener("message", onPong);
            win.postMessage({ perfetto: { buffer: buf, title: a.download } }, "https://ui.perfetto.dev");
          });
        });
        host.append(" ", a, " · ", open, " (the trace is a model of the chip: the simulator's)");
      } catch (e) {
        host.append(" " + e.message);
      }
    });
  }

  /* Append the trials after those in have (the API lists them by seq), up to PLOT_MAX.
   * Returns the job's total. */
  async function moreTrials(id, have) {
    for (;;) {
      const page = await getJSON(`/v1/jobs/${id}/trials?offset=${have.length}&limit=1000`);
      const got = page.trials || [];
      for (const t of got) if (have.length < PLOT_MAX) have.push(t);
      if (got.length < 1000 || have.length >= page.total || have.length >= PLOT_MAX) return page.total;
    }
  }
  /* The server's own rendering of the summary, best config and trial table, swapped in. */
  async function swapTables(id) {
    const r = await fetch(`/ui/jobs/${id}`);
    if (!r.ok) return;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    for (const part of ["summary", "best", "trial-list"]) {
      const now = document.getElementById(part), fresh = doc.getElementById(part);
      if (now && fresh) now.replaceWith(document.adoptNode(fresh));
    }
  }
  function plotNote(job, shown, total) {
    let p = document.getElementById("plot-note");
    if (!p) {
      p = document.createElement("p");
      p.id = "plot-note";
      p.className = "note";
      job.querySelector("section.plots").before(p);
    }
    p.hidden = shown >= total;
    p.textContent = `The plots show the first ${shown} of ${total} trials.`;
  }

  async function jobPage() {
    const job = document.getElementById("job");
    if (!job) return;
    const id = job.dataset.job;
    const trials = [];
    let updates = 0, shown = `${job.dataset.state} ${document.getElementById("progress").textContent}`;
    async function refresh() {
      const j = await getJSON(`/v1/jobs/${id}`);
      const total = await moreTrials(id, trials);
      plotConvergence(document.getElementById("plot-convergence"), trials);
      plotScatter(document.getElementById("plot-scatter"), trials);
      plotParams(document.getElementById("plot-params"), trials);
      plotNote(job, trials.length, total);
      const now = `${j.state} ${j.progress.done}/${j.progress.planned}`;
      if (now !== shown) {
        await swapTables(id);
        shown = now;
        traceButton(job);
      }
      job.dataset.state = j.state;
      job.dataset.points = String(okTrials(trials).length);
      job.dataset.updates = String(++updates);
      return j;
    }
    traceButton(job);
    const j = await refresh().catch((e) => { job.dataset.error = e.message; });
    if (!j || !(j.state === "queued" || j.state === "running")) return;
    /* one refresh at a time (each appends to trials), at most one waiting */
    let chain = Promise.resolve(), pending = false;
    const queue = () => { chain = chain.then(refresh).catch(() => {}); };
    const kick = () => {
      if (pending) return;
      pending = true;
      setTimeout(() => { pending = false; queue(); }, 250);
    };
    const es = new EventSource(`/v1/jobs/${id}/events`);
    es.addEventListener("progress", kick);
    es.addEventListener("end", () => { es.close(); queue(); });
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) queue(); };
  }

  /* The jobs list: its page (?offset=) re-rendered from GET /v1/jobs every 2 s while the tab
   * is visible, and at once when it is shown again (rows keep the server's layout).  A tab left open in the
   * background polled the daemon for ever. */
  function jobsPage() {
    const table = document.getElementById("jobs");
    if (!table) return;
    const esc = (s) => String(s === null || s === undefined ? "-" : s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
    const age = (t) => {
      const a = Date.now() / 1000 - t;
      return !(t > 0) ? "-" : a < 120 ? `${Math.max(0, a).toFixed(0)} s` : a < 7200 ? `${(a / 60).toFixed(0)} min` : a < 172800 ? `${(a / 3600).toFixed(0)} h` : `${(a / 86400).toFixed(0)} d`;
    };
    const PAGE = 100, offset = Number(table.dataset.offset) || 0;   /* the page the server gave */
    let ticks = 0;
    const tick = async () => {
      if (document.hidden) return;
      try {
        const out = await getJSON(`/v1/jobs?limit=${PAGE + 1}&offset=${offset}`);
        const body = out.jobs.slice(0, PAGE).map((j) => `<tr data-job="${j.id}"><td><a href="/ui/jobs/${j.id}">${j.id}</a></td>` +
          `<td><span class="state ${esc(j.state)}">${esc(j.state)}</span></td><td>${esc(j.template && j.template.name)}</td>` +
          `<td class="shape">${esc(j.problem_key)}</td><td>${esc(j.target)}</td><td>${esc(j.backend_fp)}</td>` +
          `<td>${esc(j.strategy)}</td><td>${j.progress.done}/${j.progress.planned}</td>` +
          `<td>${esc(j.best ? fmtUs(j.best.measured_us) : "-")}</td><td>${age(j.timings && j.timings.created_at)}</td></tr>`).join("");
        table.tBodies[0].innerHTML = body;
        const empty = document.getElementById("jobs-empty");
        if (empty) empty.hidden = out.jobs.length > 0;
        const older = document.getElementById("jobs-older");
        if (older) older.hidden = out.jobs.length <= PAGE;
        table.dataset.refreshed = String(++ticks);
      } catch (e) { /* keep the last table */ }
    };
    setInterval(tick, 2000);
    document.addEventListener("visibilitychange", tick);
  }

  /* Copy a node's text: the clipboard API where the page may use it (a secure context, the
   * document focused), else the text selected and the browser's copy command; when neither
   * works the text stays selected for Ctrl+C, and the button says so. */
  function copyText(btn, node) {
    const say = (t) => { btn.textContent = t; setTimeout(() => { btn.textContent = "copy"; }, 2000); };
    const fallback = () => {
      const range = document.createRange();
      range.selectNodeContents(node);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      say(ok ? "copied" : "selected: press Ctrl+C");
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(node.textContent).then(() => say("copied"), fallback);
    else fallback();
  }
  document.addEventListener("click", (ev) => {
    const id = ev.target && ev.target.dataset && ev.target.dataset.copy;
    const node = id && document.getElementById(id);
    if (node) copyText(ev.target, node);
  });
  jobPage();
  jobsPage();
})();
