// Real-browser test of the page's screening sweep: starts ufno_server on a free port, drives
// Debian's chromium (headless) with playwright-core, fills the sweep form (a site, two parameter
// ranges, 3 scenarios, a threshold), runs it, sees the progress and the report link, opens the
// report, checks that a scenario count over the server's limit shows the server's message, and
// that the page raised no script or console error.
// Usage: node tests/sweep.test.mjs --server PATH/ufno_server [--screenshot OUT.png]
import { spawn } from "node:child_process";
import { chromium } from "playwright-core";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const serverExe = arg("--server");
const screenshot = arg("--screenshot", "");
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
let failures = 0, passes = 0;
const check = (name, ok, detail = "") => {
  console.log(`${ok ? "PASS" : "FAIL"} ${name}${ok ? "" : ": " + detail}`);
  ok ? passes++ : failures++;
};

function startServer() {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, OMPI_ALLOW_RUN_AS_ROOT: "1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: "1" };
    const p = spawn(serverExe, ["--port", "0", "--threads", "1", "--sweep-max-scenarios", "10"],
                    { env });
    let out = "";
    const timer = setTimeout(() => reject(new Error("server did not start: " + out)), 60000);
    p.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^ ]+)/);
      if (m) { clearTimeout(timer); resolve({ proc: p, url: m[1] }); }
    });
    p.stderr.on("data", (d) => (out += d));
    p.on("exit", (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

const server = await startServer();
const browser = await chromium.launch({
  executablePath: browserPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--no-first-run", "--disable-quic",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // Chromium logs every 4xx answer as a console error: the one expected (the over-limit form's
  // 422) is counted apart, every other failed request is an error.
  const failed = [];
  page.on("response", (r) => r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
  page.on("console", (m) => m.type() === "error" && !/Failed to load resource/.test(m.text()) &&
                            errors.push(m.text()));
  await page.goto(server.url + "/");
  await page.waitForSelector("body[data-sweep-ready='1']", { timeout: 30000 });
  const rows = await page.$$eval("#sweep-params tbody tr", (r) => r.map((x) => x.dataset.name));
  check("the sweep form lists the server's parameters", rows.includes("INJ_RATE") &&
        rows.includes("KGEO") && !rows.includes("BASE_CASE"), JSON.stringify(rows));
  check("the scenario count is bounded by the server's limit",
        (await page.getAttribute("#sweep-scenarios", "max")) === "10");

  // Over the limit: the server's message, naming the field, in the page; nothing runs.
  await page.fill("#sweep-scenarios", "11");
  await page.click("#sweep-run");
  await page.waitForSelector("#sweep-error:not([hidden])", { timeout: 30000 });
  const err = await page.textContent("#sweep-error");
  check("a count over the limit shows the server's message", /scenarios: .*from 1 to 10/.test(err),
        err);

  // A 3-scenario sweep of rate and the generated field's mean permeability.
  await page.selectOption("#sweep-site", "s1_i000087");
  await page.fill("#sweep-scenarios", "3");
  for (const name of rows) {
    const on = page.locator(`#sweep-params tr[data-name='${name}'] .on`);
    if (name === "INJ_RATE" || name === "KGEO") await on.check();
    else await on.uncheck();
  }
  await page.fill("#sweep-params tr[data-name='INJ_RATE'] .lo", "0.5");
  await page.fill("#sweep-params tr[data-name='INJ_RATE'] .hi", "1.5");
  await page.fill("#sweep-max_dP_bar", "80");
  await page.click("#sweep-run");
  await page.waitForSelector("#sweep-panel:not([hidden])", { timeout: 30000 });
  const firstStatus = await page.textContent("#sweep-status");
  check("the progress is shown", /sweep s\d+: .*(of 3 scenarios|done)/.test(firstStatus),
        firstStatus);
  check("the error from before is cleared", await page.isHidden("#sweep-error"));
  await page.waitForSelector("body[data-sweep='done']", { timeout: 240000 });
  const status = await page.textContent("#sweep-status");
  check("the sweep ends done with 3 scenarios", /done, 3 scenarios/.test(status), status);
  check("the progress bar is full",
        (await page.$eval("#sweep-progress", (p) => [p.value, p.max].join("/"))) === "3/3");
  const href = await page.getAttribute("#sweep-report", "href");
  check("the report link is shown", await page.isVisible("#sweep-report") &&
        /^\/api\/sweeps\/s\d+\/report\.html$/.test(href), href);
  check("the KPI table link is shown",
        /kpis\.csv$/.test(await page.getAttribute("#sweep-kpis", "href")));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  // The report opens from the link, in a tab of its own, with its charts.
  const [report] = await Promise.all([page.context().waitForEvent("page"),
                                      page.click("#sweep-report")]);
  await report.waitForLoadState("load");
  const charts = await report.$$eval("svg", (s) => s.length);
  const title = await report.title();
  check("the report opens with its charts", charts >= 3, `${title}: ${charts} charts`);
  check("the page raised no script or console errors", errors.length === 0, errors.join("; "));
  check("no request failed but the over-limit form (422)",
        failed.length === 1 && /^422 .*\/api\/sweeps$/.test(failed[0]), failed.join("; "));
} catch (e) {
  check("browser session", false, e.stack || String(e));
} finally {
  await browser.close();
  server.proc.kill("SIGTERM");
}
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
