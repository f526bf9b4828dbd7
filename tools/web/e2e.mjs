// End-to-end check of the built page in headless Debian Chromium (used by tests/web).
//
//   node tools/web/e2e.mjs --url http://127.0.0.1:PORT/ --out DIR [--paste FILE] [--files F1,F2,...]
//
// Runs these scenarios in one cold browser and prints one JSON object on stdout:
//   paste:  paste FILE into the text area, Explain, screenshot (light, laptop size)
//   files:  add F1,F2,... with the file picker (one per rank), Explain, screenshots in dark
//           mode and at phone size
//           and of the log viewer opened from an evidence line; the picture of the failure
//   binary: a binary file alone gets a clear message
//   copy:   "copy as Markdown", plain and redacted, read back from the clipboard
//   example: "Try an example" at phone size: explained, result scrolled into view, screenshots
//   xss:    a log full of <script> / <img onerror> payloads must not execute anything
// Every request is recorded; any request outside the page's origin is blocked and reported.
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { launch, watch, waitReady, waitWarm, explainAndWait } from "./chromium.mjs";

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  return out;
}

// Payloads inside lines that logdoc quotes (a Python exception and a Gloo error, so they reach
// the title, the explanation and the evidence), and in a file name.
const XSS = [
  `[rank0]: Traceback (most recent call last):`,
  `[rank0]:   File "/x/train.py", line 3, in <module>`,
  `[rank0]: RuntimeError: <script>window.__pwned="script";alert("script")</script><img src=x onerror="window.__pwned='img';alert('img')"><svg onload="window.__pwned='svg'"></svg>`,
  `[rank0]: "><iframe src="javascript:window.__pwned='iframe'"></iframe><a href="javascript:window.__pwned='href'">x</a><b onmouseover=alert(1)>bold</b>`,
].join("\n") + "\n";
const XSS_FILE = {
  name: `<img src=x onerror="window.__pwned='filename'">.log`,
  mimeType: "text/plain",
  buffer: Buffer.from(
    `RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.1.2.3]:51618 <img src=x onerror="window.__pwned='gloo'"><script>window.__pwned='gloo-script'</script>\n`,
  ),
};

