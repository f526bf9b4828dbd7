// Build step of `logdoc web build`: ship the modules the page imports as Python bytecode.
//
//   node bytecode.mjs --pyodide RUNTIME_DIR --kb KB.json --out OUT_DIR WHEEL...
//
// Pyodide's python_stdlib.zip holds .py sources only, and so do the lark and logdoc wheels:
// without bytecode, every module imported while the page starts is compiled from source inside
// WebAssembly (about 60% of the start on a slow CPU). Bytecode must come from the very
// interpreter that will load it (the .pyc format and the magic number are per CPython
// version), so this script runs the pinned Pyodide itself, in Node, offline:
//
//   1. boots Pyodide from RUNTIME_DIR, installs the wheels and does what the page does
//      (logdoc.web.entry: init with kb.json, warm-up, explain, Markdown, redacted Markdown);
//   2. every stdlib or wheel module then in sys.modules is compiled (sourceless .pyc,
//      unchecked-hash header, no column table) and replaces its .py in a copy of python_stdlib.zip and of each
//      wheel (RECORD updated); every other module stays source and is compiled on demand;
//   3. boots a second Pyodide from those copies, does the same work, and fails unless it gives
//      the same reports and Markdown and every module counted in step 2 came from bytecode.
//
// Writes OUT_DIR/python_stdlib.zip, OUT_DIR/<each wheel's name> and OUT_DIR/bytecode.json.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

function parseArgs(argv) {
  const out = { wheels: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) {
      out[argv[i].slice(2)] = argv[i + 1];
      i++;
    } else out.wheels.push(argv[i]);
  }
  return out;
}

const PY = String.raw`
import base64, hashlib, importlib.util, io, json, marshal, sys, traceback, zipfile

STDLIB = "/lib/python%d%d.zip/" % sys.version_info[:2]
SAMPLE = (
    "node0:100:100 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "node0:100:100 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.7<0>\n"
    "node0:100:100 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.1<33333> failed : Software caused connection abort\n"
    "[rank3]:[E1129 10:03:12.345678 100 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600010 milliseconds before timing out.\n"
    "Traceback (most recent call last):\n"
    '  File "train.py", line 10, in <module>\n'
    "    dist.all_reduce(t)\n"
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
)


def workload(kb_text):
    """What the page does; returns what must not change (no timings)."""
    out = {}
    try:
        import logdoc.web.entry as entry

        info = json.loads(entry.init(kb_text))
        info.pop("init_ms", None)
        out["info"] = info
        out["warm"] = json.loads(entry.warm_up()).get("ok")
        res = json.loads(entry.explain(json.dumps([["a.log", SAMPLE]]), False))
        out["report"], out["markdown"] = res["report"], res["markdown"]
        out["redacted"] = json.loads(entry.markdown_again(True))["markdown"]
    except Exception:
        out["error"] = traceback.format_exc()
    return out


def loaded_files(site_packages):
    """(zip member or site-packages path, loaded from bytecode?) of every module imported."""
    stdlib, wheels = {}, {}
    for mod in list(sys.modules.values()):
        origin = getattr(getattr(mod, "__spec__", None), "origin", None) or ""
        if origin.startswith(STDLIB):
            stdlib[origin[len(STDLIB):].removesuffix("c")] = origin.endswith(".pyc")
        elif origin.startswith(site_packages + "/"):
            wheels[origin[len(site_packages) + 1:].removesuffix("c")] = origin.endswith(".pyc")
    return stdlib, wheels


def pyc(source, filename):
    code = compile(source, filename, "exec", dont_inherit=True)
    # flags 0b01: hash-based, source not checked (there is none: the .py is replaced)
    return (importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little")
            + importlib.util.source_hash(source) + marshal.dumps(code))


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def rewrite(src, dest, names, filename_prefix):
    """Copy zip src to dest with each member in names replaced by its bytecode."""
    count = 0
    with zipfile.ZipFile(src) as zin:
        infos = zin.infolist()
        new = {}
        for info in infos:
            if info.filename in names:
                new[info.filename] = pyc(zin.read(info), filename_prefix + info.filename)
        record = next((i.filename for i in infos if i.filename.endswith(".dist-info/RECORD")), None)
        with zipfile.ZipFile(dest, "w") as zout:
            for info in infos:
                data = zin.read(info)
                if info.filename in new:
                    zi = zipfile.ZipInfo(info.filename + "c", info.date_time)
                    zi.external_attr = info.external_attr
                    zi.compress_type = zipfile.ZIP_DEFLATED
                    zout.writestr(zi, new[info.filename], compresslevel=9)
                    count += 1
                    continue
                if info.filename == record:
                    lines = []
                    for line in data.decode("utf-8").splitlines():
                        name = line.rsplit(",", 2)[0]
                        lines.append(record_line(name + "c", new[name]) if name in new else line)
                    data = ("\n".join(lines) + "\n").encode("utf-8")
                zout.writestr(info, data)
    return count
`;

