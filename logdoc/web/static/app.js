// logdoc web page: UI only. The diagnosis is computed by the Python core in worker.js.
// Every piece of log-derived text is inserted with textContent / text nodes, never as HTML.
//
// This file is a template: `logdoc web build` fills in the placeholders.

const $ = (id) => document.getElementById(id);
const ui = {
  status: $("status"),
  statusText: $("status-text"),
  progress: $("progress"),
  log: $("log"),
  picker: $("picker"),
  files: $("files"),
  filesBlock: $("files-block"),
  explain: $("explain"),
  clear: $("clear"),
  results: $("results"),
  report: $("report"),
  redact: $("redact"),
  copy: $("copy"),
  copyStatus: $("copy-status"),
  mdFallback: $("md-fallback"),
  mdText: $("md-text"),
  error: $("error"),
  errorText: $("error-text"),
  errorDetails: $("error-details"),
  overlay: $("drop-overlay"),
  example: $("example"),
  picture: $("picture"),
  viewer: $("viewer"),
  viewerTitle: $("viewer-title"),
  viewerNote: $("viewer-note"),
  viewerLines: $("viewer-lines"),
  viewerClose: $("viewer-close"),
  version: $("version"),
  runtime: $("runtime"),
};

const state = {
  ready: false,
  busy: false,
  files: [], // {name, size, file}
  sources: new Map(), // name -> text of the last explained input (the log viewer reads it)
  fileOrder: new Map(), // name -> index in report.files (evidence is listed in file, then line order)
  result: null, // {report, markdown}
  markdown: { plain: null, redacted: null },
  pendingRedacted: null,
  generation: 0, // one per explain, so a late redacted copy of older input is never used
  nextId: 1,
  waiting: new Map(),
};

// --- the worker ----------------------------------------------------------------------------
performance.mark("logdoc:start");
const worker = new Worker(new URL("{{WORKER_URL}}", import.meta.url), { type: "module" });

worker.onmessage = (event) => {
  const msg = event.data;
  if (msg.id && state.waiting.has(msg.id)) {
    const { resolve, reject } = state.waiting.get(msg.id);
    state.waiting.delete(msg.id);
    if (msg.type === "error") reject(Object.assign(new Error(msg.message), { details: msg.details }));
    else resolve(msg);
    return;
  }
  switch (msg.type) {
    case "progress":
      if (msg.fraction === null) ui.progress.removeAttribute("value");
      else ui.progress.value = msg.fraction;
      setStatus(msg.label + "…");
      break;
    case "ready":
      state.ready = true;
      performance.mark("logdoc:ready");
      document.documentElement.dataset.ready = "1";
      document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
      // the worker's milestones on this page's timeline (ms since navigation start)
      document.documentElement.dataset.boot = JSON.stringify(Object.fromEntries(
        Object.entries(msg.timings || {}).map(([k, v]) => [k, Math.round(v - performance.timeOrigin)])));
      ui.progress.value = 1;
      ui.status.classList.add("is-ready");
      if (msg.info) {
        ui.version.textContent = msg.info.logdoc || "";
        ui.runtime.textContent = ` (Python ${msg.info.python})`;
      }
      if (!state.busy) setStatus(readyText(performance.now()));
      break;
    case "warm":
      document.documentElement.dataset.warm = msg.ok ? "1" : "failed";
      document.documentElement.dataset.warmMs = String(msg.ms);
      if (!msg.ok) console.warn("logdoc warm-up failed", msg.error);
      break;
    case "fatal":
      ui.status.classList.add("is-error");
      setStatus("The Python runtime failed to start.");
      showError("The Python runtime failed to start. Reload the page to try again.", msg.details || msg.message);
      document.documentElement.dataset.ready = "failed";
      break;
    default:
      break;
  }
};
worker.onerror = (event) => {
  ui.status.classList.add("is-error");
  if (state.ready) {
    setStatus("The Python worker stopped.");
    showError("The Python worker stopped unexpectedly (out of memory on a very large input?). Reload the page to try again.", event.message || "");
  } else {
    setStatus("The worker failed to load.");
    showError("The page's worker failed to load. Is the folder served over http(s)? file:// cannot work.", event.message || "");
    document.documentElement.dataset.ready = "failed";
  }
  for (const { reject } of state.waiting.values()) reject(new Error("the worker stopped"));
  state.waiting.clear();
};

function call(cmd, payload) {
  const id = state.nextId++;
  return new Promise((resolve, reject) => {
    state.waiting.set(id, { resolve, reject });
    worker.postMessage({ id, cmd, ...payload });
  });
}

function readyText(ms) {
  return `Ready (Python started in ${(ms / 1000).toFixed(1)} s). Paste a log or drop files, then Explain.`;
}

function setStatus(text) {
  ui.statusText.textContent = text;
}

