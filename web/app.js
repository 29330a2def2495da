// ufno web front end: builds a prediction request from the form (or uploads a case file), calls
// the server's JSON API and draws SG and dP as r-z colour maps with a time slider, colour bars,
// the KPIs and a link to the result file. No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
let info = null;    // /api/info
let result = null;  // the last prediction

// Colour maps as evenly spaced stops (sRGB), interpolated linearly.
const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
                 [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
const INFERNO = [[0, 0, 4], [31, 12, 72], [85, 15, 109], [136, 34, 106], [186, 54, 85],
                 [227, 89, 51], [249, 140, 10], [249, 201, 50], [252, 255, 164]];

function colour(stops, q) {
  q = Math.min(1, Math.max(0, q)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(q)), f = q - i;
  return stops[i].map((c, k) => Math.round(c + f * (stops[i + 1][k] - c)));
}

function showError(msg) {
  const e = $("error");
  e.textContent = msg;
  e.hidden = !msg;
}

function setBusy(busy, text) {
  $("predict").disabled = busy;
  $("upload").disabled = busy;
  $("status").textContent = text || "";
}

function fmtTime(days) {
  return days < 365.25 ? `${days.toFixed(days < 10 ? 1 : 0)} days`
                       : `${(days / 365.25).toFixed(days < 3652.5 ? 1 : 0)} years`;
}

function fmtLength(m) {
  return m >= 1000 ? `${(m / 1000).toFixed(m >= 10000 ? 0 : 1)} km` : `${m.toFixed(0)} m`;
}

function num(id) {
  const v = $(id).value.trim();
  return v === "" ? undefined : Number(v);
}

function applySite(name) {
  const s = info.sites.find((x) => x.name === name);
  if (!s) return;
  $("site-info").textContent =
      `${s.layers} formation layers; perforated ${s.perf_top}-${s.perf_bottom}`;
  for (const k of ["rate_mt_per_year", "temperature_c", "pressure_bar", "swi", "vg_lambda"])
    $(k).value = Number(s[k].toPrecision(4));
  $("perf_top").value = s.perf_top;
  $("perf_bottom").value = s.perf_bottom;
  $("perf_top").max = $("perf_bottom").max = s.layers;
}

function request() {
  const r = {site: $("site").value, field: $("field").value};
  for (const k of ["rate_mt_per_year", "temperature_c", "pressure_bar", "swi", "vg_lambda",
                   "perf_top", "perf_bottom", "critical_dp_bar", "max_dp_limit_bar"])
    if (num(k) !== undefined) r[k] = num(k);
  if (r.field === "homogeneous")
    Object.assign(r, {perm_md: num("perm_md"), poro: num("poro"), anisotropy: num("anisotropy")});
  if (r.field === "geostat")
    r.geostat = {kgeo_md: num("kgeo_md"), sigma_lnk: num("sigma_lnk"),
                 corr_r_cells: num("corr_r_cells"), corr_z_cells: num("corr_z_cells"),
                 anisotropy: num("g_anisotropy"), poro_mean: num("poro_mean"),
                 structure: $("structure").value, seed: num("seed")};
  return r;
}

async function call(url, options) {
  setBusy(true, "predicting…");
  showError("");
  const t0 = performance.now();
  try {
    const res = await fetch(url, options);
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      throw new Error(`the server answered ${res.status} without a JSON body`);
    }
    if (!res.ok) throw new Error(body.error || `request failed (${res.status})`);
    result = body;
    render();
    setBusy(false, `done in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  } catch (e) {
    setBusy(false, "");
    showError(e.message);
  }
}

function draw(name, stops, label) {
  const f = result.fields[name];
  const g = result.grid, X = g.layers, Y = g.radial_cells, T = g.times;
  const t = Number($("time").value);
  const vals = f.values;
  // One colour scale for all times, so the slider shows growth rather than rescaling.
  let lo = 0, hi = 0;
  for (let i = 0; i < vals.length; i++) {
    if (!result.active[i % (X * Y)]) continue;
    lo = Math.min(lo, vals[i]);
    hi = Math.max(hi, vals[i]);
  }
  if (hi <= lo) hi = lo + 1;
  const c = $("map-" + name), ctx = c.getContext("2d");
  const L = 52, B = 34, W = c.width - L - 8, H = c.height - B - 6;
  ctx.clearRect(0, 0, c.width, c.height);
  const cw = W / Y, ch = H / X;
  for (let x = 0; x < X; x++)
    for (let y = 0; y < Y; y++) {
      const i = x * Y + y;
      const rgb = result.active[i] ? colour(stops, (vals[t * X * Y + i] - lo) / (hi - lo))
                                   : [215, 215, 215];
      ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
      ctx.fillRect(L + y * cw, 6 + x * ch, Math.ceil(cw), Math.ceil(ch));
    }
  // Perforated layers: a bar at the well.
  ctx.fillStyle = "#e00";
  result.perforated.forEach((p, x) => p && ctx.fillRect(L - 5, 6 + x * ch, 4, Math.ceil(ch)));
  // Axes: radius (log-spaced cells, so ticks at round radii) and depth below the top.
  ctx.fillStyle = "#333";
  ctx.strokeStyle = "#333";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textAlign = "center";
  const re = result.r_edges_m;
  for (const r of [10, 100, 1000, 10000, 100000]) {
    const j = re.findIndex((e) => e >= r);
    if (j <= 0) continue;
    const xpix = L + (j - 1 + (r - re[j - 1]) / (re[j] - re[j - 1])) * cw;
    ctx.beginPath();
    ctx.moveTo(xpix, 6 + H);
    ctx.lineTo(xpix, 10 + H);
    ctx.stroke();
    ctx.fillText(fmtLength(r), xpix, 21 + H);
  }
  ctx.fillText("radius from the well", L + W / 2, 32 + H);
  ctx.textAlign = "right";
  const ze = result.z_edges_m;
  const step = Math.max(1, Math.round(X / 6));
  for (let x = 0; x <= X; x += step) ctx.fillText(`${ze[x].toFixed(0)} m`, L - 8, 10 + x * ch);
  drawBar(name, stops, lo, hi, `${label} [${f.units === "1" ? "-" : f.units}]`);
}

function drawBar(name, stops, lo, hi, title) {
  const c = $("bar-" + name), ctx = c.getContext("2d");
  const top = 20, H = c.height - top - 40;
  ctx.clearRect(0, 0, c.width, c.height);
  for (let p = 0; p < H; p++) {
    const rgb = colour(stops, 1 - p / H);
    ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
    ctx.fillRect(4, top + p, 16, 1);
  }
  ctx.fillStyle = "#333";
  ctx.font = "11px system-ui, sans-serif";
  ctx.textAlign = "left";
  for (let k = 0; k <= 4; k++) {
    const v = hi - (k / 4) * (hi - lo);
    ctx.fillText(Math.abs(hi - lo) < 5 ? v.toFixed(2) : v.toFixed(0), 24, top + (k / 4) * H + 4);
  }
  ctx.fillText(title, 2, 12);
}

// A KPI's interval from the JSON's *_lo / *_hi (null where it has none), and whether it can be
// trusted for this input, in the service's words (docs/kpis.md, "Intervals").
function interval(lo, hi, fmt, note) {
  if (lo === null || lo === undefined || hi === null || hi === undefined) return "";
  return `; 90 % interval ${fmt(lo)} to ${fmt(hi)}` +
         (note && note.startsWith("this input lies beyond") ? ` (${note})` : "");
}

function kpiRows() {
  const k = result.kpis;
  if (!k) return [["(KPIs need both an SG and a dP model)", ""]];
  // With the SG model's plume-radius head the radius is its estimate; the map is the network's
  // field, whose gas may reach elsewhere (docs/kpis.md, "KPI heads").
  const rows = k.plume.map((p) => [
    `Plume radius / area at ${p.year} yr (SG > ${k.sg_threshold})`,
    `${fmtLength(p.plume_radius_m)} / ${p.plume_area_km2.toFixed(2)} km²` +
        (k.plume_source === "head"
             ? ` (estimated; the map's gas reaches ${fmtLength(p.plume_radius_field_m)})` : "") +
        (p.plume_capped ? " (capped: the field holds more CO₂ than was injected)" : "") +
        interval(p.plume_radius_m_lo, p.plume_radius_m_hi, fmtLength,
                 k.interval_notes.plume_radius_m)]);
  // With the dP model's maximum-dP head the value is its estimate; the place and time are where
  // the predicted field peaks (docs/kpis.md, "Maximum dP").
  const where = `${fmtLength(k.max_dp_radius_m)}, ${k.max_dp_depth_m.toFixed(0)} m depth, ` +
                `year ${k.max_dp_year.toFixed(1)}`;
  rows.push(["Maximum pressure buildup", k.max_dp_source === "head"
             ? `${k.max_dp_bar.toFixed(1)} bar (estimated near the well; the map peaks at ` +
               `${k.max_dp_field_bar.toFixed(1)} bar at ${where})` +
               interval(k.max_dp_bar_lo, k.max_dp_bar_hi, (v) => `${v.toFixed(1)} bar`,
                        k.interval_notes.max_dp_bar)
             : `${k.max_dp_bar.toFixed(1)} bar at ${where}`]);
  if (k.decision)
    rows.push([`Maximum dP against the limit of ${k.decision.threshold} bar`,
               `${k.decision.decision}: ${k.decision.says}`]);
  const aor = (r) => (r > 0 ? fmtLength(r) : "nowhere above");
  rows.push([`Area of review radius (dP > ${k.critical_dp_bar} bar)`,
             aor(k.aor_radius_m) + (k.aor_source === "head"
                  ? ` (estimated; the map: ${aor(k.aor_field_radius_m)})` : "") +
             interval(k.aor_radius_m_lo, k.aor_radius_m_hi, aor, k.interval_notes.aor_radius_m)]);
  // How far the input lies from the models' training data (docs/kpis.md).
  if (typeof k.training_percentile === "number")
    rows.push(["Distance from the training data",
               k.training_note ||
                   `farther than ${k.training_percentile.toFixed(0)} % of the models' ` +
                   "training cases; within the training data's ranges"]);
  rows.push(["CO₂ mass in the plume (last time, free gas)",
             `${k.co2_mass_mt.toFixed(2)} Mt of ${k.injected_mt.toFixed(2)} Mt injected ` +
             `(${(100 * k.mass_ratio).toFixed(0)} %` +
             (k.mass_source === "head"
                  ? `, estimated; the map's gas holds ${k.co2_mass_field_mt.toFixed(2)} Mt)` : ")") +
             interval(k.co2_mass_mt_lo, k.co2_mass_mt_hi, (v) => `${v.toFixed(2)} Mt`,
                      k.interval_notes.co2_mass_mt)]);
  return rows;
}

function render() {
  $("results").hidden = false;
  const T = result.grid.times;
  $("time").max = T - 1;
  if (Number($("time").value) > T - 1) $("time").value = T - 1;
  redraw();
  const table = $("kpis");
  table.innerHTML = "";
  for (const [name, value] of kpiRows()) {
    const tr = table.insertRow();
    tr.insertCell().textContent = name;
    const td = tr.insertCell();
    td.textContent = value;
    td.className = "num";
  }
  const w = $("warnings");
  w.innerHTML = "";
  for (const m of result.warnings || []) {
    const li = document.createElement("li");
    li.textContent = m;
    w.appendChild(li);
  }
  $("download").href = result.download;
  $("timing").textContent = `(${result.id}; batch of ${result.batch_size}, ` +
      `prediction ${result.predict_s.toFixed(2)} s)`;
}

function redraw() {
  const t = Number($("time").value);
  $("time-label").textContent = `${fmtTime(result.times_days[t])} (report ${t + 1} of ` +
                                `${result.grid.times})`;
  if (result.fields.SG) draw("SG", VIRIDIS, "SG");
  if (result.fields.dP) draw("dP", INFERNO, "dP");
}

async function init() {
  try {
    const res = await fetch("/api/info");
    info = await res.json();
  } catch (e) {
    showError("cannot reach the ufno server: " + e.message);
    return;
  }
  const g = info.grid;
  $("model-info").textContent = `${info.architecture} models ${info.models}; grid ` +
      `${g.layers} layers × ${g.radial_cells} radial cells × ${g.times} times`;
  for (const s of info.sites) $("site").add(new Option(s.name, s.name));
  applySite(info.sites[0].name);
  $("site").addEventListener("change", () => applySite($("site").value));
  $("field").addEventListener("change", () => {
    $("field-homogeneous").hidden = $("field").value !== "homogeneous";
    $("field-geostat").hidden = $("field").value !== "geostat";
  });
  $("time").addEventListener("input", () => result && redraw());
  $("case-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    call("/api/predict", {method: "POST", headers: {"Content-Type": "application/json"},
                          body: JSON.stringify(request())});
  });
  $("upload-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const file = $("case-file").files[0];
    if (!file) return showError("choose a case file first");
    const form = new FormData();
    form.append("case", file);
    form.append("critical_dp_bar", String(num("critical_dp_bar") ?? 10));
    call("/api/predict/upload", {method: "POST", body: form});
  });
  document.body.dataset.ready = "1";
}

