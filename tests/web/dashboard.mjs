// Drives the dashboard in headless Chromium (tests/web/dashboard_test.sh runs it).
//   node dashboard.mjs URL SUBMISSION_ID SCREENSHOT "SECOND SUBMIT COMMAND"
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";

const [url, submission, screenshot, secondCommand] = process.argv.slice(2);
const check = (ok, what) => {
  if (!ok) throw new Error("check failed: " + what);
  console.log("ok: " + what);
};

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", e => errors.push(e.message));
  page.on("console", m => { if (m.type() === "error") errors.push(m.text()); });

  // ---- signing in (a server with a token sends the browser to /login first) ----
  await page.goto(url);
  if (process.env.MONO_TOKEN) {
    check(page.url().endsWith("/login"), "without the token the browser is sent to the sign-in form");
    await page.fill('input[name="token"]', "wrong");
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    check((await page.content()).includes("Wrong token"), "a wrong token is refused");
    errors.length = 0;  // the refusal's 401 is expected: only later errors count
    await page.fill('input[name="token"]', process.env.MONO_TOKEN);
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    check(!page.url().endsWith("/login"), "signed in with the token");
  }

  // ---- the list ----
  await page.waitForSelector("#submissions tr.submission", { timeout: 15000 });
  const rows = await page.locator("#submissions tr.submission").count();
  check(rows === 1, `the list shows 1 submission (${rows})`);
  const row = page.locator(`#submissions tr.submission[data-id="${submission}"]`);
  const rowText = await row.innerText();
  check(rowText.includes("tiny-bert-opset20") && rowText.includes("done"), `the submission row names the model and its state: ${rowText.replace(/\s+/g, " ")}`);
  check(rowText.includes("16/16 groups"), "the row shows its progress (16/16 groups: tiny-bert's tuning tasks, attention parts are not tuned)");
  const workers = await page.locator("#workers tbody tr").innerText();
  check(workers.includes("cpu-1") && workers.includes("compile-only"), "the worker is listed");
  check((await page.locator("#overview").innerText()).includes("workers 1/1 alive"), "the header counts the live worker");

  // ---- live update: a submission started now appears without a reload ----
  const [cmd, ...args] = secondCommand.split(" ");
  const child = spawn(cmd, args, { stdio: "ignore" });
  const childDone = new Promise(resolve => child.on("exit", code => resolve(code)));
  await page.waitForFunction(() => document.querySelectorAll("#submissions tr.submission").length === 2, null, { timeout: 30000 });
  check(true, "a second submission appeared on the open page without a reload");
  check((await childDone) === 0, "the second submission finished");
  await page.waitForFunction(() => [...document.querySelectorAll("#submissions tr.submission")].every(r => r.innerText.includes("done")), null, { timeout: 30000 });
  check(true, "the page followed it to done");

  // ---- one submission ----
  await row.click();
  await page.waitForSelector("#groups tbody tr.group", { timeout: 15000 });
  check(page.url().endsWith("#/submissions/" + submission), "clicking the row opens the submission");
  const groups = await page.locator("#groups tbody tr.group").count();
  check(groups === 16, `the groups table has the 16 tasks (${groups})`);
  const firstGroup = await page.locator("#groups tbody tr.group").first().innerText();
  check(/[0-9a-f]{16}/.test(firstGroup) && firstGroup.includes("->"), `a group row shows its signature and ops: ${firstGroup.replace(/\s+/g, " ").slice(0, 120)}`);

  const path = await page.locator("#progress-plot path.latency").getAttribute("d");
  const vertices = (path.match(/[ML]/g) || []).length;
  check(vertices >= 10, `the progress plot is drawn (${vertices} points on the latency line)`);
  const box = await page.locator("#progress-plot").boundingBox();
  check(box && box.width > 300 && box.height > 100, `the plot has a size on screen (${Math.round(box.width)}x${Math.round(box.height)})`);
  check((await page.locator("#progress-plot path.count").count()) === 1, "the plot has the candidates line");

  const result = await page.locator("#result").innerText();
  check(result.includes("Dry run: nothing was measured"), "the result says nothing was measured");
  check(result.includes("torch.compile (test value)"), "the recorded baseline is shown");

  // The context filter narrows the table and survives the live refresh.
  const options = await page.locator("#context-filter option").count();
  if (options > 2) {
    await page.selectOption("#context-filter", { index: 1 });
    await page.waitForTimeout(2500);
    const filtered = await page.locator("#groups tbody tr.group").count();
    check(filtered < groups && filtered > 0, `the context filter keeps ${filtered} of ${groups} tasks across a refresh`);
    await page.selectOption("#context-filter", { index: 0 });
  }

  check(errors.length === 0, "no errors in the page's console: " + errors.join(" | "));
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log("saved " + screenshot);
} finally {
  await browser.close();
}