// --- input: paste, picker, drag and drop -----------------------------------------------------
ui.picker.addEventListener("change", () => {
  addFiles(Array.from(ui.picker.files || []));
  ui.picker.value = "";
});

let dragDepth = 0;
window.addEventListener("dragenter", (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth++;
  ui.overlay.hidden = false;
});
window.addEventListener("dragover", (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  e.dataTransfer.dropEffect = "copy";
});
window.addEventListener("dragleave", (e) => {
  if (!hasFiles(e)) return;
  dragDepth = Math.max(0, dragDepth - 1);
  if (dragDepth === 0) ui.overlay.hidden = true;
});
window.addEventListener("drop", async (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth = 0;
  ui.overlay.hidden = true;
  const items = Array.from(e.dataTransfer.items || []);
  const entries = items.map((it) => (it.webkitGetAsEntry ? it.webkitGetAsEntry() : null));
  if (entries.length && entries.every(Boolean)) {
    const files = [];
    for (const entry of entries) await collectEntry(entry, "", files);
    addFiles(files);
  } else {
    addFiles(Array.from(e.dataTransfer.files || []));
  }
});

function hasFiles(e) {
  return e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
}

// A dropped folder is read recursively, like `logdoc explain DIR`.
async function collectEntry(entry, prefix, out) {
  if (entry.isFile) {
    const file = await new Promise((res, rej) => entry.file(res, rej));
    out.push({ file, name: prefix + file.name });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    let batch;
    do {
      batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      for (const child of batch) await collectEntry(child, `${prefix}${entry.name}/`, out);
    } while (batch.length);
  }
}

function addFiles(list) {
  for (const item of list) {
    const file = item instanceof File ? item : item.file;
    let name = item instanceof File ? file.webkitRelativePath || file.name : item.name;
    if (state.files.some((f) => f.file === file)) continue;
    name = uniqueName(name);
    state.files.push({ name, size: file.size, file });
  }
  renderFiles();
}

function uniqueName(name) {
  const taken = new Set(state.files.map((f) => f.name));
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) {
    const candidate = `${name} (${i})`;
    if (!taken.has(candidate)) return candidate;
  }
}

function renderFiles() {
  ui.files.replaceChildren(
    ...state.files.map((f, index) =>
      h("li", { className: "file" },
        h("span", { className: "file-name" }, f.name),
        h("span", { className: "file-size" }, humanSize(f.size)),
        h("button", {
          type: "button", className: "file-remove", title: `Remove ${f.name}`,
          "aria-label": `Remove ${f.name}`,
          onclick: () => { state.files.splice(index, 1); renderFiles(); },
        }, "×"),
      ),
    ),
  );
  ui.filesBlock.hidden = state.files.length === 0;
}

function humanSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

// UTF-16 text (Windows PowerShell 5's `>` writes UTF-16LE with its byte order mark): the reader's rule
// (logdoc/read/source.py utf16_encoding): a mark before text whose units are at least a quarter ASCII, or
// without one a NUL in nearly every other byte and almost none between them.
function utf16Label(head) {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    const le = head[0] === 0xff;
    let units = 0, zero = 0;
    for (let i = le ? 3 : 2; i < head.length; i += 2) { units++; if (head[i] === 0) zero++; }
    return head.length < 16 || zero >= 0.25 * units ? (le ? "utf-16le" : "utf-16be") : null;
  }
  if (head.length < 64 || !head.includes(0)) return null;
  const n = head.length - (head.length % 2), half = n / 2;
  let even = 0, odd = 0;
  for (let i = 0; i < n; i += 2) { if (head[i] === 0) even++; if (head[i + 1] === 0) odd++; }
  if (odd >= 0.9 * half && even <= 0.02 * half) return "utf-16le";
  if (even >= 0.9 * half && odd <= 0.02 * half) return "utf-16be";
  return null;
}

// Packed formats the page does not undo (logdoc/read/gunzip.py unreadable(); the command line reads bzip2 and
// xz, a browser only gzip): skipped with what to run, never read as lines of garbage.
const PACKED = [
  [[0x42, 0x5a, 0x68], "bzip2-compressed: decompress it first (bunzip2)"],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], "xz-compressed: decompress it first (xz -d)"],
  [[0x28, 0xb5, 0x2f, 0xfd], "zstd-compressed: decompress it first (zstd -d)"],
  [[0x50, 0x4b, 0x03, 0x04], "a zip archive: extract it first (unzip)"],
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], "a 7z archive: extract it first (7z x)"],
  [[0x04, 0x22, 0x4d, 0x18], "lz4-compressed: decompress it first (lz4 -d)"],
];

function packedReason(head) {
  for (const [magic, why] of PACKED) if (magic.every((b, i) => head[i] === b)) return why;
  const ustar = [0x75, 0x73, 0x74, 0x61, 0x72];
  if (ustar.every((b, i) => head[257 + i] === b)) return "a tar archive: extract it first (tar xf)";
  return null;
}

