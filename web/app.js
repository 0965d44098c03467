// The Mono tuning dashboard: a page over the server's JSON API (docs/dashboard.md).
// Routes: #/ (submissions and workers), #/submissions/ID (one submission). The current view
// is fetched again every 2 s while the tab is visible, so it follows a run live.
"use strict";

const REFRESH_MS = 2000;
const view = document.getElementById("view");
const overviewEl = document.getElementById("overview");
const liveEl = document.getElementById("live");
let contextFilter = "";  // the groups table's context filter, kept across refreshes

function esc(v) {
  return String(v ?? "").replace(/[&<>"']/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
}
function fmtUs(us, measured) {
  if (us === null || us === undefined) return "–";
  const text = us >= 1000 ? (us / 1000).toFixed(2) + " ms" : us.toFixed(us < 10 ? 2 : 1) + " µs";
  return measured === false ? `${text} <span class="est">est.</span>` : text;
}
function fmtTime(ms) {
  if (!ms) return "–";
  return new Date(ms).toLocaleString(undefined, {month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit"});
}
function fmtDuration(ms) {
  if (ms === null || ms === undefined) return "–";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + Math.round(s % 60) + " s";
  return (s / 3600).toFixed(1) + " h";
}
function fmtBytes(n) {
  if (n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return n.toFixed(i ? 1 : 0) + " " + units[i];
}
function fmtContext(c) {
  try {
    const o = JSON.parse(c);
    return `${o.threads} threads · ${o.blocks_per_sm} block${o.blocks_per_sm > 1 ? "s" : ""}/SM · ${Math.round(o.smem_bytes / 1024)} KiB smem · ${o.register_cap} regs`;
  } catch (e) {
    return c;
  }
}
function state(s) { return `<span class="state ${esc(s)}">${esc(s)}</span>`; }
function bar(done, total) {
  const pct = total > 0 ? Math.min(100, 100 * done / total) : 0;
  return `<span class="bar"><span style="width:${pct.toFixed(1)}%"></span></span>`;
}
function failures(obj) {
  const parts = Object.entries(obj || {}).map(([k, n]) => `${esc(k || "unknown")}: ${n}`);
  return parts.length ? `<span class="error">${parts.join(", ")}</span>` : `<span class="muted">none</span>`;
}

async function api(path) {
  const r = await fetch(path, {cache: "no-store"});
  const body = await r.json().catch(() => ({error: `HTTP ${r.status}`}));
  if (!r.ok) throw new Error(body.error || `HTTP ${r.status}`);
  return body;
}

// ---- the header line ----
async function renderOverview() {
  const o = await api("/api/overview");
  const jobs = o.jobs || {};
  let done = 0, failed = 0;
  for (const k of Object.keys(jobs)) { done += jobs[k].done || 0; failed += jobs[k].failed || 0; }
  overviewEl.innerHTML = `queue <b>${o.queue_depth}</b> · leased <b>${o.jobs_leased}</b> · done ${done} · failed ${failed}` +
    ` · workers <b>${o.workers_alive}</b>/${o.workers_total} alive · database ${fmtBytes(o.db_bytes)}`;
}

// ---- #/ ----
function workersTable(workers, perSubmission) {
  if (!workers.length) return `<p class="muted">No workers yet.</p>`;
  const rows = workers.map(w => `<tr>
      <td>${esc(w.name || w.id)}${perSubmission ? "" : (w.alive ? "" : ' <span class="muted">(not seen lately)</span>')}</td>
      <td>${esc(w.gpu || "")}${w.sm_arch ? ` <span class="muted">sm_${w.sm_arch}</span>` : ""}</td>
      ${perSubmission ? "" : `<td class="num">${w.gpus ?? ""}</td>`}
      <td class="num">${w.jobs_done}</td>
      ${perSubmission ? "" : `<td class="num">${w.jobs_leased}</td>`}
      <td class="num">${w.candidates}</td>
      <td>${failures(w.failures)}</td>
      ${perSubmission ? "" : `<td>${fmtTime(w.last_seen_ms)}</td>`}
    </tr>`).join("");
  return `<table id="workers"><thead><tr><th>worker</th><th>GPU</th>${perSubmission ? "" : '<th class="num">GPUs</th>'}
    <th class="num">jobs done</th>${perSubmission ? "" : '<th class="num">leased now</th>'}<th class="num">candidates</th>
    <th>failures</th>${perSubmission ? "" : "<th>last seen</th>"}</tr></thead><tbody>${rows}</tbody></table>`;
}

async function renderList() {
  const [subs, workers] = await Promise.all([api("/api/submissions"), api("/api/workers")]);
  const rows = subs.submissions.map(s => {
    const p = s.progress;
    const cands = s.dry_run ? `${p.candidates_compiled} compiled` : `${p.candidates_measured} measured`;
    return `<tr class="clickable submission" data-id="${esc(s.id)}">
      <td><a href="#/submissions/${encodeURIComponent(s.id)}">${esc(s.model)}</a><div class="muted mono">${esc(s.id)}</div></td>
      <td>${esc(s.gpu_kind)}${s.dry_run ? ' <span class="muted">(dry run)</span>' : ""}<div class="muted">${esc(s.precision)}</div></td>
      <td>${state(s.state)}${s.error ? `<div class="error">${esc(s.error)}</div>` : ""}</td>
      <td>${bar(p.groups_done, p.groups_total)}${p.groups_done}/${p.groups_total} groups<div class="muted">${cands}</div></td>
      <td>${fmtTime(s.submitted_at_ms)}</td>
      <td>${s.finished_at_ms ? fmtTime(s.finished_at_ms) : '<span class="muted">running</span>'}<div class="muted">${fmtDuration(s.elapsed_ms)}</div></td>
    </tr>`;
  }).join("");
  view.innerHTML = `<h1>Submissions</h1>
    ${subs.submissions.length ? `<table id="submissions"><thead><tr><th>model</th><th>GPU kind</th><th>state</th>
      <th>progress</th><th>submitted</th><th>finished</th></tr></thead><tbody>${rows}</tbody></table>`
      : `<p class="muted">No submissions yet: <code>mono-submit MODEL.onnx --server ADDR</code>.</p>`}
    <h2>Workers</h2>${workersTable(workers.workers, false)}`;
  for (const tr of view.querySelectorAll("tr.submission"))
    tr.addEventListener("click", () => { location.hash = "#/submissions/" + encodeURIComponent(tr.dataset.id); });
}

// ---- the progress plot: best whole-model latency and candidates against time ----
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
function plot(timeline, dryRun) {
  const pts = timeline.points || [];
  const W = 760, H = 280, L = 64, R = 64, T = 16, B = 36;
  const countKey = dryRun ? "compiled" : "measured";
  const tMax = niceMax(Math.max(1, ...pts.map(p => p.t_s), ...(timeline.whole_kernel || []).map(w => w.t_s)));
  const wholeUs = (timeline.whole_kernel || []).filter(w => w.ok && w.median_us).map(w => w.median_us);
  const uMax = niceMax(Math.max(...pts.map(p => p.best_us), ...wholeUs, 1));
  const cMax = niceMax(Math.max(1, ...pts.map(p => p[countKey])));
  const x = t => L + (W - L - R) * t / tMax;
  const yU = u => T + (H - T - B) * (1 - u / uMax);
  const yC = c => T + (H - T - B) * (1 - c / cMax);
  const step = (key, y) => pts.map((p, i) => (i ? "L" : "M") + x(p.t_s).toFixed(1) + "," + y(p[key]).toFixed(1)).join("");
  let grid = "";
  for (let i = 0; i <= 4; ++i) {
    const gy = T + (H - T - B) * i / 4;
    grid += `<line class="gridline" x1="${L}" x2="${W - R}" y1="${gy}" y2="${gy}"/>`;
    grid += `<text x="${L - 6}" y="${gy + 4}" text-anchor="end">${(uMax * (1 - i / 4)).toPrecision(3)}</text>`;
    grid += `<text x="${W - R + 6}" y="${gy + 4}">${Math.round(cMax * (1 - i / 4))}</text>`;
    const gx = L + (W - L - R) * i / 4;
    grid += `<text x="${gx}" y="${H - B + 16}" text-anchor="middle">${(tMax * i / 4).toPrecision(3)}</text>`;
  }
  const whole = (timeline.whole_kernel || []).filter(w => w.ok && w.median_us)
    .map(w => `<circle class="whole" cx="${x(w.t_s).toFixed(1)}" cy="${yU(w.median_us).toFixed(1)}" r="4"><title>whole kernel config ${w.config}: ${w.median_us.toFixed(1)} µs</title></circle>`).join("");
  return `<svg id="progress-plot" viewBox="0 0 ${W} ${H}" role="img" aria-label="tuning progress over time">
    ${grid}
    <line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/>
    <line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>
    <line class="axis" x1="${W - R}" x2="${W - R}" y1="${T}" y2="${H - B}"/>
    <text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">seconds since submitted</text>
    <text transform="translate(12 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">µs (whole model)</text>
    <text transform="translate(${W - 8} ${(T + H - B) / 2}) rotate(90)" text-anchor="middle">candidates ${countKey}</text>
    ${pts.length ? `<path class="count" d="${step(countKey, yC)}"/><path class="latency" d="${step("best_us", yU)}"/>` : ""}
    ${whole}
  </svg>
  <div class="legend"><span class="swatch" style="background:var(--accent)"></span>best whole-model latency (${esc(timeline.basis)})
    <span class="swatch" style="background:var(--warn)"></span>candidates ${countKey}
    ${wholeUs.length ? '<span class="swatch" style="background:var(--ok);height:8px;width:8px;border-radius:4px"></span>whole-kernel timings' : ""}</div>`;
}

function resultCard(d) {
  const r = d.result, s = d.submission;
  if (!r) {
    return `<section class="card" id="result"><h2>Result</h2><p class="muted">${s.state === "failed" ? "No artifact: the submission failed." : "No artifact yet."}</p></section>`;
  }
  let main;
  if (r.measured) {
    main = `<div class="big">${fmtUs(r.tuned_us, true)}</div>
      <dl class="kv"><dt>untuned default</dt><dd>${fmtUs(r.default_us, true)}</dd>
      <dt>speed-up over default</dt><dd>${r.speedup ? r.speedup.toFixed(2) + "×" : "–"}</dd>`;
  } else {
    main = `<div class="big">${fmtUs(r.estimated_total_us, false)}</div>
      <p class="muted">Dry run: nothing was measured on a GPU.</p>
      <dl class="kv"><dt>default (estimate)</dt><dd>${fmtUs(r.estimated_default_us, false)}</dd>`;
  }
  main += `<dt>groups tuned / default</dt><dd>${r.groups_tuned ?? "–"} / ${r.groups_default ?? "–"}</dd>
    <dt>database records used</dt><dd>${r.records}</dd><dt>artifact</dt><dd class="mono">${esc(r.artifact_dir)}</dd></dl>
    ${r.note ? `<p class="muted">${esc(r.note)}</p>` : ""}`;
  const base = (d.baselines || []).map(b => `<tr><td>${esc(b.name)}</td><td>${esc(b.gpu_kind)}</td><td class="num">${fmtUs(b.latency_us, true)}</td>
      <td class="num">${b.speedup_of_artifact ? b.speedup_of_artifact.toFixed(2) + "×" : "–"}</td><td class="muted">${esc(b.source)}</td></tr>`).join("");
  return `<section class="card" id="result"><h2>Result</h2>${main}
    <h2>Baselines</h2>${base ? `<table><thead><tr><th>tool</th><th>GPU kind</th><th class="num">latency</th><th class="num">artifact is faster by</th><th>source</th></tr></thead><tbody>${base}</tbody></table>`
      : '<p class="muted">None recorded for this model (POST /api/baselines).</p>'}</section>`;
}

function groupsTable(groups) {
  const contexts = [...new Set(groups.map(g => g.context))];
  if (contextFilter && !contexts.includes(contextFilter)) contextFilter = "";
  const shown = groups.filter(g => !contextFilter || g.context === contextFilter);
  const options = [`<option value="">all ${contexts.length} contexts</option>`]
    .concat(contexts.map(c => `<option value="${esc(c)}"${c === contextFilter ? " selected" : ""}>${esc(fmtContext(c))}</option>`)).join("");
  const rows = shown.map(g => `<tr class="group">
      <td class="mono">${esc(g.signature)}</td>
      <td>${esc(g.ops)}<div class="muted">${esc(g.kind)} · ${g.instances}× in the model${g.stale ? ` · <b class="stale-results" title="measured on the code of tuning version ${g.code_version}; this server generates other code: not reused">stale (code version ${g.code_version})</b>` : ""}</div></td>
      <td class="muted">${esc(fmtContext(g.context))}</td>
      <td>${state(g.state)}</td>
      <td class="num">${fmtUs(g.default_us, g.default_measured)}</td>
      <td class="num">${fmtUs(g.best_us, g.best_measured)}</td>
      <td class="num">${g.tried}/${g.candidates}</td>
      <td>${failures(g.failures)}</td></tr>`).join("");
  return `<div class="filters"><label>context <select id="context-filter">${options}</select></label>
    <span class="muted">${shown.length} of ${groups.length} tasks</span></div>
    <table id="groups"><thead><tr><th>signature</th><th>ops</th><th>context</th><th>state</th><th class="num">default</th>
    <th class="num">best</th><th class="num">tried</th><th>failures</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function renderSubmission(id) {
  const d = await api("/api/submissions/" + encodeURIComponent(id));
  const s = d.submission, p = s.progress;
  view.innerHTML = `<p><a href="#/">← all submissions</a></p>
    <h1>${esc(s.model)} ${state(s.state)}</h1>
    <div class="grid2">
      <section class="card" id="summary"><h2>Submission</h2><dl class="kv">
        <dt>id</dt><dd class="mono">${esc(s.id)}</dd>
        <dt>GPU kind</dt><dd>${esc(s.gpu_kind)}${s.dry_run ? " (dry run: compile-only, cost-model choices)" : ""}</dd>
        <dt>precision</dt><dd>${esc(s.precision)}</dd>
        <dt>groups</dt><dd>${bar(p.groups_done, p.groups_total)}${p.groups_done}/${p.groups_total} tasks done</dd>
        <dt>candidates</dt><dd>${p.candidates_measured} measured, ${p.candidates_compiled} compiled</dd>
        <dt>jobs</dt><dd>${p.jobs_total} (${p.jobs_pending} pending, ${p.jobs_failed} failed)</dd>
        <dt>submitted</dt><dd>${fmtTime(s.submitted_at_ms)}</dd>
        <dt>finished</dt><dd>${s.finished_at_ms ? fmtTime(s.finished_at_ms) : "–"} (${fmtDuration(s.elapsed_ms)})</dd>
        ${s.error ? `<dt>error</dt><dd class="error">${esc(s.error)}</dd>` : ""}
      </dl></section>
      ${resultCard(d)}
    </div>
    <section class="card plot" id="timeline"><h2>Tuning progress</h2>${plot(d.timeline, s.dry_run)}</section>
    <section class="card" id="group-section"><h2>Groups</h2>${groupsTable(d.groups)}</section>
    <section class="card"><h2>Workers on this submission</h2>${workersTable(d.workers, true)}</section>`;
  const select = document.getElementById("context-filter");
  select.addEventListener("change", () => { contextFilter = select.value; render(); });
}

// ---- routing and live refresh ----
let busy = false;
async function render() {
  if (busy) return;
  busy = true;
  try {
    const m = location.hash.match(/^#\/submissions\/([^/]+)/);
    await Promise.all([renderOverview(), m ? renderSubmission(decodeURIComponent(m[1])) : renderList()]);
    liveEl.classList.remove("stale");
    liveEl.textContent = "live · " + new Date().toLocaleTimeString();
    document.body.dataset.loaded = "1";
  } catch (e) {
    liveEl.classList.add("stale");
    liveEl.textContent = "cannot reach the server: " + e.message;
    if (!document.body.dataset.loaded) view.innerHTML = `<p class="error">${esc(e.message)}</p>`;
  } finally {
    busy = false;
  }
}
window.addEventListener("hashchange", () => { contextFilter = ""; render(); });
setInterval(() => { if (!document.hidden) render(); }, REFRESH_MS);
render();