const VERIFY_ROWS = {
  plume_radius_m: ["Plume radius", "m"], max_dP_bar: ["Maximum pressure buildup", "bar"],
  aor_radius_m: ["Area of review radius", "m"], co2_mass_Mt: ["CO₂ mass in the plume", "Mt"],
};

async function verify() {
  if (!result) return;
  $("verify").disabled = true;
  $("verify-status").textContent = "OPM Flow is running…";
  $("verify-table").innerHTML = "";
  try {
    const res = await fetch(`/api/verify/${result.id}`, {method: "POST"});
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || `request failed (${res.status})`);
    const table = $("verify-table");
    const head = table.insertRow();
    for (const h of ["indicator", "ufno", "OPM Flow", "error"]) head.insertCell().textContent = h;
    for (const k of body.kpis) {
      const base = Object.keys(VERIFY_ROWS).find((b) => k.kpi.startsWith(b));
      if (!base) continue;
      const tr = table.insertRow();
      const year = k.kpi.match(/_(\d+(?:\.\d+)?)yr$/);
      const [label, unit] = VERIFY_ROWS[base];
      tr.insertCell().textContent = label + (year ? ` at ${year[1]} yr` : "");
      for (const v of [k.ufno, k.flow]) {
        const td = tr.insertCell();
        td.textContent = `${v.toPrecision(4)} ${unit}`;
        td.className = "num";
      }
      const td = tr.insertCell();
      td.textContent = k.rel_error === null ? "–" : `${(100 * k.rel_error).toFixed(1)} %`;
      td.className = "num";
    }
    $("verify-status").textContent = `OPM Flow took ${body.flow_seconds.toFixed(1)} s`;
  } catch (e) {
    $("verify-status").textContent = "";
    showError(e.message);
  } finally {
    $("verify").disabled = false;
  }
}

$("verify").addEventListener("click", verify);
init();