async function readFile({ name, file }) {
  const head = new Uint8Array(await file.slice(0, 4096).arrayBuffer());
  const packed = packedReason(head);
  if (packed) return { name, skipped: packed };
  const utf16 = utf16Label(head);
  if (utf16) return { name, text: new TextDecoder(utf16).decode(await file.arrayBuffer()) };
  const gz = head[0] === 0x1f && head[1] === 0x8b;
  if (gz) {
    if (typeof DecompressionStream === "undefined") throw new Error(`${name}: this browser cannot read .gz files`);
    const stream = file.stream().pipeThrough(new DecompressionStream("gzip"));
    return { name: name.replace(/\.gz$/i, "") || name, text: await new Response(stream).text() };
  }
  // the reader's rules (logdoc/read/source.py): 16 or more NULs the file starts with are a hole (a log truncated
  // while its writer held it open) and are dropped; past them, more NULs than text can hold make a binary file
  if (head.includes(0)) {
    let text = await file.text();
    const hole = /^\0{16,}/.exec(text);
    if (hole) text = text.slice(hole[0].length);
    const sniff = text.slice(0, 4096);
    const nuls = sniff.split("\0").length - 1;
    if (nuls > Math.max(4, Math.floor(sniff.length / 100)) || (hole && !text)) return { name, skipped: "looks binary" };
    return { name, text };
  }
  return { name, text: await file.text() };
}

// --- explain -------------------------------------------------------------------------------
ui.explain.addEventListener("click", explain);
ui.log.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    explain();
  }
});
ui.clear.addEventListener("click", () => {
  ui.log.value = "";
  state.files = [];
  renderFiles();
  state.result = null;
  ui.results.hidden = true;
  ui.error.hidden = true;
  ui.log.focus();
});

// --- the bundled example -------------------------------------------------------------------
const EXAMPLE_URL = "{{EXAMPLE_URL}}";
if (!EXAMPLE_URL) ui.example.hidden = true;
ui.example.addEventListener("click", async () => {
  if (state.busy) return;
  try {
    const res = await fetch(EXAMPLE_URL);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const example = await res.json();
    ui.log.value = "";
    state.files = [];
    addFiles(example.files.map(([name, text]) => ({ name, file: new File([text], name, { type: "text/plain" }) })));
    await explain();
    if (example.title) setStatus(`Example: ${example.title}`);
  } catch (err) {
    showError(`The example could not be loaded: ${err.message || err}`);
  }
});

async function explain() {
  if (state.busy) return;
  performance.clearMarks("logdoc:click");
  performance.clearMarks("logdoc:rendered");
  performance.mark("logdoc:click");
  const sources = [];
  const skipped = [];
  ui.error.hidden = true;
  try {
    const read = await Promise.all(state.files.map(readFile));
    for (const r of read) (r.skipped ? skipped : sources).push(r);
  } catch (err) {
    showError(String(err.message || err));
    return;
  }
  const pasted = ui.log.value;
  if (pasted.trim()) sources.unshift({ name: "pasted.log", text: pasted });
  if (!sources.length) {
    if (skipped.length) {
      const names = skipped.map((x) => x.name);
      const what = names.length === 1 ? `${names[0]} is` : `${names.slice(0, 3).join(", ")}${names.length > 3 ? ", …" : ""} are`;
      const text = `Nothing to explain: ${what} not text (${skipped[0].skipped}). ` +
        "logdoc reads text logs, or .gz files of them: add the stdout/stderr log of each rank or node.";
      setStatus(text);
      showError(text);
      document.documentElement.dataset.state = "nothing";
    } else {
      setStatus("Paste a log or add files first.");
      ui.log.focus();
    }
    return;
  }
  state.busy = true;
  state.generation++;
  ui.explain.disabled = true;
  document.documentElement.dataset.state = "busy";
  const total = sources.reduce((n, s) => n + s.text.length, 0);
  setStatus(state.ready
    ? `Explaining ${sources.length} source${sources.length > 1 ? "s" : ""} (${humanSize(total)})…`
    : "Waiting for the Python runtime, then explaining…");
  try {
    const msg = await call("explain", {
      names: sources.map((s) => s.name),
      texts: sources.map((s) => s.text),
      redact: false,
    });
    const parsed = JSON.parse(msg.json);
    state.result = parsed;
    state.sources = new Map(sources.map((s) => [s.name, s.text]));
    state.lines = new Map();
    state.markdown = { plain: parsed.markdown, redacted: null };
    state.pendingRedacted = null;
    renderReport(parsed.report, skipped);
    performance.mark("logdoc:rendered");
    const m = performance.measure("logdoc:explain", "logdoc:click", "logdoc:rendered");
    document.documentElement.dataset.state = "done";
    document.documentElement.dataset.explainMs = String(Math.round(m.duration));
    document.documentElement.dataset.pythonMs = String(parsed.ms ? parsed.ms.explain : "");
    setStatus(`Explained ${humanSize(total)} in ${(m.duration / 1000).toFixed(2)} s, in this tab.`);
    // on a phone the input fills the screen: bring the result into view
    if (window.matchMedia("(max-width: 40rem)").matches) ui.results.scrollIntoView({ block: "start" });
    if (ui.redact.checked) prepareRedacted();
  } catch (err) {
    document.documentElement.dataset.state = "error";
    showError(`logdoc failed on this input: ${err.message}`, err.details);
    setStatus("Failed.");
  } finally {
    state.busy = false;
    ui.explain.disabled = false;
  }
}

