// Shared helpers: launch Debian's Chromium through playwright-core and watch a page.
// No browser is downloaded: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 and executablePath below.
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const CHROMIUM = process.env.LOGDOC_CHROMIUM || "/usr/bin/chromium";
export const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// A fresh browser with its own empty profile (cold cache), so that timings are first visits.
export async function launch() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "logdoc-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

// Record every request, block (and record) any that leaves `origin`, and collect console
// messages, page errors and dialogs, for the page and its workers.
export function watch(context, origin) {
  const log = { requests: [], blocked: [], console: [], errors: [], dialogs: [], csp: [] };
  context.route("**/*", (route) => {
    const url = route.request().url();
    log.requests.push(url);
    let ok = false;
    try {
      ok = new URL(url).origin === origin;
    } catch (_) {
      ok = false;
    }
    if (ok || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    log.blocked.push(url);
    return route.abort();
  });
  const onConsole = (where) => (msg) => {
    const text = msg.text();
    log.console.push({ where, type: msg.type(), text });
    if (/Content[- ]Security[- ]Policy|Refused to (load|execute|apply|connect|compile|create)/i.test(text)) {
      log.csp.push(text);
    }
  };
  const attach = (page) => {
    page.on("console", onConsole("page"));
    page.on("pageerror", (err) => log.errors.push(String(err && err.stack || err)));
    page.on("dialog", async (dialog) => {
      log.dialogs.push({ type: dialog.type(), message: dialog.message() });
      await dialog.dismiss().catch(() => {});
    });
    page.on("worker", (worker) => {
      if (typeof worker.on === "function") worker.on("console", onConsole("worker"));
    });
  };
  context.pages().forEach(attach);
  context.on("page", attach);
  return log;
}

export async function waitReady(page, timeout = 60000) {
  await page.waitForFunction(
    () => ["1", "failed"].includes(document.documentElement.dataset.ready),
    null, { timeout, polling: 20 },
  );
  const ready = await page.evaluate(() => document.documentElement.dataset.ready);
  if (ready !== "1") {
    const text = await page.evaluate(() =>
      `${document.getElementById("error-text").textContent}\n${document.getElementById("error-details").textContent}`);
    throw new Error(`the page failed to start: ${text}`);
  }
}

export async function waitWarm(page, timeout = 60000) {
  await page.waitForFunction(() => document.documentElement.dataset.warm, null, { timeout, polling: 20 });
}

// Click Explain and wait for the result; returns the page's own click-to-rendered time.
export async function explainAndWait(page, timeout = 120000) {
  await page.evaluate(() => { delete document.documentElement.dataset.state; });
  await page.click("#explain");
  await page.waitForFunction(
    () => ["done", "error"].includes(document.documentElement.dataset.state),
    null, { timeout, polling: 10 },
  );
  return page.evaluate(() => ({
    state: document.documentElement.dataset.state,
    explainMs: Number(document.documentElement.dataset.explainMs),
    pythonMs: Number(document.documentElement.dataset.pythonMs),
    diagnoses: (document.documentElement.dataset.diagnoses || "").split(" ").filter(Boolean),
    error: document.getElementById("error").hidden ? null : document.getElementById("error").innerText,
  }));
}