async function main() {
  const a = args();
  const url = a.url;
  const outDir = a.out;
  fs.mkdirSync(outDir, { recursive: true });
  const origin = new URL(url).origin;
  const result = { url, scenarios: {} };
  const browser = await launch();
  const log = watch(browser.context, origin);
  try {
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    const page = await browser.context.newPage();
    const t0 = Date.now();
    await page.goto(url);
    await waitReady(page);
    result.readyMs = await page.evaluate(() => {
      const m = performance.getEntriesByName("logdoc:ready")[0];
      return m ? Math.round(m.startTime) : null;
    });
    result.readyWallMs = Date.now() - t0;
    result.csp = await page.evaluate(
      () => document.querySelector('meta[http-equiv="Content-Security-Policy"]').content,
    );
    await waitWarm(page);

    if (a.paste) {
      const text = fs.readFileSync(a.paste, "utf-8");
      await page.fill("#log", text);
      const r = await explainAndWait(page);
      r.reportText = await page.locator("#report").innerText();
      r.evidenceCount = await page.locator("#report .ev").count();
      r.marks = await page.locator("#report mark").allInnerTexts();
      const shot = path.join(outDir, "paste-light-1280.png");
      await page.screenshot({ path: shot, fullPage: true });
      r.screenshot = shot;
      result.scenarios.paste = r;

      // copy as Markdown, plain then redacted
      const copy = {};
      await page.click("#copy");
      await page.waitForFunction(() => document.documentElement.dataset.copied === "plain", null, { timeout: 30000 });
      copy.plain = await page.evaluate(() => navigator.clipboard.readText());
      await page.check("#redact");
      await page.click("#copy");
      await page.waitForFunction(() => document.documentElement.dataset.copied === "redacted", null, { timeout: 60000 });
      copy.redacted = await page.evaluate(() => navigator.clipboard.readText());
      copy.status = await page.locator("#copy-status").innerText();
      await page.uncheck("#redact");
      result.scenarios.copy = copy;
    }

    if (a.files) {
      const files = a.files.split(",").filter(Boolean);
      await page.click("#clear");
      await page.setInputFiles("#picker", files);
      const chips = await page.locator("#files .file").count();
      const r = await explainAndWait(page);
      r.chips = chips;
      r.reportText = await page.locator("#report").innerText();
      // open the folded symptoms for the screenshots
      await page.evaluate(() => document.querySelectorAll("details.symptoms").forEach((d) => { d.open = true; }));
      const shots = [];
      await page.emulateMedia({ colorScheme: "dark" });
      shots.push(path.join(outDir, "files-dark-1280.png"));
      await page.screenshot({ path: shots.at(-1), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      shots.push(path.join(outDir, "files-dark-390.png"));
      await page.screenshot({ path: shots.at(-1), fullPage: true });
      await page.emulateMedia({ colorScheme: "light" });
      shots.push(path.join(outDir, "files-light-390.png"));
      await page.screenshot({ path: shots.at(-1), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      r.screenshots = shots;
      // the picture of the failure (inline SVG), one strip per row
      r.picture = await page.evaluate(() => ({
        strips: document.querySelectorAll("#picture svg.tl-strip").length,
        labels: Array.from(document.querySelectorAll("#picture .tl-label")).map((e) => e.textContent),
        firstMarks: document.querySelectorAll("#picture .tl-mark.first").length,
        firstText: (document.querySelector("#picture .tl-first") || {}).textContent || null,
      }));
      // evidence in line order, and a click opens the log at that line, highlighted
      r.evidenceOrder = await page.evaluate(() => Array.from(document.querySelectorAll("#report article"))
        .map((a) => Array.from(a.querySelectorAll(":scope > .block .ev-loc")).map((e) => e.textContent)));
      const loc = page.locator("#report button.ev-loc").first();
      r.viewer = { clicked: await loc.innerText() };
      await loc.click();
      await page.waitForFunction(() => document.documentElement.dataset.viewer, null, { timeout: 10000 });
      Object.assign(r.viewer, await page.evaluate(() => {
        const hit = document.querySelector("#viewer .vl.hit");
        const box = hit.getBoundingClientRect();
        const pane = document.getElementById("viewer-lines").getBoundingClientRect();
        return {
          open: document.getElementById("viewer").open,
          title: document.getElementById("viewer-title").textContent,
          line: Number(hit.dataset.line),
          text: hit.querySelector(".vt").textContent,
          inView: box.top >= pane.top && box.bottom <= pane.bottom,
        };
      }));
      shots.push(path.join(outDir, "viewer-light-1280.png"));
      await page.screenshot({ path: shots.at(-1) });
      await page.keyboard.press("Escape");
      r.viewer.closed = await page.evaluate(() => !document.getElementById("viewer").open);
      result.scenarios.files = r;

      // a binary file alone: a clear message, not "paste a log first"
      await page.click("#clear");
      await page.setInputFiles("#picker", [{ name: "core.bin", mimeType: "application/octet-stream",
        buffer: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3, 0, 0]) }]);
      await page.evaluate(() => { delete document.documentElement.dataset.state; });
      await page.click("#explain");
      await page.waitForFunction(() => document.documentElement.dataset.state === "nothing", null, { timeout: 10000 });
      result.scenarios.binary = {
        status: await page.locator("#status-text").innerText(),
        error: await page.locator("#error-text").innerText(),
      };

      // a zstd-compressed log (no NUL in its head): what to run, not lines of garbage
      await page.click("#clear");
      await page.setInputFiles("#picker", [{ name: "rank0.log.zst", mimeType: "application/octet-stream",
        buffer: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x45, 0x72, 0x61, 0x6e, 0x6b, 0x0a]) }]);
      await page.evaluate(() => { delete document.documentElement.dataset.state; });
      await page.click("#explain");
      await page.waitForFunction(() => document.documentElement.dataset.state === "nothing", null, { timeout: 10000 });
      result.scenarios.zstd = { status: await page.locator("#status-text").innerText() };

      // the same files dropped on the page (a synthetic drop event with a DataTransfer), as bytes made from
      // each file's: gzipped; as Windows PowerShell 5's `>` writes them (UTF-16LE with its byte order mark);
      // after a hole of NULs (a log truncated while its writer held it open: logrotate's copytruncate)
      const drops = {
        dropGz: [".gz", "application/gzip", (b) => zlib.gzipSync(b)],
        dropUtf16: ["", "text/plain", (b) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(b.toString("utf-8"), "utf16le")])],
        dropHole: ["", "text/plain", (b) => Buffer.concat([Buffer.alloc(20000), b])],
      };
      for (const [scenario, [suffix, type, make]] of Object.entries(drops)) {
        await page.click("#clear");
        const items = files.map((f) => ({ name: path.basename(f) + suffix, type,
          b64: make(fs.readFileSync(f)).toString("base64") }));
        await page.evaluate((items) => {
          const dt = new DataTransfer();
          for (const it of items) {
            const bytes = Uint8Array.from(atob(it.b64), (c) => c.charCodeAt(0));
            dt.items.add(new File([bytes], it.name, { type: it.type }));
          }
          window.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt }));
          window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt }));
        }, items);
        const dropped = await explainAndWait(page);
        dropped.chips = await page.locator("#files .file").count();
        dropped.overlayHidden = await page.locator("#drop-overlay").isHidden();
        result.scenarios[scenario] = dropped;
      }
    }

    // "Try an example" on a phone: the bundled sample is explained and the result scrolled into view
    {
      const ex = {};
      await page.click("#clear");
      await page.setViewportSize({ width: 390, height: 844 });
      await page.evaluate(() => { window.scrollTo(0, 0); delete document.documentElement.dataset.state; });
      await page.click("#example");
      await page.waitForFunction(() => ["done", "error"].includes(document.documentElement.dataset.state), null,
        { timeout: 120000 });
      await page.waitForTimeout(300);
      Object.assign(ex, await page.evaluate(() => {
        const top = document.getElementById("results").getBoundingClientRect().top;
        return {
          state: document.documentElement.dataset.state,
          diagnoses: (document.documentElement.dataset.diagnoses || "").split(" ").filter(Boolean),
          chips: document.querySelectorAll("#files .file").length,
          status: document.getElementById("status-text").textContent,
          resultsTop: top, viewport: window.innerHeight, scrollY: window.scrollY,
          strips: document.querySelectorAll("#picture svg.tl-strip").length,
          behind: Array.from(document.querySelectorAll("#picture .tl-label.behind")).map((e) => e.textContent),
          header: document.querySelector("#report .report-head").textContent,
        };
      }));
      ex.screenshots = [path.join(outDir, "example-light-390.png"), path.join(outDir, "example-light-390-full.png")];
      await page.screenshot({ path: ex.screenshots[0] });
      await page.screenshot({ path: ex.screenshots[1], fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      ex.screenshots.push(path.join(outDir, "example-light-1280.png"));
      await page.screenshot({ path: ex.screenshots.at(-1), fullPage: true });
      await page.emulateMedia({ colorScheme: "dark" });
      ex.screenshots.push(path.join(outDir, "example-dark-1280.png"));
      await page.locator("#picture").screenshot({ path: ex.screenshots.at(-1) });
      await page.emulateMedia({ colorScheme: "light" });
      result.scenarios.example = ex;
    }

    // XSS: a second page in the same browser (warm HTTP cache)
    const xpage = await browser.context.newPage();
    await xpage.goto(url);
    await waitReady(xpage);
    const x = {};
    await xpage.fill("#log", XSS);
    await xpage.setInputFiles("#picker", [XSS_FILE]);
    x.chipText = await xpage.locator("#files .file-name").first().innerText();
    Object.assign(x, await explainAndWait(xpage));
    await xpage.evaluate(() => document.querySelectorAll("details").forEach((d) => { d.open = true; }));
    await xpage.hover("#report"); // a mouseover payload would fire now
    await xpage.waitForTimeout(500); // give any injected handler a chance to fire
    x.pwned = await xpage.evaluate(() => window.__pwned ?? null);
    x.injected = await xpage.evaluate(() =>
      document.querySelectorAll("#report script, #report img, #report svg, #report iframe, #report b, #report a[href^='javascript'], #files img").length);
    x.reportText = await xpage.locator("#report").innerText();
    x.shownLiterally = ["<script>window.__pwned=", "<img src=x onerror=", "<iframe src="]
      .filter((p) => x.reportText.includes(p));
    x.requestsToX = log.requests.filter((u) => /\/x(\?|$)/.test(new URL(u).pathname)).length;
    const shot = path.join(outDir, "xss.png");
    await xpage.screenshot({ path: shot, fullPage: true });
    x.screenshot = shot;
    result.scenarios.xss = x;
  } catch (err) {
    result.failure = String(err && err.stack || err);
  } finally {
    await browser.close();
  }
  result.requests = log.requests;
  result.blocked = log.blocked;
  result.console = log.console;
  result.cspViolations = log.csp;
  result.pageErrors = log.errors;
  result.dialogs = log.dialogs;
  process.stdout.write(JSON.stringify(result, null, 1) + "\n");
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ failure: String(err && err.stack || err) }) + "\n");
  process.exit(1);
});