function showError(text, details) {
  ui.error.hidden = false;
  ui.errorText.textContent = text;
  ui.errorDetails.textContent = details || "";
  ui.errorDetails.parentElement.hidden = !details;
}

// --- copy as Markdown ----------------------------------------------------------------------
ui.redact.addEventListener("change", () => {
  if (ui.redact.checked && state.result) prepareRedacted();
});

function prepareRedacted() {
  if (state.markdown.redacted !== null) return Promise.resolve(state.markdown.redacted);
  if (!state.pendingRedacted) {
    const generation = state.generation;
    state.pendingRedacted = call("markdown", { redact: true }).then((msg) => {
      const md = JSON.parse(msg.json).markdown;
      // keep it only if no other explain started meanwhile (the worker redacts its last input)
      if (generation === state.generation) state.markdown.redacted = md;
      else state.pendingRedacted = null;
      return md;
    });
    state.pendingRedacted.catch(() => { state.pendingRedacted = null; });
  }
  return state.pendingRedacted;
}

ui.copy.addEventListener("click", async () => {
  if (!state.result) return;
  const redact = ui.redact.checked;
  const ready = redact ? state.markdown.redacted : state.markdown.plain;
  const label = redact ? "Markdown (hostnames and addresses redacted)" : "Markdown";
  ui.copyStatus.textContent = ready === null ? "Preparing the redacted copy…" : "";
  try {
    if (ready !== null) {
      await navigator.clipboard.writeText(ready);
      copied(label, ready);
    } else if (typeof ClipboardItem !== "undefined" && navigator.clipboard && navigator.clipboard.write) {
      // Keeps the user gesture while the worker prepares the text (Safari needs this).
      const text = prepareRedacted();
      const blob = text.then((t) => new Blob([t], { type: "text/plain" }));
      await navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
      copied(label, await text);
    } else {
      const text = await prepareRedacted();
      await navigator.clipboard.writeText(text);
      copied(label, text);
    }
  } catch (err) {
    // No clipboard access (e.g. plain http on another host): show the text to copy by hand.
    const text = redact ? await prepareRedacted().catch(() => "") : state.markdown.plain;
    ui.mdText.value = text;
    ui.mdFallback.hidden = false;
    ui.mdFallback.open = true;
    ui.mdText.focus();
    ui.mdText.select();
    ui.copyStatus.textContent = "The clipboard is not available here; the Markdown is selected below, copy it with Ctrl+C.";
  }
});

function copied(label, text) {
  ui.copyStatus.textContent = `Copied ${label}, ${text.split("\n").length} lines.`;
  document.documentElement.dataset.copied = ui.redact.checked ? "redacted" : "plain";
}

// --- rendering -----------------------------------------------------------------------------
// h(tag, props, ...children): props are DOM properties (or aria-*/data-* attributes); children
// are nodes or strings, and strings always become text nodes.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("aria-") || key.startsWith("data-")) el.setAttribute(key, String(value));
    else if (key === "href") el.href = safeUrl(value);
    else el[key] = value;
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Flatten children and drop empty ones (for replaceChildren, which would print arrays).
function nodes(...children) {
  return children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false);
}

function safeUrl(url) {
  try {
    const u = new URL(String(url), document.baseURI);
    if (u.protocol === "https:" || u.protocol === "http:") return u.href;
  } catch (_) { /* fall through */ }
  return "#";
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many || one + "s"}`;
}

function fmt(value) {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) return value.map(fmt).filter(Boolean).join(", ");
  if (typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k} ${fmt(v)}`.trim()).join(", ");
  }
  return String(value);
}

