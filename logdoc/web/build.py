"""Build and serve logdoc's static web page.

``build_site(out_dir)`` writes a folder that any static web host can serve:

    index.html, app.js, worker.js, style.css   the page (from ``logdoc/web/static/``)
    kb.json                                    the knowledge base, compiled by logdoc.kb.compile_rules
    pyodide/<version>/                         the Pyodide runtime (npm package ``pyodide``, pinned)
    wheels/<sha256[:16]>/*.whl                 lark (PyPI, pinned) and logdoc (built from this tree)
    pyodide/<version>/python_stdlib-<sha>.zip  with Node: the stdlib, the page's modules as bytecode
    _headers                                   the response headers for hosts that read that file

Third-party files are fetched once into a cache and verified against the sha256 sums pinned
below; the build fails on any mismatch. The first build needs ``npm`` and ``pip`` with access
to their registries; later builds run offline from the cache.

``serve(directory)`` serves such a folder on 127.0.0.1 with the right MIME types (wasm) and the
same Content-Security-Policy as the page's meta tag, also sent as a header so that it covers the
Web Worker too.

One module, over 500 lines: it is one build script, each step (runtime, wheels, knowledge base,
bytecode, headers) a function :func:`build_site` calls once in order, plus the small server for its
result; the steps share only the output folder and the download cache.
"""
from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from functools import partial
from pathlib import Path

# --- pins --------------------------------------------------------------------------------------

PYODIDE_VERSION = "314.0.7"
#: sha256 of ``npm pack pyodide@314.0.7`` (the registry tarball).
PYODIDE_TARBALL_SHA256 = "66b7949e5a0cba2250b586d7e368bf12fb482800748d182c4618254b685ffaa0"
#: The runtime files the page needs, with their sha256 (checked whatever their source).
PYODIDE_FILES = {
    "pyodide.mjs": "6f1d60f7bf529beb300f0f47983c921d3982363640ba20af0e38efdddbc66109",
    "pyodide.asm.mjs": "f7cdc8ece80678ceb712f8e65ebe6d3a83203a180c399865f49612a051693635",
    "pyodide.asm.wasm": "cc36e3cab04fdfc9a63ff13eb52eae2b911bf46c025cc7b281f394bd3de1d5e6",
    "python_stdlib.zip": "fa1957e5777068fc4f7437f96d860ae2fbe9c19732ba06c84e004ec16dd7dd7a",
    "pyodide-lock.json": "5dc2fc119108bc148c7457dc86e7675b5c87e1cafd420b9c34c1eaef7b36c010",
}
#: Pure-Python wheels from PyPI: (requirement, file name, sha256).
PYPI_WHEELS = [
    (
        "lark==1.3.1",
        "lark-1.3.1-py3-none-any.whl",
        "c629b661023a014c37da873b4ff58a817398d12635d3bbb2c5a03be7fe5d1e12",
    ),
]

#: One policy for the meta tag and the served header. Pyodide needs 'wasm-unsafe-eval' to
#: compile its wasm; nothing else outside 'self' is allowed (checked in headless Chromium).
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
    "connect-src 'self'; img-src 'self'; style-src 'self'; font-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'"
)
#: Only a header can carry these (a meta tag must not, or the browser logs an error).
CSP_HEADER_ONLY = "; frame-ancestors 'none'"

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: Compiles the modules the page imports to bytecode with the pinned Pyodide, in Node.
BYTECODE_SCRIPT = Path(__file__).resolve().parent / "bytecode.mjs"
STATIC_FILES = ("index.html", "app.js", "worker.js", "style.css")
#: The sample behind the page's "Try an example" button: in a checkout ``samples/<name>/``, in a
#: wheel ``logdoc/_data/example/`` (pyproject.toml force-includes it).
EXAMPLE_SAMPLE = "nccl-watchdog-cascade-lagging-rank"

MIME_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".css": "text/css",
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".svg": "image/svg+xml",
}


class BuildError(RuntimeError):
    """The site could not be built (missing tool, checksum mismatch, bad core)."""


