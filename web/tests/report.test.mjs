// Real-browser test of the sweeps' screening report (report.html, docs/sweeps.md "Report"):
// opens reports in Debian's chromium (headless, playwright-core) from file:, offline, and checks
// that no console error occurs, nothing is fetched, every chart is a drawn SVG, the P10/P50/P90
// shown are those of kpis.csv (computed here), and the page prints.
// Usage: node tests/report.test.mjs --source REPO [--sweep PATH/ufno_sweep]
//                                   [--report FILE.html] [--screenshot OUT.png]
//   --source: make a synthetic sweep (python/tests/sweep_report_fixture.py: failed scenarios,
//     intervals, decisions, verification) and its report; with --sweep, also run a small real
//     sweep (the test models) whose report ufno_sweep writes; --report: check a report as it is.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const source = arg("--source");
const sweepExe = arg("--sweep");
const given = arg("--report");
const screenshot = arg("--screenshot");
const python = process.env.UFNO_PYTHON || "/usr/bin/python3";
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
let failures = 0, passes = 0;
const check = (name, ok, detail = "") => {
  console.log(`${ok ? "PASS" : "FAIL"} ${name}${ok ? "" : ": " + detail}`);
  ok ? passes++ : failures++;
};

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.status}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

// P10/P50/P90 of a column of kpis.csv over the ok scenarios (linear interpolation).
function quantilesOf(csvPath, column) {
  const lines = readFileSync(csvPath, "utf8").trim().split("\n");
  const header = lines[0].split(",");
  const c = header.indexOf(column);
  const v = lines.slice(1).map((l) => l.split(",")).filter((r) => r[1] === "ok")
    .map((r) => Number(r[c])).filter(Number.isFinite).sort((a, b) => a - b);
  return [10, 50, 90].map((q) => {
    const pos = (q / 100) * (v.length - 1), lo = Math.floor(pos), hi = Math.min(lo + 1, v.length - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
  });
}

const work = mkdtempSync(join(tmpdir(), "ufno_report_test_"));
const reports = [];  // [name, report path, kpis.csv or null, charts expected]
if (given) reports.push(["given", resolve(given), null, []]);
if (source) {
  const pydir = join(source, "python");
  const dir = join(work, "synthetic");
  run(python, [join(pydir, "tests", "sweep_report_fixture.py"), dir]);
  run(python, ["-m", "ufno.sweep_report", dir, "--config", join(dir, "sweep.json")],
      { PYTHONPATH: pydir });
  reports.push(["synthetic", join(dir, "report.html"), join(dir, "kpis.csv"),
                ["cdf-max_dP_bar", "cdf-plume_radius_m_30yr", "decisions", "tornado", "footprint",
                 "pressure", "verification"]]);
  if (sweepExe) {
    const data = join(source, "tests", "data");
    const cfg = {
      models: [join(data, "ufno_small.h5"), join(data, "fno_small.h5")],
      base_cases: [join(data, "sweep_base_case.h5")], sampling: "lhs", samples: 8, seed: 7,
      parameters: { INJ_RATE: { range: [0.3, 2.0] }, TEMP: { range: [40, 120] },
                    PERM_MULT: { range: [0.5, 2.0] } },
      kpi: { years: [1, 10, 30], critical_dp_bar: 5 }, decisions: { max_dP_bar: 5 },
      out: join(work, "sweep"),
    };
    writeFileSync(join(work, "sweep.json"), JSON.stringify(cfg));
    const out = run(sweepExe, ["--threads", "1", "--config", join(work, "sweep.json")],
                    { OMPI_ALLOW_RUN_AS_ROOT: "1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: "1" });
    check("ufno_sweep says where its report is", /report -> .*report\.html/.test(out), out);
    reports.push(["ufno_sweep", join(work, "sweep", "report.html"), join(work, "sweep", "kpis.csv"),
                  ["cdf-max_dP_bar", "decisions", "tornado", "footprint", "pressure"]]);
  }
}
if (!reports.length) throw new Error("nothing to check: give --source or --report");

const browser = await chromium.launch({
  executablePath: browserPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--no-first-run", "--disable-component-update",
         "--disable-sync"],
});
try {
  for (const [name, path, csv, expected] of reports) {
    const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
    const errors = [], fetched = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (!url.startsWith("file:")) { fetched.push(url); return route.abort(); }
      return route.continue();
    });
    await page.goto(pathToFileURL(path).href, { waitUntil: "load" });
    check(`${name}: no console error`, errors.length === 0, errors.join("; "));
    check(`${name}: nothing fetched from a network`, fetched.length === 0, fetched.join(" "));
    const charts = await page.$$eval("figure.chart", (figs) => figs.map((f) => {
      const s = f.querySelector("svg");
      const b = s ? s.getBoundingClientRect() : { width: 0, height: 0 };
      return { id: f.id, w: b.width, h: b.height,
               marks: s ? s.querySelectorAll("path, use, rect, polyline, line").length : 0 };
    }));
    check(`${name}: charts present`, charts.length > 0, "none");
    const blank = charts.filter((c) => !(c.w > 50 && c.h > 50 && c.marks > 5));
    check(`${name}: every chart is drawn`, blank.length === 0, JSON.stringify(blank));
    const ids = charts.map((c) => c.id.replace(/^chart-/, ""));
    const missing = expected.filter((e) => !ids.includes(e));
    check(`${name}: the expected charts`, missing.length === 0, `missing ${missing} of ${ids}`);
    if (csv) {
      const shown = await page.$$eval("#kpi-stats tr[data-kpi]", (rows) => rows.map((r) => [
        r.dataset.kpi, ["p10", "p50", "p90"].map((c) => Number(r.querySelector("td." + c).dataset.value)),
        r.querySelector("td.p50").textContent]));
      check(`${name}: a row of statistics per KPI`, shown.length >= 4, JSON.stringify(shown));
      for (const [kpi, values, text] of shown) {
        const want = quantilesOf(csv, kpi);
        const same = values.every((v, i) => (Number.isNaN(v) && Number.isNaN(want[i])) ||
                                           Math.abs(v - want[i]) <= 1e-9 * Math.max(1, Math.abs(want[i])));
        check(`${name}: ${kpi} P10/P50/P90 are kpis.csv's`, same, `${values} vs ${want}`);
        const readable = Number.isNaN(want[1]) || Math.abs(Number(text) - want[1]) <= 1e-3 * Math.abs(want[1]) + 1e-9;
        check(`${name}: ${kpi} P50 as printed`, readable, `${text} vs ${want[1]}`);
      }
    }
    await page.emulateMedia({ media: "print" });
    const pdf = await page.pdf({ format: "A4", printBackground: true });
    const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) || []).length;
    check(`${name}: prints (A4 PDF)`, pdf.length > 20000 && pages >= 2, `${pdf.length} bytes, ${pages} pages`);
    await page.emulateMedia({ media: "screen" });
    if (screenshot && (name === "given" || reports.length === 1 || name === "ufno_sweep")) {
      await page.setViewportSize({ width: 1000, height: 1400 });
      await page.screenshot({ path: screenshot, fullPage: false });
      console.log(`screenshot: ${screenshot}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