// The report, laid out like the terminal report (logdoc/report/terminal.py): header lines, one
// card per diagnosis (meta line, origin, evidence, explanation, fix, confirm, not the cause when,
// consequences, docs), then notes.
function renderReport(report, skipped) {
  const diagnoses = Array.isArray(report.diagnoses) ? report.diagnoses : [];
  const notes = Array.isArray(report.notes) ? report.notes : [];
  const errors = diagnoses.filter((d) => d.severity === "error");
  ui.results.hidden = false;
  ui.mdFallback.hidden = true;
  state.fileOrder = new Map((Array.isArray(report.files) ? report.files : []).map((f, i) => [String(f), i]));
  ui.picture.replaceChildren(...nodes(renderPicture(report.timeline)));
  ui.copyStatus.textContent = "";
  $("results-title").textContent = diagnoses.length
    ? plural(diagnoses.length, "diagnosis", "diagnoses")
    : "No known failure signature matched";
  ui.report.replaceChildren(...nodes(
    renderHeader(report, skipped || []),
    diagnoses.length ? null : renderNoMatch(report),
    diagnoses.map((d, i) => renderDiagnosis(d, i)),
    notes.length ? renderNotes(notes) : null,
  ));
  document.documentElement.dataset.diagnoses = diagnoses.map((d) => d.id).join(" ");
  document.documentElement.dataset.errors = String(errors.length);
}

function rankNumbers(list) {
  // job.ranks holds one object per rank ({rank, host, ...}); diagnoses hold plain numbers.
  return (Array.isArray(list) ? list : [])
    .map((r) => (r && typeof r === "object" ? r.rank : r))
    .filter((r) => r !== null && r !== undefined);
}

function hostNames(list) {
  return (Array.isArray(list) ? list : []).map((x) => (x && typeof x === "object" ? x.host || x.name || fmt(x) : x)).filter(Boolean);
}

// Same wording as logdoc/report/markdown.py:_ranks.
function ranksPhrase(ranks) {
  const nums = rankNumbers(ranks);
  if (!nums.length) return "rank unknown";
  return (nums.length === 1 ? "rank " : "ranks ") + ranksText(nums);
}

function ranksText(ranks) {
  const nums = rankNumbers(ranks);
  const ints = [...new Set(nums.filter((r) => Number.isInteger(r)))].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < ints.length; ) {
    let j = i;
    while (j + 1 < ints.length && ints[j + 1] === ints[j] + 1) j++;
    parts.push(j > i ? `${ints[i]}-${ints[j]}` : `${ints[i]}`);
    i = j + 1;
  }
  return [...parts, ...nums.filter((r) => !Number.isInteger(r)).map(String)].join(", ");
}

function renderHeader(report, skipped) {
  const job = report.job || {};
  const stats = report.stats || {};
  const num = (v) => (typeof v === "number" ? v.toLocaleString("en-US") : String(v ?? 0));
  const lines = [];
  lines.push(`Read ${num(stats.lines_read)} lines in ${plural(stats.files ?? 0, "file")}: ` +
    `${num(stats.events)} events, ${num(stats.not_understood)} relevant lines not understood.`);
  const ranks = rankNumbers(job.ranks);
  const hosts = hostNames(job.hosts);
  if (ranks.length || hosts.length) {
    // no "on 0 hosts": the host part only when the logs named a host
    let line = ranks.length ? `Job: ${plural(ranks.length, "rank")}` : "Job:";
    if (hosts.length) line += ` on ${plural(hosts.length, "host")} (${hosts.slice(0, 8).join(", ")}${hosts.length > 8 ? ", …" : ""})`;
    if (Number.isInteger(job.world_size)) line += `, world size ${job.world_size}`;
    lines.push(line + ".");
  }
  const silent = rankNumbers(job.ranks_without_output);
  if (silent.length) lines.push(`No output from ${ranksPhrase(silent)}.`);
  const versions = versionsText(job.versions);
  if (versions) lines.push(`Versions: ${versions}.`);
  const networks = networksText(job.transports);
  if (networks) lines.push(`Network: ${networks}.`);
  const skippedFiles = [...(stats.skipped_files || []).map(fmt), ...skipped.map((x) => `${x.name} (${x.skipped})`)];
  if (skippedFiles.length) lines.push(`Skipped: ${skippedFiles.join(", ")}.`);
  for (const w of stats.warnings || []) lines.push(`Warning: ${fmt(w)}`);
  return h("section", { className: "report-head", "aria-label": "Job" }, lines.map((l) => h("p", {}, l)));
}

// job.transports is {host: {network: ["IB"], ...}}: the networks NCCL used, and on which hosts.
function networksText(transports) {
  if (Array.isArray(transports)) return transports.map(String).join(", ");
  if (!transports || typeof transports !== "object") return "";
  const byNet = new Map();
  for (const [host, t] of Object.entries(transports)) {
    for (const net of (t && Array.isArray(t.network) ? t.network : [])) {
      if (!byNet.has(net)) byNet.set(net, []);
      byNet.get(net).push(host);
    }
  }
  return [...byNet].map(([net, hosts]) => `${net} (${hosts.slice(0, 6).join(", ")}${hosts.length > 6 ? ", …" : ""})`).join("; ");
}

function versionsText(versions) {
  if (!versions || typeof versions !== "object") return "";
  const parts = [];
  for (const [comp, vals] of Object.entries(versions)) {
    if (vals && typeof vals === "object" && !Array.isArray(vals)) parts.push(`${comp} ${Object.keys(vals).sort().join(", ")}`);
    else if (Array.isArray(vals)) parts.push(`${comp} ${vals.map(String).join(", ")}`);
    else if (vals) parts.push(`${comp} ${vals}`);
  }
  return parts.join("; ");
}

