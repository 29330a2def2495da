// ufno web front end, the screening sweep: builds the sweep form from /api/info (sites, the
// parameters a sweep may vary, the server's scenario limit), starts the sweep (POST /api/sweeps),
// polls its status for the progress bar, and ends in links to its report and KPI table. A sweep
// already running when the page opens is followed as well; one can be cancelled.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  // Label and default range of each parameter (those of configs/sweep-site-screening.json, inside
  // the default models' training ranges); checked: varied by default.
  const PARAMETERS = {
    INJ_RATE: ["Rate (Mt/yr)", 0.3, 2.0, true],
    TEMP: ["Temperature (°C)", 40, 120, true],
    PRESSURE: ["Initial pressure (bar)", 120, 280, true],
    SWI: ["Swi", 0.1, 0.3, false],
    VG_LAMBDA: ["van Genuchten λ", 0.3, 0.7, false],
    PERF_TOP: ["Perforation top (layer)", 1, 1, false],
    PERF_BOTTOM: ["Perforation bottom (layer)", 1, 1, false],
    PERM_MULT: ["Permeability × (site's field)", 0.5, 2.0, false],
    PORO_MULT: ["Porosity × (site's field)", 0.8, 1.2, false],
    KGEO: ["Generated field: kr mean (mD)", 20, 800, true],
    SIGMA_LNK: ["Generated field: σ of ln k", 0.3, 1.2, false],
    CORR_R: ["Generated field: radial corr. (cells)", 4, 24, false],
    CORR_Z: ["Generated field: vertical corr. (layers)", 0.5, 3, false],
    ANISOTROPY: ["Generated field: kz/kr", 0.02, 0.5, false],
    PORO_MEAN: ["Generated field: mean porosity", 0.12, 0.25, false],
  };
  const THRESHOLDS = ["max_dP_bar", "plume_radius_m_30yr", "aor_radius_m"];
  let sites = [], polling = null, current = null;

  const value = (input) => (input.value.trim() === "" ? undefined : Number(input.value));

  function showError(msg) {
    $("sweep-error").textContent = msg;
    $("sweep-error").hidden = !msg;
  }

  // The perforation rows follow the site's formation layers.
  function applySite() {
    const s = sites.find((x) => x.name === $("sweep-site").value);
    if (!s) return;
    const set = (name, lo, hi) => {
      const row = document.querySelector(`#sweep-params tr[data-name='${name}']`);
      if (!row) return;
      row.querySelector(".lo").value = lo;
      row.querySelector(".hi").value = hi;
    };
    set("PERF_TOP", 1, s.perf_top);
    set("PERF_BOTTOM", s.perf_bottom, s.layers);
  }

  function buildForm(info) {
    sites = info.sites;
    for (const s of sites) $("sweep-site").add(new Option(s.name, s.name));
    $("sweep-site").addEventListener("change", applySite);
    const sw = info.sweep;
    $("sweep-scenarios").max = sw.max_scenarios;
    $("sweep-scenarios").value = Math.min(20, sw.max_scenarios);
    $("sweep-scenarios").title = `at most ${sw.max_scenarios} (the server's limit)`;
    const body = document.querySelector("#sweep-params tbody");
    for (const name of sw.parameters) {
      const [label, lo, hi, on] = PARAMETERS[name] || [name, 0, 0, false];
      const tr = body.insertRow();
      tr.dataset.name = name;
      tr.insertCell().innerHTML = `<input type="checkbox" class="on"${on ? " checked" : ""}>`;
      tr.insertCell().textContent = label;
      tr.insertCell().innerHTML = `<input type="number" step="any" class="lo" value="${lo}">`;
      tr.insertCell().innerHTML = `<input type="number" step="any" class="hi" value="${hi}">`;
      tr.querySelector(".on").setAttribute("aria-label", `vary ${name}`);
    }
    applySite();
    if (!sw.available) {
      $("sweep-run").disabled = true;
      showError("sweeps are not available on this server (no ufno_sweep program)");
    }
  }

  function request() {
    const r = {site: $("sweep-site").value, scenarios: value($("sweep-scenarios")),
               seed: value($("sweep-seed")), parameters: {}, decisions: {}};
    for (const tr of document.querySelectorAll("#sweep-params tbody tr"))
      if (tr.querySelector(".on").checked)
        r.parameters[tr.dataset.name] = [value(tr.querySelector(".lo")),
                                         value(tr.querySelector(".hi"))];
    const critical = value($("sweep-critical_dp_bar"));
    if (critical !== undefined) r.critical_dp_bar = critical;
    for (const k of THRESHOLDS) {
      const v = value($("sweep-" + k));
      if (v !== undefined) r.decisions[k] = v;
    }
    return r;
  }

  function show(s) {
    $("sweep-panel").hidden = false;
    $("sweep-progress").max = Math.max(1, s.scenarios);
    $("sweep-progress").value = s.done;
    const running = s.status === "running";
    $("sweep-run").disabled = running;
    $("sweep-cancel").hidden = !running;
    const t = `${s.elapsed_s.toFixed(0)} s`;
    const text = {
      running: `sweep ${s.id}: ${s.stage}, ${s.done} of ${s.scenarios} scenarios (${t})`,
      done: `sweep ${s.id}: done, ${s.scenarios} scenarios in ${t}` +
            (s.failed_scenarios ? ` (${s.failed_scenarios} failed)` : ""),
      cancelled: `sweep ${s.id}: cancelled; its results were removed`,
      failed: `sweep ${s.id}: failed`,
    }[s.status] || `sweep ${s.id}: ${s.status}`;
    $("sweep-status").textContent = text;
    $("sweep-links").hidden = !(s.status === "done");
    if (s.status === "done") {
      $("sweep-kpis").href = s.kpis;
      $("sweep-report").hidden = !s.report;
      if (s.report) $("sweep-report").href = s.report;
    }
    if (s.status === "failed" || (s.status === "done" && !s.report)) showError(s.error || "");
    document.body.dataset.sweep = s.status;
  }

  async function poll() {
    polling = null;
    try {
      const res = await fetch(`/api/sweeps/${current}`);
      const s = await res.json();
      if (!res.ok) throw new Error(s.error || `request failed (${res.status})`);
      show(s);
      if (s.status === "running") polling = setTimeout(poll, 500);
    } catch (e) {
      showError(e.message);
      $("sweep-run").disabled = false;
    }
  }

  function follow(id) {
    current = id;
    if (polling) clearTimeout(polling);
    poll();
  }

  async function start(ev) {
    ev.preventDefault();
    showError("");
    $("sweep-run").disabled = true;
    try {
      const res = await fetch("/api/sweeps", {method: "POST",
                                              headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify(request())});
      const body = await res.json();
      if (!res.ok) throw new Error(body.error || `request failed (${res.status})`);
      show(body);
      follow(body.id);
    } catch (e) {
      showError(e.message);
      $("sweep-run").disabled = false;
    }
  }

  async function cancel() {
    if (!current) return;
    $("sweep-cancel").disabled = true;
    try {
      const res = await fetch(`/api/sweeps/${current}/cancel`, {method: "POST"});
      const body = await res.json();
      if (!res.ok) throw new Error(body.error || `request failed (${res.status})`);
      if (polling) clearTimeout(polling);
      polling = null;
      show(body);
    } catch (e) {
      showError(e.message);
    } finally {
      $("sweep-cancel").disabled = false;
    }
  }

  async function init() {
    let info;
    try {
      info = await (await fetch("/api/info")).json();
    } catch (e) {
      return;  // the prediction form reports the unreachable server
    }
    buildForm(info);
    $("sweep-form").addEventListener("submit", start);
    $("sweep-cancel").addEventListener("click", cancel);
    if (info.sweep.running) follow(info.sweep.running);
    document.body.dataset.sweepReady = "1";
  }

  init();
})();
