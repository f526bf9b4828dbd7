// Run the core test suite under Pyodide in Node, offline.
//
//   node tests/pyodide/run.mjs --pyodide DIR --wheels LARK.whl,LOGDOC.whl --repo REPO
//        [--kb KB.json --page-out PAGE.json] [--test-wheels A.whl,B.whl,...] [--report OUT.json]
//        [-- PYTEST ARGS]
//
// DIR holds the pinned Pyodide runtime files (logdoc.web.build.pyodide_files gives one). The
// repository is mounted at /repo (no bytecode, no pytest cache is written there); logdoc is
// imported from its wheel in site-packages, as in the browser.
//   1. page path (with --kb): only the page's wheels are installed; page_path.py explains every
//      sample through logdoc.web.entry and the reports go to PAGE.json.
//   2. suite (with --test-wheels): the pytest stack is installed and inside.py runs the core
//      test suite.
// Prints the pytest output, then one line `PYODIDE-RESULT {json}`; exit code = pytest's (or 0
// when only the page path ran).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const out = { pytest: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") {
      out.pytest = argv.slice(i + 1);
      break;
    }
    out[argv[i].replace(/^--/, "")] = argv[i + 1];
    i++;
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
const pyodideDir = path.resolve(args.pyodide);
const repo = path.resolve(args.repo);
const wheels = args.wheels.split(",").filter(Boolean).map((w) => path.resolve(w));
const here = path.dirname(new URL(import.meta.url).pathname);

async function main() {
  const t0 = performance.now();
  const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
  const pyodide = await loadPyodide({
    indexURL: pyodideDir + path.sep,
    packageCacheDir: pyodideDir + path.sep,
  });
  // Raw streams, so that pytest's progress dots stay on one line.
  pyodide.setStdout({ write: (buf) => { process.stdout.write(buf); return buf.length; } });
  pyodide.setStderr({ write: (buf) => { process.stderr.write(buf); return buf.length; } });
  const bootMs = Math.round(performance.now() - t0);

  // Install each wheel straight into site-packages (what loadPackage(url) does in the page,
  // without any lock file lookup or download).
  const t1 = performance.now();
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  for (const wheel of wheels) {
    const data = new Uint8Array(fs.readFileSync(wheel));
    pyodide.unpackArchive(data, "wheel", { extractDir: sitePackages });
  }
  const installMs = Math.round(performance.now() - t1);

  pyodide.FS.mkdirTree("/repo");
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: repo }, "/repo");
  pyodide.runPython("import sys; sys.dont_write_bytecode = True");

  const result = { boot_ms: bootMs, install_ms: installMs, wheels: wheels.map((w) => path.basename(w)) };

  if (args.kb) {
    const t = performance.now();
    pyodide.globals.set("KB_JSON", fs.readFileSync(args.kb, "utf-8"));
    const page = JSON.parse(await pyodide.runPythonAsync(fs.readFileSync(path.join(here, "page_path.py"), "utf-8")));
    if (args["page-out"]) fs.writeFileSync(args["page-out"], JSON.stringify(page) + "\n");
    result.page = {
      ms: Math.round(performance.now() - t),
      samples: Object.keys(page.reports).length,
      absent: page.absent,
      init_ms: page.init_ms,
      rules: page.info.rules,
      problems: page.info.problems,
      regex_engine: page.info.regex_engine,
    };
  }

  if (!args["test-wheels"]) {
    result.total_ms = Math.round(performance.now() - t0);
    if (args.report) fs.writeFileSync(args.report, JSON.stringify(result, null, 2) + "\n");
    process.stdout.write(`PYODIDE-RESULT ${JSON.stringify(result)}\n`);
    return 0;
  }
  for (const wheel of args["test-wheels"].split(",").filter(Boolean)) {
    pyodide.unpackArchive(new Uint8Array(fs.readFileSync(path.resolve(wheel))), "wheel", { extractDir: sitePackages });
  }
  // The page path imported logdoc without PyYAML; let the suite import it afresh.
  pyodide.runPython("import sys\nfor m in [m for m in sys.modules if m == 'logdoc' or m.startswith('logdoc.')]: del sys.modules[m]");
  result.test_wheels = args["test-wheels"].split(",").filter(Boolean).map((w) => path.basename(w));

  const inside = fs.readFileSync(path.join(here, "inside.py"), "utf-8");
  pyodide.globals.set("PYTEST_ARGS", pyodide.toPy(args.pytest));
  const t2 = performance.now();
  let code = 3;
  let summary = {};
  try {
    const out = await pyodide.runPythonAsync(inside);
    summary = JSON.parse(out);
    code = summary.exit_code;
  } catch (err) {
    summary = { error: String(err && err.message || err) };
    process.stderr.write(summary.error + "\n");
  }
  summary.tests_ms = Math.round(performance.now() - t2);
  result.suite = summary;
  result.total_ms = Math.round(performance.now() - t0);
  if (args.report) fs.writeFileSync(args.report, JSON.stringify(result, null, 2) + "\n");
  process.stdout.write(`PYODIDE-RESULT ${JSON.stringify(result)}\n`);
  return code;
}

try {
  process.exitCode = await main();
} catch (err) {
  // One readable line, not the minified Pyodide source that Node prints for uncaught errors.
  const message = String((err && err.message) || err);
  process.stderr.write(message + "\n");
  process.stdout.write(`PYODIDE-RESULT ${JSON.stringify({ error: message.slice(-4000) })}\n`);
  process.exitCode = 3;
}