async function boot(runtime, stdlib, wheels, args = []) {
  const { loadPyodide } = await import(pathToFileURL(path.join(runtime, "pyodide.mjs")).href);
  const t = performance.now();
  const pyodide = await loadPyodide({
    indexURL: runtime + path.sep,
    packageCacheDir: runtime + path.sep,
    stdLibURL: stdlib,
    args,
    stdout: () => {},
    stderr: (line) => process.stderr.write(`[python] ${line}\n`),
  });
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  for (const wheel of wheels) {
    pyodide.unpackArchive(new Uint8Array(fs.readFileSync(wheel)), "wheel", { extractDir: sitePackages });
  }
  pyodide.runPython("import sys; sys.dont_write_bytecode = True");
  const bootMs = Math.round(performance.now() - t);
  pyodide.runPython(PY);
  return { pyodide, sitePackages, bootMs };
}

function run(py, sitePackages, kb) {
  py.globals.set("KB_TEXT", kb);
  py.globals.set("SITE_PACKAGES", sitePackages);
  const t = performance.now();
  const out = JSON.parse(py.runPython("json.dumps(workload(KB_TEXT))"));
  const ms = Math.round(performance.now() - t);
  const [stdlib, wheels] = JSON.parse(py.runPython("json.dumps(loaded_files(SITE_PACKAGES))"));
  return { out, ms, stdlib, wheels };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const runtime = path.resolve(a.pyodide);
  const outDir = path.resolve(a.out);
  const kb = fs.readFileSync(a.kb, "utf-8");
  const wheels = a.wheels.map((w) => path.resolve(w));
  fs.mkdirSync(outDir, { recursive: true });

  // 1. the page's work from sources
  // -X no_debug_ranges: the bytecode has no column table (tracebacks keep file and line, lose
  // the ^^^ marks), which makes it about a third smaller.
  const src = await boot(runtime, path.join(runtime, "python_stdlib.zip"), wheels, ["-X", "no_debug_ranges"]);
  const first = run(src.pyodide, src.sitePackages, kb);
  if (first.out.error) throw new Error(`the page's Python work failed:\n${first.out.error}`);

  // 2. bytecode for what it imported
  const py = src.pyodide;
  const stdlibNames = Object.keys(first.stdlib).sort();
  py.FS.writeFile("/tmp/stdlib.zip", new Uint8Array(fs.readFileSync(path.join(runtime, "python_stdlib.zip"))));
  py.globals.set("NAMES", py.toPy(stdlibNames));
  const stdlibCount = py.runPython(`rewrite("/tmp/stdlib.zip", "/tmp/stdlib.out.zip", set(NAMES), STDLIB)`);
  fs.writeFileSync(path.join(outDir, "python_stdlib.zip"), py.FS.readFile("/tmp/stdlib.out.zip"));
  const wheelNames = Object.keys(first.wheels).sort();
  const perWheel = {};
  const outWheels = [];
  for (const wheel of wheels) {
    const name = path.basename(wheel);
    py.FS.writeFile(`/tmp/${name}`, new Uint8Array(fs.readFileSync(wheel)));
    py.globals.set("NAMES", py.toPy(wheelNames));
    perWheel[name] = py.runPython(`rewrite("/tmp/${name}", "/tmp/out-${name}", set(NAMES), SITE_PACKAGES + "/")`);
    const dest = path.join(outDir, name);
    fs.writeFileSync(dest, py.FS.readFile(`/tmp/out-${name}`));
    outWheels.push(dest);
  }

  // 3. the same work from the bytecode: same result, nothing compiled from source
  const bc = await boot(runtime, path.join(outDir, "python_stdlib.zip"), outWheels);
  const second = run(bc.pyodide, bc.sitePackages, kb);
  if (second.out.error) throw new Error(`the page's Python work failed with bytecode:\n${second.out.error}`);
  if (JSON.stringify(second.out) !== JSON.stringify(first.out)) {
    throw new Error("the page's Python work gives another result with bytecode than from sources");
  }
  const fromSource = [
    ...Object.entries(second.stdlib).filter(([n, b]) => !b && n in first.stdlib),
    ...Object.entries(second.wheels).filter(([n, b]) => !b && n in first.wheels),
  ].map(([n]) => n);
  if (fromSource.length) throw new Error(`still compiled from source: ${fromSource.join(", ")}`);

  const summary = {
    pyodide_stdlib_modules: stdlibCount,
    wheel_modules: perWheel,
    source_boot_ms: src.bootMs,
    source_work_ms: first.ms,
    bytecode_boot_ms: bc.bootMs,
    bytecode_work_ms: second.ms,
  };
  fs.writeFileSync(path.join(outDir, "bytecode.json"), JSON.stringify(summary, null, 2) + "\n");
  console.log(JSON.stringify(summary));
}

main().catch((err) => {
  console.error(String(err && err.stack || err));
  process.exit(1);
});
