// logdoc web worker: boots Pyodide, loads the lark and logdoc wheels by URL (no micropip, no
// dependency resolution, nothing outside this site's origin) and runs the same Python core as
// the CLI. The page talks to it with postMessage; log text never leaves this worker.
//
// This file is a template: `logdoc web build` fills in the placeholders.
import { loadPyodide } from "{{PYODIDE_MJS}}";

const CONFIG = {{CONFIG}};
const here = (rel) => new URL(rel, import.meta.url).href;
// Times are sent as milliseconds since the epoch (timeOrigin + now), so that the page can put
// them on its own timeline (a worker's performance.now() has its own origin).
const at = () => Math.round(performance.timeOrigin + performance.now());
const ms = () => Math.round(performance.now());

function post(msg) {
  self.postMessage(msg);
}

// --- progress ------------------------------------------------------------------------------
// Count the bytes of the runtime files as they arrive (Pyodide fetches them itself), so the page
// can show real download progress on a slow connection. Only this site's origin is fetched.
let received = 0;
let lastPost = 0;
const phase = "Downloading the Python runtime";

// fraction null = indeterminate (the interpreter is starting: no byte count to show).
function progress(fraction, label, force) {
  const now = performance.now();
  if (!force && now - lastPost < 80) return;
  lastPost = now;
  post({ type: "progress", fraction: fraction === null ? null : Math.max(0, Math.min(1, fraction)), label, ms: ms() });
}

function downloadFraction() {
  return CONFIG.fetchBytes ? Math.min(1, received / CONFIG.fetchBytes) : 0;
}

const realFetch = self.fetch.bind(self);
self.fetch = async (input, init) => {
  const url = new URL(typeof input === "string" ? input : input.url, self.location.href);
  if (url.origin !== self.location.origin) {
    // Never happens with a correct build; refuse rather than leak anything.
    throw new TypeError(`logdoc: refusing to fetch ${url.origin}`);
  }
  const resp = await realFetch(input, init);
  if (!resp.ok || !resp.body || typeof TransformStream === "undefined") return resp;
  const counter = new TransformStream({
    transform(chunk, controller) {
      received += chunk.byteLength;
      if (downloadFraction() >= 0.999) progress(null, "Starting Python", true);
      else progress(0.9 * downloadFraction(), `${phase} (${mb(received)} of ${mb(CONFIG.fetchBytes)})`);
      controller.enqueue(chunk);
    },
  });
  return new Response(resp.body.pipeThrough(counter), {
    status: resp.status,
    statusText: resp.statusText,
    headers: resp.headers,
  });
};

function mb(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}

// --- start-up ------------------------------------------------------------------------------
let pyodide = null;
let entry = null;
const timings = {};

async function boot() {
  timings.workerStart = Math.round(performance.timeOrigin);
  timings.bootStart = at();
  progress(0, "Downloading the Python runtime", true);
  const kbText = fetch(here(CONFIG.kb)).then((r) => {
    if (!r.ok) throw new Error(`knowledge base: HTTP ${r.status}`);
    return r.text();
  });
  pyodide = await loadPyodide({
    indexURL: here(CONFIG.pyodide),
    // The build ships the modules the page imports as bytecode (compiled by this Pyodide).
    stdLibURL: here(CONFIG.stdlib),
    // The wheels download while the interpreter boots.
    packages: CONFIG.wheels.map(here),
    checkAPIVersion: true,
    stdout: (line) => console.log(`[python] ${line}`),
    stderr: (line) => console.warn(`[python] ${line}`),
  });
  timings.pyodide = at();
  progress(null, "Loading logdoc and its knowledge base", true);
  // In case a wheel was not installed by `packages` (older loaders ignore URLs there).
  const missing = CONFIG.wheels.filter((w) => !pyodide.loadedPackages[wheelName(w)]);
  if (missing.length) {
    await pyodide.loadPackage(missing.map(here), { checkIntegrity: false });
  }
  timings.wheels = at();
  entry = pyodide.pyimport("logdoc.web.entry");
  const info = JSON.parse(entry.init(await kbText));
  timings.ready = at();
  return info;
}

function wheelName(url) {
  return url.split("/").pop().split("-")[0].toLowerCase();
}

const ready = boot().then(
  (info) => {
    progress(1, "Ready", true);
    post({ type: "ready", info, timings, ms: ms() });
    // Build the grammars now, while the user is still pasting.
    setTimeout(() => {
      const t = performance.now();
      const res = JSON.parse(entry.warm_up());
      post({ type: "warm", ok: res.ok, error: res.error, ms: Math.round(performance.now() - t), at: at() });
    }, 0);
    return true;
  },
  (err) => {
    post({ type: "fatal", message: errorMessage(err), details: String(err && err.stack || err) });
    return false;
  },
);

function errorMessage(err) {
  const text = String((err && err.message) || err);
  const lines = text.trim().split("\n");
  return lines[lines.length - 1];
}

// --- requests from the page ----------------------------------------------------------------
self.onmessage = async (event) => {
  const msg = event.data || {};
  const { id, cmd } = msg;
  if (!(await ready)) {
    post({ id, type: "error", message: "The Python runtime failed to start." });
    return;
  }
  try {
    if (cmd === "explain") {
      const start = performance.now();
      const out = entry.explain_texts(msg.names, msg.texts, Boolean(msg.redact));
      post({ id, type: "result", json: out, workerMs: Math.round(performance.now() - start) });
    } else if (cmd === "markdown") {
      const out = entry.markdown_again(Boolean(msg.redact));
      post({ id, type: "markdown", json: out });
    } else {
      post({ id, type: "error", message: `unknown command ${cmd}` });
    }
  } catch (err) {
    post({ id, type: "error", message: errorMessage(err), details: String(err && err.message || err) });
  }
};