function renderNoMatch(report) {
  const unrec = Array.isArray(report.unrecognized) ? report.unrecognized.slice(0, 20) : [];
  return h("section", { className: "nomatch" },
    h("p", { className: "nomatch-title" }, "No known failure signature matched."),
    unrec.length ? h("div", { className: "block" },
      h("h4", {}, "Relevant lines that were not understood"),
      h("ul", { className: "evidence" }, unrec.map((u) => evidenceLine({ file: u.file, line: u.line, text: String(u.text || "").split("\n")[0] })))) : null,
    h("p", {}, "Collect next: rerun with ", h("code", {}, "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV"),
      " and ", h("code", {}, "TORCH_DISTRIBUTED_DEBUG=DETAIL"), ", and give logdoc the logs of every rank."),
  );
}

function renderDiagnosis(d, index) {
  const severity = ["error", "warning", "info"].includes(d.severity) ? d.severity : "info";
  const meta = [d.id, d.category, severity, d.role ? String(d.role).replace(/_/g, " ") : null,
    typeof d.confidence === "number" ? `confidence ${Math.round(d.confidence * 100)}%` : null].filter(Boolean);
  const hosts = hostNames(d.hosts);
  const origin = ranksPhrase(d.ranks) + (hosts.length ? ` on ${hosts.slice(0, 6).join(", ")}` : "");

  return h("article", { className: `diagnosis sev-${severity}`, "data-rule": d.id, id: `d-${index + 1}` },
    h("header", { className: "diag-head" },
      h("span", { className: "diag-num" }, `[${index + 1}]`),
      h("h3", { className: "diag-title" }, d.title || ""),
      h("span", { className: `badge sev-${severity}` }, severity),
    ),
    h("p", { className: "diag-meta" }, meta.join(" · ")),
    h("p", { className: "diag-origin" }, h("strong", {}, "origin: "), origin),
    evidenceBlock("Evidence", d.evidence),
    d.explanation ? h("div", { className: "block explanation" }, paragraphs(d.explanation)) : null,
    listBlock("Fix", d.fix, "ol"),
    listBlock("Confirm", d.confirm, "ul"),
    listBlock("Not the cause when", d.not_when, "ul"),
    alternativesBlock(d.symptoms),
    symptomsBlock((d.symptoms || []).filter((sy) => !sy.alternative)),
    docsBlock(d.docs),
  );
}

function paragraphs(text) {
  return String(text).split(/\n{2,}/).map((p) => h("p", {}, codeSpans(p)));
}

function listBlock(title, items, tag) {
  if (!Array.isArray(items) || !items.length) return null;
  return h("div", { className: "block" },
    h("h4", {}, title),
    h(tag, { className: "steps" }, items.map((t) => h("li", {}, codeSpans(String(t))))),
  );
}

// `backticks` in knowledge-base text become <code>; still text nodes only.
function codeSpans(text) {
  const parts = text.split("`");
  if (parts.length < 3 || parts.length % 2 === 0) return [text];
  return parts.map((p, i) => (i % 2 ? h("code", {}, p) : p));
}

function docsBlock(docs) {
  if (!Array.isArray(docs) || !docs.length) return null;
  return h("div", { className: "block" },
    h("h4", {}, "Docs"),
    h("ul", { className: "docs" }, docs.map((doc) =>
      h("li", {}, h("a", { href: doc.url, target: "_blank", rel: "noopener noreferrer" }, doc.title || doc.url)))),
  );
}

function evidenceBlock(title, evidence) {
  if (!Array.isArray(evidence) || !evidence.length) return null;
  return h("div", { className: "block" },
    title ? h("h4", {}, title) : null,
    h("ul", { className: "evidence" }, inLineOrder(evidence).map(evidenceLine)),
  );
}

// Evidence in the order of the input: by file (as the report lists them), then line.
function inLineOrder(evidence) {
  const order = (f) => (state.fileOrder.has(f) ? state.fileOrder.get(f) : Number.MAX_SAFE_INTEGER);
  return evidence.map((ev, i) => [ev, i]).sort(([a, i], [b, j]) =>
    (order(String(a.file)) - order(String(b.file))) || String(a.file).localeCompare(String(b.file)) ||
    ((a.line ?? 0) - (b.line ?? 0)) || (i - j)).map(([ev]) => ev);
}

function locButton(file, line, endLine) {
  const loc = `${file || "?"}:${line ?? "?"}`;
  if (!state.sources.has(String(file)) || !Number.isInteger(line)) return h("span", { className: "ev-loc" }, loc);
  return h("button", {
    type: "button", className: "ev-loc", title: `Open ${file} at line ${line}`,
    onclick: () => openLog(String(file), line, endLine),
  }, loc);
}