# --- small helpers -----------------------------------------------------------------------------


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(partial(f.read, 1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(cmd: list[str], *, cwd: Path | None = None, env: dict | None = None) -> None:
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    except FileNotFoundError as exc:
        raise BuildError(f"{cmd[0]!r} is needed to build the web page and was not found") from exc
    if proc.returncode != 0:
        raise BuildError(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}")


def source_tree() -> Path | None:
    """The repository root when logdoc runs from a checkout (pyproject.toml next to it)."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and 'name = "logdoc"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def default_cache_dir() -> Path:
    env = os.environ.get("LOGDOC_WEB_CACHE")
    if env:
        return Path(env)
    root = source_tree()
    if root is not None:
        return root / ".cache" / "web"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "logdoc" / "web"


# --- third-party files -------------------------------------------------------------------------


def pyodide_files(cache_dir: Path) -> Path:
    """Return a folder holding the verified Pyodide runtime files, fetching them if needed.

    Sources, in order: the cache; ``tools/web/node_modules/pyodide`` of a checkout that ran
    ``npm ci``; ``npm pack pyodide@VERSION`` into the cache (the tarball's sha256 is checked).
    """
    dest = cache_dir / f"pyodide-{PYODIDE_VERSION}"
    if _verified(dest):
        return dest
    root = source_tree()
    candidates = []
    if root is not None:
        candidates.append(root / "tools" / "web" / "node_modules" / "pyodide")
    for folder in candidates:
        if _verified(folder):
            _copy_runtime(folder, dest)
            return dest
    tarball = cache_dir / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tarball.is_file() or _sha256_file(tarball) != PYODIDE_TARBALL_SHA256:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            if shutil.which("npm") is None:
                raise BuildError(
                    f"the Pyodide {PYODIDE_VERSION} runtime is not in the cache {cache_dir} and "
                    "npm was not found: install Node.js with npm (Debian: apt-get install npm), "
                    "or point --cache / LOGDOC_WEB_CACHE at a cache that has it"
                )
            _run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", tmp,
                  "--silent"])
            got = Path(tmp) / f"pyodide-{PYODIDE_VERSION}.tgz"
            if not got.is_file():
                raise BuildError(f"npm pack did not produce {got.name}")
            os.replace(got, tarball)
    digest = _sha256_file(tarball)
    if digest != PYODIDE_TARBALL_SHA256:
        raise BuildError(
            f"{tarball} has sha256 {digest}, expected {PYODIDE_TARBALL_SHA256}; refusing to use it"
        )
    tmp_dest = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp_dest, ignore_errors=True)
    tmp_dest.mkdir(parents=True)
    with tarfile.open(tarball, "r:gz") as tar:
        for name in PYODIDE_FILES:
            member = tar.getmember(f"package/{name}")
            data = tar.extractfile(member).read()
            (tmp_dest / name).write_bytes(data)
    if not _verified(tmp_dest):
        raise BuildError(f"the files in {tarball} do not match the pinned sha256 sums")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp_dest, dest)
    return dest


def _verified(folder: Path) -> bool:
    if not folder.is_dir():
        return False
    for name, digest in PYODIDE_FILES.items():
        path = folder / name
        if not path.is_file():
            return False
        if _sha256_file(path) != digest:
            if folder.name.startswith("pyodide-"):  # our cache: a mismatch is a hard error
                raise BuildError(f"{path} does not match its pinned sha256 {digest}")
            return False
    return True


def _copy_runtime(src: Path, dest: Path) -> None:
    tmp_dest = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp_dest, ignore_errors=True)
    tmp_dest.mkdir(parents=True)
    for name in PYODIDE_FILES:
        shutil.copyfile(src / name, tmp_dest / name)
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp_dest, dest)


def pypi_wheels(cache_dir: Path) -> list[Path]:
    """The pinned third-party wheels, downloaded once with pip and verified by sha256."""
    folder = cache_dir / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for req, filename, digest in PYPI_WHEELS:
        path = folder / filename
        if not path.is_file() or _sha256_file(path) != digest:
            with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
                reqfile = Path(tmp) / "req.txt"
                reqfile.write_text(f"{req} --hash=sha256:{digest}\n", encoding="utf-8")
                _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                      "--only-binary=:all:", "--require-hashes", "-r", str(reqfile), "-d", tmp])
                got = Path(tmp) / filename
                if not got.is_file():
                    raise BuildError(f"pip download {req} did not produce {filename}")
                os.replace(got, path)
        found = _sha256_file(path)
        if found != digest:
            raise BuildError(f"{path} has sha256 {found}, expected {digest}")
        out.append(path)
    return out


def build_logdoc_wheel(dest_dir: Path) -> Path:
    """The logdoc wheel for the page.

    From a source checkout: built from the tree (``pip wheel --no-deps``). From an installed
    wheel (no checkout next to the package): repacked from the installed package itself, which
    carries everything the page needs (the modules and ``logdoc/_data``), see
    :func:`wheel_from_installation`.
    """
    root = source_tree()
    if root is None:
        return wheel_from_installation(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dest_dir)]
    try:
        import hatchling  # noqa: F401

        cmd.append("--no-build-isolation")  # offline and faster when the backend is installed
    except ImportError:
        pass
    _run(cmd + [str(root)])
    wheels = sorted(dest_dir.glob("logdoc-*.whl"))
    if len(wheels) != 1:
        raise BuildError(f"expected one logdoc wheel in {dest_dir}, found {wheels}")
    return wheels[0]


#: A fixed timestamp for repacked wheels, so that the same installation gives the same bytes
#: (and the bytecode cache, keyed by the wheel's sha256, is reused).
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)


def wheel_from_installation(dest_dir: Path) -> Path:
    """Repack the installed ``logdoc`` package (modules and ``_data``) as a pure-Python wheel.

    A non-editable install has the grammars and the knowledge base under ``logdoc/_data``;
    ``.pyc`` caches are left out. The metadata is the installation's own ``METADATA`` when
    its ``.dist-info`` is found next to the package, else a minimal one.
    """
    import base64

    from logdoc import __version__

    package = Path(__file__).resolve().parents[1]
    data = package / "_data"
    if not ((data / "grammars").is_dir() and (data / "knowledge").is_dir()):
        raise BuildError(
            f"{package} has no _data/grammars and _data/knowledge; install logdoc from a wheel "
            "(python -m pip install .) or run the build from a source checkout"
        )
    files: list[tuple[str, bytes]] = []
    for path in sorted(package.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        if path.relative_to(package).parts[:2] == ("_data", "example"):
            continue  # the page's example is its own file (example.json), not part of the core
        files.append(("logdoc/" + path.relative_to(package).as_posix(), path.read_bytes()))
    metadata = None
    for info in sorted(package.parent.glob("logdoc-*.dist-info")):
        if (info / "METADATA").is_file():
            metadata = (info / "METADATA").read_bytes()
            version = info.name[len("logdoc-"):-len(".dist-info")]
            break
    if metadata is None:
        version = __version__
        metadata = f"Metadata-Version: 2.1\nName: logdoc\nVersion: {version}\n".encode()
    dist_info = f"logdoc-{version}.dist-info"
    files.append((f"{dist_info}/METADATA", metadata))
    files.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: logdoc web build\n"
                                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    record = []
    for name, blob in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(blob).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(blob)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    dest_dir.mkdir(parents=True, exist_ok=True)
    wheel = dest_dir / f"logdoc-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, blob in files:
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, blob)
    return wheel


def _check_pure_wheel(path: Path) -> None:
    # The page cannot load compiled extensions: every wheel must be py3-none-any.
    if not path.name.endswith("-none-any.whl"):
        raise BuildError(f"{path.name} is not a pure-Python wheel; Pyodide could not load it")
    with zipfile.ZipFile(path) as zf:
        bad = zf.testzip()
        if bad is not None:
            raise BuildError(f"{path.name} is corrupt ({bad})")


def compile_kb() -> dict:
    """The knowledge base as JSON, via the CLI's own loader and validation."""
    from logdoc import kb

    ruleset = kb.load_rules()
    # Same gate as `logdoc rules lint`: an error fails the build, a warning does not.
    errors = [str(p) for p in ruleset.problems if getattr(p, "level", "error") == "error"]
    if errors:
        raise BuildError("the knowledge base has errors (see `logdoc rules lint`):\n" + "\n".join(errors))
    rules = kb.compile_rules(ruleset)
    json.dumps(rules)  # must be JSON-able; raises TypeError with a useful message otherwise
    # The page loads it with load_compiled: check now that this works and loses nothing.
    back = kb.load_compiled(rules)
    back_errors = [str(p) for p in back.problems if getattr(p, "level", "error") == "error"]
    if back_errors:
        raise BuildError("kb.json does not load back: " + "; ".join(back_errors))
    if len(list(back)) != len(list(ruleset)):
        raise BuildError(f"kb.json loads {len(list(back))} rules, the YAML has {len(list(ruleset))}")
    return rules


def bytecode_files(
    runtime: Path, wheels: list[Path], kb_bytes: bytes, cache_dir: Path, *, required: bool = False
) -> tuple[Path | None, str]:
    """A folder with python_stdlib.zip and the wheels, the page's modules replaced by bytecode.

    Pyodide's stdlib zip and the wheels hold sources only; compiling them inside WebAssembly
    was most of the page's start. ``bytecode.mjs`` runs the pinned Pyodide in Node to compile
    what the page imports, then checks that the page's work gives the same result from the
    bytecode. The result is cached by the sha256 of every input. Returns ``(folder, "")``, or
    ``(None, reason)`` when Node is missing or the check could not run (the page then ships
    the sources, as before); with ``required=True`` that is a ``BuildError`` instead.
    """
    h = hashlib.sha256()
    h.update(PYODIDE_VERSION.encode())
    for name in sorted(PYODIDE_FILES):
        h.update(PYODIDE_FILES[name].encode())
    h.update(BYTECODE_SCRIPT.read_bytes())
    h.update(kb_bytes)
    for w in wheels:
        h.update(w.name.encode() + b"\0" + _sha256_file(w).encode())
    dest = cache_dir / "bytecode" / h.hexdigest()[:24]
    names = ["python_stdlib.zip", *(w.name for w in wheels), "bytecode.json"]
    if all((dest / n).is_file() for n in names):
        return dest, ""
    node = shutil.which("node")
    if node is None:
        if required:
            raise BuildError("'node' is needed to compile the page's modules to bytecode")
        return None, "node was not found"
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        kb_file = Path(tmp) / "kb.json"
        kb_file.write_bytes(kb_bytes)
        out = Path(tmp) / "out"
        proc = subprocess.run(
            [node, str(BYTECODE_SCRIPT), "--pyodide", str(runtime), "--kb", str(kb_file),
             "--out", str(out), *map(str, wheels)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        if proc.returncode != 0 or not all((out / n).is_file() for n in names):
            reason = "bytecode.mjs failed: " + proc.stdout.strip()[-2000:]
            if required:
                raise BuildError(reason)
            return None, reason
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(out, dest)
    return dest, ""


# --- the site ----------------------------------------------------------------------------------


def example_dir() -> Path | None:
    """The bundled example's folder (the log files of one sample), or None."""
    packaged = Path(__file__).resolve().parents[1] / "_data" / "example"
    if packaged.is_dir():
        return packaged
    root = source_tree()
    if root is not None and (root / "samples" / EXAMPLE_SAMPLE).is_dir():
        return root / "samples" / EXAMPLE_SAMPLE
    return None


def example_json() -> bytes | None:
    """``{"title", "files": [[name, text], ...]}`` for the page's "Try an example" button."""
    folder = example_dir()
    if folder is None:
        return None
    files = [[p.name, p.read_text(encoding="utf-8", errors="replace")]
             for p in sorted(folder.iterdir()) if p.is_file() and p.suffix == ".log"]
    if not files:
        return None
    title = ""
    meta = folder / "sample.yaml"
    if meta.is_file():
        for line in meta.read_text(encoding="utf-8").splitlines():
            if line.startswith("title:"):
                title = line.split(":", 1)[1].strip().strip('"').strip("'")
                break
    data = {"title": title, "files": files}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")



def _fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    if "{{" in template and "}}" in template.split("{{", 1)[1]:
        marker = template.split("{{", 1)[1].split("}}", 1)[0]
        if marker.replace("_", "").isalnum():
            raise BuildError(f"unfilled placeholder {{{{{marker}}}}} in a static file")
    return template


def _check_out_dir(out: Path) -> None:
    """Refuse (before any work) a path that is a file or a non-empty folder we did not write."""
    if out.exists():
        if not out.is_dir():
            raise BuildError(f"{out} exists and is not a folder")
        if any(out.iterdir()) and not (out / "site.json").is_file():
            raise BuildError(
                f"{out} is not empty and was not written by logdoc web build; "
                "choose an empty or new folder"
            )


def _prepare_out_dir(out: Path) -> None:
    _check_out_dir(out)
    if out.exists():
        for entry in list(out.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    out.mkdir(parents=True, exist_ok=True)


def build_site(
    out_dir: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    logdoc_wheel: str | os.PathLike | None = None,
    kb_json: dict | None = None,
    bytecode: bool | None = None,
) -> dict:
    """Write the static site into ``out_dir`` and return its sizes.

    ``logdoc_wheel`` uses a prebuilt wheel instead of building one from the source tree;
    ``kb_json`` uses an already compiled knowledge base (both are for tests and packagers).
    ``bytecode``: ship the modules the page imports as bytecode (see :func:`bytecode_files`);
    ``None`` (default) does so when Node is available, ``True`` requires it, ``False`` ships
    sources only.
    Returns ``{"out": str, "files": {path: {"bytes", "gzip"}}, "total_bytes", "total_gzip",
    "pyodide": version, "wheels": [names]}``.
    """
    out = Path(out_dir).resolve()
    cache = Path(cache_dir).resolve() if cache_dir else default_cache_dir()
    _check_out_dir(out)
    cache.mkdir(parents=True, exist_ok=True)

    runtime = pyodide_files(cache)
    third_party = pypi_wheels(cache)
    kb_data = kb_json if kb_json is not None else compile_kb()
    kb_bytes = json.dumps(kb_data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    kb_bytes = kb_bytes.encode("utf-8")

    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        wheel = Path(logdoc_wheel) if logdoc_wheel else build_logdoc_wheel(Path(tmp))
        wheels = [*third_party, wheel]
        for w in wheels:
            _check_pure_wheel(w)
        compiled, skipped = (None, "bytecode=False") if bytecode is False else bytecode_files(
            runtime, wheels, kb_bytes, cache, required=bool(bytecode))
        _prepare_out_dir(out)

        pyodide_rel = f"pyodide/{PYODIDE_VERSION}/"
        (out / pyodide_rel).mkdir(parents=True)
        for name in PYODIDE_FILES:
            if name == "python_stdlib.zip" and compiled is not None:
                continue
            shutil.copyfile(runtime / name, out / pyodide_rel / name)
        if compiled is not None:
            # a content-addressed name: the versioned folder is served as immutable
            data = (compiled / "python_stdlib.zip").read_bytes()
            stdlib_rel = f"{pyodide_rel}python_stdlib-{_sha256(data)[:16]}.zip"
            (out / stdlib_rel).write_bytes(data)
            wheels = [compiled / w.name for w in wheels]
            bytecode_info = json.loads((compiled / "bytecode.json").read_text(encoding="utf-8"))
        else:
            stdlib_rel = f"{pyodide_rel}python_stdlib.zip"
            bytecode_info = {"skipped": skipped}

        wheel_urls = []
        for w in wheels:
            data = w.read_bytes()
            rel = f"wheels/{_sha256(data)[:16]}/{w.name}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
            wheel_urls.append(rel)

    (out / "kb.json").write_bytes(kb_bytes)
    example = example_json()
    if example is not None:
        (out / "example.json").write_bytes(example)

    static = {name: (STATIC_DIR / name).read_text(encoding="utf-8") for name in STATIC_FILES}
    config = {
        "pyodide": pyodide_rel,
        "pyodideVersion": PYODIDE_VERSION,
        "stdlib": stdlib_rel,
        "wheels": wheel_urls,
        "kb": f"kb.json?v={_sha256(kb_bytes)[:12]}",
        # what the worker fetches (the two .mjs files arrive through import instead)
        "fetchBytes": sum(
            (out / p).stat().st_size
            for p in [
                *(pyodide_rel + n for n in PYODIDE_FILES
                  if not n.endswith(".mjs") and n != "python_stdlib.zip"),
                stdlib_rel,
                *wheel_urls,
                "kb.json",
            ]
        ),
    }
    worker = _fill(static["worker.js"], {
        "PYODIDE_MJS": f"./{pyodide_rel}pyodide.mjs",
        "CONFIG": json.dumps(config, sort_keys=True),
    })
    (out / "worker.js").write_text(worker, encoding="utf-8")
    app = _fill(static["app.js"], {
        "WORKER_URL": f"worker.js?v={_sha256(worker.encode())[:12]}",
        "EXAMPLE_URL": f"example.json?v={_sha256(example)[:12]}" if example is not None else "",
    })
    (out / "app.js").write_text(app, encoding="utf-8")
    css = static["style.css"]
    (out / "style.css").write_text(css, encoding="utf-8")
    shutil.copyfile(STATIC_DIR / "favicon.svg", out / "favicon.svg")
    html = _fill(static["index.html"], {
        "CSP": CSP,
        "APP_JS": f"app.js?v={_sha256(app.encode())[:12]}",
        "STYLE_CSS": f"style.css?v={_sha256(css.encode())[:12]}",
        "PYODIDE_VERSION": PYODIDE_VERSION,
    })
    (out / "index.html").write_text(html, encoding="utf-8")

    (out / "_headers").write_text(_headers_file(), encoding="utf-8")
    site = {
        "generator": "logdoc web build",
        "pyodide": PYODIDE_VERSION,
        "wheels": [Path(u).name for u in wheel_urls],
        "stdlib": Path(stdlib_rel).name,
        "bytecode": bytecode_info,
        "csp": CSP,
    }
    (out / "site.json").write_text(json.dumps(site, indent=2) + "\n", encoding="utf-8")

    sizes = site_sizes(out)
    sizes.update({"out": str(out), "pyodide": PYODIDE_VERSION, "wheels": site["wheels"],
                  "bytecode": bytecode_info})
    return sizes


def _headers_file() -> str:
    """Headers for static hosts that read a ``_headers`` file (Netlify, Cloudflare Pages)."""
    return (
        "/*\n"
        f"  Content-Security-Policy: {CSP}{CSP_HEADER_ONLY}\n"
        "  X-Content-Type-Options: nosniff\n"
        "  Referrer-Policy: no-referrer\n"
        "/*.wasm\n"
        "  Content-Type: application/wasm\n"
    )


def site_sizes(directory: str | os.PathLike, *, level: int = 6) -> dict:
    """Raw and gzip (``level``) size of every file of a built site, and the totals."""
    root = Path(directory)
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=level, mtime=0) as gz:
            gz.write(data)
        files[path.relative_to(root).as_posix()] = {
            "bytes": len(data),
            "gzip": min(len(buf.getvalue()), len(data)),
        }
    return {
        "files": files,
        "total_bytes": sum(f["bytes"] for f in files.values()),
        "total_gzip": sum(f["gzip"] for f in files.values()),
    }


# --- serving -----------------------------------------------------------------------------------


class SiteRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with wasm MIME type, the CSP header and sensible caching."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    quiet = False

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP + CSP_HEADER_ONLY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        path = self.path.split("?", 1)[0]
        if path.startswith(("/pyodide/", "/wheels/")):
            # versioned or content-addressed paths never change
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        else:
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002
        if not self.quiet:
            super().log_message(format, *args)


def make_server(
    directory: str | os.PathLike, port: int = 8000, *, quiet: bool = False
) -> http.server.ThreadingHTTPServer:
    """A server for ``directory`` bound to 127.0.0.1 (port 0 picks a free port)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise BuildError(f"{directory} is not a folder; build the site first: "
                         f"logdoc web build --out {directory}")
    if not (directory / "index.html").is_file():
        raise BuildError(f"{directory} has no index.html; build the site first: "
                         f"logdoc web build --out {directory}")
    handler = type("Handler", (SiteRequestHandler,), {"quiet": quiet})
    try:
        return http.server.ThreadingHTTPServer(
            ("127.0.0.1", port), partial(handler, directory=str(directory))
        )
    except OverflowError:
        raise BuildError(f"port {port} is not a valid port (0 to 65535)") from None
    except OSError as exc:
        import errno

        if exc.errno == errno.EADDRINUSE:
            raise BuildError(f"port {port} on 127.0.0.1 is already in use; "
                             "choose another with --port") from None
        if exc.errno == errno.EACCES:
            raise BuildError(f"not allowed to listen on port {port} of 127.0.0.1; "
                             "choose a port above 1023 with --port") from None
        raise BuildError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None


def serve(directory: str | os.PathLike, port: int = 8000, *, quiet: bool = False) -> None:
    """Serve a built site on http://127.0.0.1:PORT/ until interrupted (Ctrl-C)."""
    server = make_server(directory, port, quiet=quiet)
    host, real_port = server.server_address[:2]
    print(f"Serving {Path(directory).resolve()} at http://{host}:{real_port}/ (Ctrl-C stops)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    """``python -m logdoc.web.build build OUT`` / ``serve DIR [PORT]`` (until the CLI has it)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m logdoc.web.build")
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="write the static site")
    b.add_argument("out")
    b.add_argument("--cache-dir")
    s = sub.add_parser("serve", help="serve a built site on 127.0.0.1")
    s.add_argument("directory")
    s.add_argument("port", nargs="?", type=int, default=8000)
    args = parser.parse_args(argv)
    if args.cmd == "build":
        sizes = build_site(args.out, cache_dir=args.cache_dir)
        print(f"wrote {sizes['out']}: {len(sizes['files'])} files, "
              f"{sizes['total_bytes']:,} bytes, {sizes['total_gzip']:,} gzip")
        return 0
    serve(args.directory, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
