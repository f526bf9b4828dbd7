"""A stand-in logdoc wheel for the web page's own tests while the core is not importable.

It has the public names the page calls (``logdoc.api.explain_sources``,
``logdoc.report.markdown.render``) and returns a fixed report in the ``logdoc.report/1``
schema, with evidence built from the pasted text so that the tests can check how log text is
shown. ``logdoc/web/entry.py`` is the real one from this tree.
"""
from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

API = r'''
def explain_sources(sources, *, redact=False, rules_json=None, rules=None):
    evidence = []
    for name, text in sources:
        for i, line in enumerate(text.splitlines(), 1):
            if "WARN" in line or "<" in line:
                shown = line.replace("node7", "<host-1>") if redact else line
                at = shown.find("WARN")
                evidence.append({"file": name, "line": i, "rank": 3, "text": shown,
                                 "highlight": [at, at + 4] if at >= 0 else None})
            if len(evidence) >= 5:
                break
    host = "<host-1>" if redact else "node7"
    return {
        "schema": "logdoc.report/1",
        "diagnoses": [{
            "id": "LD101", "category": "wrong_network_interface", "severity": "error",
            "role": "root_cause", "title": "NCCL picked a network interface the peers cannot reach",
            "confidence": 0.9, "ranks": [3], "hosts": [host],
            "evidence": evidence,
            "explanation": "Fake core: the real explanation comes from the knowledge base.",
            "fix": ["Set `NCCL_SOCKET_IFNAME` to the interface of the cluster network."],
            "confirm": ["Run with `NCCL_DEBUG=INFO` and check `NET/Socket : Using`."],
            "not_when": ["All ranks list the same interface."],
            "docs": [{"title": "NCCL environment variables",
                      "url": "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"}],
            "symptoms": [{"id": "LD501", "title": "Watchdog timeout", "ranks": [0, 1, 2],
                          "count": 3, "evidence": []}],
        }],
        "notes": [],
        "job": {"files": [n for n, _ in sources], "ranks": [0, 1, 2, 3], "hosts": [host],
                "versions": {"nccl": "2.21.5"}, "transports": ["Socket"]},
        "stats": {"lines_read": sum(t.count("\n") + 1 for _, t in sources), "relevant": 1,
                  "events": 1, "not_understood": 0, "skipped_lines": 0,
                  "files": len(sources), "skipped_files": []},
    }
'''

MARKDOWN = r'''
def render(report):
    out = ["# logdoc report", ""]
    for d in report["diagnoses"]:
        out.append(f"## {d['id']} {d['title']}")
        out += [f"- `{e['file']}:{e['line']}` {e['text']}" for e in d["evidence"]]
        out.append(f"hosts: {', '.join(d['hosts'])}")
    return "\n".join(out) + "\n"
'''


def make_fake_logdoc_wheel(dest_dir: Path) -> Path:
    files = {
        "logdoc/__init__.py": '__version__ = "0.0.0+fake"\n',
        "logdoc/api.py": API,
        "logdoc/kb.py": "def load_compiled(d):\n    return d\n",
        "logdoc/report/__init__.py": "",
        "logdoc/report/markdown.py": MARKDOWN,
        "logdoc/web/__init__.py": "",
        "logdoc/web/entry.py": (REPO / "logdoc/web/entry.py").read_text(encoding="utf-8"),
    }
    dist = "logdoc-0.0.0+fake.dist-info"
    files[f"{dist}/METADATA"] = "Metadata-Version: 2.1\nName: logdoc\nVersion: 0.0.0+fake\n"
    files[f"{dist}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: fake\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files[f"{dist}/RECORD"] = "\n".join(record + [f"{dist}/RECORD,,"]) + "\n"
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / "logdoc-0.0.0+fake-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path
