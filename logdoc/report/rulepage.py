"""`logdoc rules show ID`: the whole page of one rule, in the spirit of `rustc --explain`."""
from __future__ import annotations

import json

from ..kb.examples import example_sources


def rule_page(rule) -> str:
    d = rule.data
    out = [f"{rule.id}: {d.get('title', '')}", "=" * min(78, len(rule.id) + 2 + len(d.get("title", ""))), ""]
    if d.get("retired"):
        out += [f"Retired: {d['retired']}"]
        if d.get("replaced_by"):
            out.append(f"Replaced by: {d['replaced_by']}")
        return "\n".join(out) + "\n"
    out.append(f"category: {d.get('category')}   severity: {d.get('severity')}   role: {d.get('role')}")
    if d.get("applies_to"):
        out.append("applies to: " + ", ".join(f"{k} {v}" for k, v in d["applies_to"].items()))
    out += ["", "Matches", "-------", json.dumps(d.get("match"), indent=2, ensure_ascii=False), ""]
    out += ["Explanation", "-----------", (d.get("explanation") or "").strip(), ""]
    for key, title in (("fix", "Fix"), ("confirm", "Confirm"), ("not_when", "Not the cause when")):
        if d.get(key):
            out += [title, "-" * len(title)]
            out += [f"{i}. {s}" if key == "fix" else f"- {s}" for i, s in enumerate(d[key], 1)]
            out.append("")
    if d.get("docs"):
        out += ["Docs", "----"] + [f"- {x['title']}: {x['url']}" for x in d["docs"]] + [""]
    ex = d.get("examples") or {}
    for key, title in (("match", "Examples that match"), ("no_match", "Near misses that must not match")):
        items = ex.get(key) or []
        if items:
            out += [title, "-" * len(title)]
            for item in items:
                if isinstance(item, str):
                    text = item
                elif "log" in item or "files" in item:
                    text = "\n".join(f"==> {name} <==\n{body.rstrip()}" if "files" in item else body.rstrip()
                                      for name, body in example_sources(item, rule.id))
                    if item.get("where"):
                        where = item["where"] if isinstance(item["where"], list) else [item["where"]]
                        text += "\n(evidence: the line with " + " / ".join(repr(w) for w in where) + ")"
                    if item.get("role"):
                        text += f"\n(role in the report: {item['role'].replace('_', ' ')})"
                else:
                    text = json.dumps(item, ensure_ascii=False)
                out += ["    " + line for line in text.rstrip().splitlines()] + [""]
    if getattr(rule, "file", None):
        out.append(f"(defined in {rule.file}:{rule.line})")
    return "\n".join(out).rstrip() + "\n"