function evidenceLine(ev) {
  const extra = String(ev.text ?? "").split("\n").length - 1;
  return h("li", { className: "ev" },
    locButton(ev.file, ev.line, Number.isInteger(ev.line) ? ev.line + extra : undefined),
    Number.isInteger(ev.rank) ? h("span", { className: "ev-rank" }, `rank ${ev.rank}`) : null,
    h("code", { className: "ev-text" }, highlighted(String(ev.text ?? ""), ev.highlight)),
  );
}

function highlighted(text, hl) {
  let spans = [];
  if (Array.isArray(hl) && hl.length === 2 && hl.every(Number.isInteger)) spans = [hl];
  else if (Array.isArray(hl)) spans = hl.filter((x) => Array.isArray(x) && x.length === 2 && x.every(Number.isInteger));
  spans = spans
    .map(([a, b]) => [Math.max(0, a), Math.min(text.length, b)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  const out = [];
  let pos = 0;
  for (const [a, b] of spans) {
    if (a < pos) continue;
    if (a > pos) out.push(text.slice(pos, a));
    out.push(h("mark", {}, text.slice(a, b)));
    pos = b;
  }
  if (pos < text.length) out.push(text.slice(pos));
  return out;
}

// Rules that read the card's own lines as another cause (logdoc/cards.py): shown open, to be checked.
function alternativesBlock(symptoms) {
  const other = Array.isArray(symptoms) ? symptoms.filter((sy) => sy.alternative) : [];
  if (!other.length) return null;
  return h("div", { className: "block alternatives" },
    h("h4", {}, "Another reading of the same lines (check which one holds)"),
    h("ul", {}, other.map((sy) => h("li", {},
      h("span", { className: "rule-id" }, sy.id || ""), " ", sy.title || "",
      h("span", { className: "diag-meta-inline" }, ` (${ranksPhrase(sy.ranks)}, ${plural(Number.isInteger(sy.count) ? sy.count : 0, "line")})`)))),
  );
}

// Folded: "and N ranks reported the consequence", opened on demand.
function symptomsBlock(symptoms) {
  if (!Array.isArray(symptoms) || !symptoms.length) return null;
  const ranks = new Set();
  let count = 0;
  for (const sy of symptoms) {
    for (const r of rankNumbers(sy.ranks)) ranks.add(r);
    count += Number.isInteger(sy.count) ? sy.count : (sy.evidence || []).length;
  }
  const summary = ranks.size
    ? `and ${plural(ranks.size, "rank")} reported the consequence`
    : `and ${plural(count, "line")} reported the consequence`;
  return h("details", { className: "symptoms" },
    h("summary", {}, summary, h("span", { className: "symptom-count" }, ` (${ranksPhrase([...ranks])}, ${plural(count, "line")})`)),
    symptoms.map((sy) => h("div", { className: "symptom" },
      h("p", { className: "symptom-head" },
        "↳ ", h("span", { className: "rule-id" }, sy.id || ""), " ", sy.title || "",
        h("span", { className: "diag-meta-inline" }, ` (${ranksPhrase(sy.ranks)}, ${plural(Number.isInteger(sy.count) ? sy.count : 0, "line")})`)),
      evidenceBlock(null, sy.evidence),
    )),
  );
}

function renderNotes(notes) {
  return h("section", { className: "notes" },
    h("h3", {}, "Notes"),
    h("ul", {}, notes.map((n) => h("li", {},
      n.id ? h("span", { className: "rule-id" }, n.id) : null, n.id ? " " : null,
      n.title || n.text || fmt(n),
      n.ranks ? h("span", { className: "diag-meta-inline" }, ` (${ranksPhrase(n.ranks)})`) : null,
    ))),
  );
}

// --- the log viewer: a window of the log around one line, that line highlighted ----------------
const VIEW_CONTEXT = 200;
ui.viewerClose.addEventListener("click", () => ui.viewer.close());
ui.viewer.addEventListener("click", (e) => { if (e.target === ui.viewer) ui.viewer.close(); });

function fileLines(name) {
  if (!state.lines.has(name)) state.lines.set(name, state.sources.get(name).split(/\r?\n/));
  return state.lines.get(name);
}

function openLog(file, line, endLine) {
  const lines = fileLines(file);
  const last = Math.max(line, Math.min(endLine || line, line + 50));
  const from = Math.max(1, line - VIEW_CONTEXT);
  const to = Math.min(lines.length, last + VIEW_CONTEXT);
  const rows = [];
  let hit = null;
  for (let n = from; n <= to; n++) {
    const isHit = n >= line && n <= last;
    const row = h("div", { className: isHit ? "vl hit" : "vl", "data-line": n },
      h("span", { className: "vn" }, String(n)), h("span", { className: "vt" }, lines[n - 1] ?? ""));
    if (isHit && !hit) hit = row;
    rows.push(row);
  }
  ui.viewerTitle.textContent = `${file}:${line}${last > line ? `-${last}` : ""}`;
  ui.viewerNote.textContent = `Lines ${from.toLocaleString("en-US")} to ${to.toLocaleString("en-US")} of ${lines.length.toLocaleString("en-US")}.`;
  ui.viewerLines.replaceChildren(...rows);
  if (!ui.viewer.open) ui.viewer.showModal();
  document.documentElement.dataset.viewer = `${file}:${line}`;
  if (hit) hit.scrollIntoView({ block: "center" });
  ui.viewerLines.focus({ preventScroll: true });
}

// --- the picture of the failure: one row per rank, time (or each row's own order) across ------
const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

function span(x, axis) {
  if (!Number.isFinite(x)) return "?";
  if (axis !== "time") return `#${x + 1}`;
  if (x < 60) return `+${x} s`;
  if (x < 3600) return `+${Math.floor(x / 60)} min ${x % 60} s`;
  return `+${Math.floor(x / 3600)} h ${Math.floor((x % 3600) / 60)} min`;
}

function renderPicture(tl) {
  if (!tl || !Array.isArray(tl.rows) || tl.rows.length < 2) return null;
  const width = Math.max(1, tl.span || 0);
  const pct = (x) => `${(2 + (96 * Math.max(0, x)) / width).toFixed(2)}%`;
  const grid = [];
  tl.rows.forEach((row, i) => {
    const strip = s("svg", { class: "tl-strip", width: "100%", height: 22, role: "img",
      "aria-label": `${row.label}: ${row.marks.length} failure line(s)` });
    strip.append(s("line", { class: "tl-base", x1: "2%", x2: "98%", y1: 11, y2: 11 }));
    if (Number.isFinite(row.from) && Number.isFinite(row.to)) {
      strip.append(s("line", { class: row.behind ? "tl-seen behind" : "tl-seen", x1: pct(row.from), x2: pct(row.to), y1: 11, y2: 11 }));
    }
    // the first failure is drawn last, on top of the marks that share its x
    for (const m of [...row.marks.filter((k) => !k.first), ...row.marks.filter((k) => k.first)]) {
      if (!Number.isFinite(m.x)) continue;
      const cls = `tl-mark ${m.nature}${m.first ? " first" : ""}`;
      const g = s("g", { class: cls, tabindex: 0, "data-line": m.line },
        s("title", {}, `${m.file}:${m.line}: ${m.text}`));
      if (m.first) g.append(s("circle", { class: "ring", cx: pct(m.x), cy: 11, r: 9 }));
      g.append(s("circle", { cx: pct(m.x), cy: 11, r: m.nature === "symptom" ? 4 : 5.5 }));
      if (state.sources.has(String(m.file))) {
        g.addEventListener("click", () => openLog(String(m.file), m.line));
        g.addEventListener("keydown", (e) => { if (e.key === "Enter") openLog(String(m.file), m.line); });
      }
      strip.append(g);
    }
    const label = h("div", { className: row.behind ? "tl-label behind" : "tl-label" },
      row.label, row.host && row.ranks.length ? h("span", { className: "tl-host" }, ` ${row.host}`) : null);
    const stateText = [row.behind ? h("strong", { className: "tl-behind" }, "behind: ") : null, row.state || "",
      row.more ? ` (+${row.more} more lines)` : ""];
    grid.push(h("div", { className: "tl-row" + (i === (tl.first && tl.first.row) ? " has-first" : "") },
      label, h("div", { className: "tl-cell" }, strip), h("div", { className: "tl-state" }, stateText)));
  });
  const axis = tl.axis === "time"
    ? h("div", { className: "tl-axis" }, h("span", {}, tl.start || "+0 s"), h("span", {}, span(tl.span || 0, "time")))
    : h("div", { className: "tl-axis" }, h("span", {}, "each row in its own order"), h("span", {}, "(no usable time in the logs)"));
  const first = tl.first;
  const firstRow = first ? tl.rows[first.row] : null;
  return h("figure", { className: "picture", "aria-label": "The failure, rank by rank" },
    h("figcaption", {}, h("h3", {}, "The failure, rank by rank"),
      h("p", { className: "tl-legend" },
        h("span", { className: "key first" }, "first failure"), h("span", { className: "key root" }, "root cause"),
        h("span", { className: "key neutral" }, "error"), h("span", { className: "key consequence" }, "consequence"),
        h("span", { className: "key seen" }, "output seen"))),
    h("div", { className: "tl-grid" }, grid, h("div", { className: "tl-row tl-axis-row" }, h("div", {}), axis, h("div", {}))),
    first && firstRow ? h("p", { className: "tl-first" }, h("strong", {}, "First failure: "), `${firstRow.label}, `,
      locButton(first.file, first.line), ` ${first.text}`) : null,
  );
}
