"""Rank sets, host lists and value -> members mappings in words that stay short at any scale.

* :func:`rank_runs` / :func:`ranks_text`: ``[0..719, 721..4999]`` -> ``ranks 0-719, 721-4999 (4,999 ranks)``;
* :func:`hostlist`: ``gpu-0001 ... gpu-0625`` -> ``gpu-[0001-0625]``, as Slurm writes host lists;
* :func:`mapping_text`: ``{value: members}`` with the majority as a count and only the minority listed
  (``2.21.5 on 9,999 ranks; 2.18.3 on rank 3333``);
* :func:`compact_json`: a JSON-ready value with long rank lists as runs and long per-host tables grouped,
  for reports that must stay small whatever the size of the job.

Standard library only (the core runs in the browser too).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..lazyre import lazy_re

MAX_PARTS = 6       # runs / host groups named before "..."
TEXT_WIDTH = 100    # a mapping in words is cut around this many characters


def _num(n: int) -> str:
    return f"{n:,}"


# -- rank sets ---------------------------------------------------------------------------------------

def rank_runs(ranks: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted distinct ranks as ``(first, last)`` runs of consecutive numbers."""
    rs = sorted(set(r for r in ranks if r is not None))
    runs: list[tuple[int, int]] = []
    for r in rs:
        if runs and r == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], r)
        else:
            runs.append((r, r))
    return runs


def _run_parts(runs: list[tuple[int, int]]) -> list[str]:
    parts: list[str] = []
    for a, b in runs:
        if b - a >= 2:
            parts.append(f"{a}-{b}")
        else:
            parts.extend(str(r) for r in range(a, b + 1))
    return parts


def ranks_text(ranks: Iterable[int], word: bool = True, max_parts: int = MAX_PARTS) -> str:
    """``[0,1,2,3,4,5,6,8,9]`` -> ``ranks 0-6, 8 and 9``; ``[7]`` -> ``rank 7``; a big or scattered set
    gets its count: ``ranks 0-719, 721-4999 (4,999 ranks)``, ``ranks 0, 2, 4, ..., 9998 (5,000 ranks)``."""
    runs = rank_runs(ranks)
    count = sum(b - a + 1 for a, b in runs)
    if not runs:
        return "no rank" if word else ""
    parts = _run_parts(runs)
    if len(parts) > max_parts:
        body = ", ".join(parts[:max_parts - 1]) + ", ..., " + parts[-1]
    elif len(parts) == 1:
        body = parts[0]
    elif count > 16:
        body = ", ".join(parts)
    else:
        body = ", ".join(parts[:-1]) + " and " + parts[-1]
    if count > 16 or len(parts) > max_parts:
        body += f" ({_num(count)} ranks)"
    if not word:
        return body
    return ("ranks " if count > 1 else "rank ") + body


def compact_ranks(ranks: Iterable[int]) -> list:
    """A rank list for JSON: runs of three or more as ``"a-b"`` strings, the others as numbers."""
    out: list = []
    for a, b in rank_runs(ranks):
        if b - a >= 2:
            out.append(f"{a}-{b}")
        else:
            out.extend(range(a, b + 1))
    return out


# -- host lists --------------------------------------------------------------------------------------

_LAST_NUM = lazy_re(r"^(.*?)(\d+)(\D*)$")


def hostlist(hosts: Iterable[str], max_parts: int = MAX_PARTS) -> str:
    """Host names folded as Slurm writes them: ``gpu-0001, gpu-0002, gpu-0003, gpu-0007`` ->
    ``gpu-[0001-0003,0007]``. The number folded is the last one in the name; zero-padded numbers keep
    their width (``n01`` and ``n1`` are different hosts). Past ``max_parts`` groups: ``..., (N hosts)``."""
    names = sorted(set(str(h) for h in hosts if h))
    groups: dict[tuple, list[int]] = {}
    order: list[tuple] = []
    plain: list[str] = []
    split: list[tuple[str, str, str]] = []
    padded: dict[tuple[str, str], set] = {}  # (prefix, suffix) -> widths of zero-padded numbers
    for h in names:
        m = _LAST_NUM.match(h)
        if not m:
            plain.append(h)
            continue
        split.append((m.group(1), m.group(2), m.group(3)))
        if m.group(2).startswith("0") and len(m.group(2)) > 1:
            padded.setdefault((m.group(1), m.group(3)), set()).add(len(m.group(2)))
    for prefix, digits, suffix in split:
        if digits.startswith("0") and len(digits) > 1:
            width = len(digits)
        else:  # 1000 fits a group padded to 3 (000-1249); 9 does not fit one padded to 2
            width = max((w for w in padded.get((prefix, suffix), ()) if w <= len(digits)), default=0)
        key = (prefix, suffix, width)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(digits))
    parts: list[tuple[str, str]] = []  # (sort key, text)
    for key in order:
        prefix, suffix, width = key
        nums = groups[key]
        if len(nums) == 1:
            parts.append((prefix, f"{prefix}{nums[0]:0{width}d}{suffix}" if width else f"{prefix}{nums[0]}{suffix}"))
            continue
        fmt = (lambda n: f"{n:0{width}d}") if width else str
        body = []
        for a, b in rank_runs(nums):
            body.append(fmt(a) if a == b else f"{fmt(a)}-{fmt(b)}")
        if len(body) > max_parts:
            body = body[:max_parts - 1] + ["...", body[-1]]
        parts.append((prefix, f"{prefix}[{','.join(body)}]{suffix}"))
    parts.extend((p, p) for p in plain)
    parts.sort()
    texts = [t for _, t in parts]
    if len(texts) > max_parts:
        return ",".join(texts[:max_parts - 1]) + f",... ({_num(len(names))} hosts)"
    return ",".join(texts)


def hosts_text(hosts: Iterable[str], max_parts: int = MAX_PARTS) -> str:
    """``host gpu-7`` / ``hosts gpu-[0001-0625] (625 hosts)``."""
    names = sorted(set(str(h) for h in hosts if h))
    if not names:
        return "no host"
    if len(names) == 1:
        return "host " + names[0]
    text = hostlist(names, max_parts)
    if not text.endswith(" hosts)"):
        text += f" ({_num(len(names))} hosts)" if len(names) > 2 else ""
    return "hosts " + text


# -- members of a value ------------------------------------------------------------------------------

def members_text(members: Iterable, noun: str = "rank", max_parts: int = MAX_PARTS, word: bool = True) -> str:
    """Ranks (numbers) as :func:`ranks_text` (without its leading "ranks" when not ``word``: a rule's
    text says "Ranks {ranks}" itself), hosts or ``host:pid`` names as :func:`hostlist`."""
    ms = list(members)
    ints = [m for m in ms if isinstance(m, int) and not isinstance(m, bool)]
    strs = [str(m) for m in ms if not (isinstance(m, int) and not isinstance(m, bool))]
    out = []
    if ints:
        out.append(ranks_text(ints, word=word, max_parts=max_parts))
    if strs:
        if noun == "host" and not ints:
            out.append(hosts_text(strs, max_parts))
        else:
            out.append(hostlist(strs, max_parts))
    return ", ".join(out) if out else f"no {noun}"


def count_text(n: int, noun: str) -> str:
    return f"{_num(n)} {noun}{'' if n == 1 else 's'}"


def majority(values: Mapping[Any, Iterable]) -> Any:
    """The value held by strictly more members than any other, when it holds more than one; else None."""
    sizes = sorted(((len(set(ms)), v) for v, ms in values.items()), key=lambda x: -x[0])
    if len(sizes) < 2 or sizes[0][0] <= 1 or sizes[0][0] == sizes[1][0]:
        return None
    return sizes[0][1]


def _noun(values: Mapping[Any, Iterable]) -> str:
    kinds = {("rank" if isinstance(m, int) and not isinstance(m, bool) else
              "process" if ":" in str(m) or "/" in str(m) else "host") for ms in values.values() for m in ms}
    return kinds.pop() if len(kinds) == 1 else "member"


def mapping_text(values: Mapping[Any, Iterable], noun: str | None = None, width: int = TEXT_WIDTH) -> str:
    """``{value: members}`` in words: the majority value as a count, every other value with its members,
    smallest groups first, cut near ``width`` characters with what is left as a count.

    ``{"2.21.5": [0..9999 but 3333], "2.18.3": [3333]}`` -> ``2.18.3 on rank 3333; 2.21.5 on 9,999 ranks``."""
    noun = noun or _noun(values)
    items = [(v, list(ms)) for v, ms in values.items()]
    big = majority(values)
    minor = sorted((it for it in items if it[0] != big), key=lambda it: (len(set(it[1])), str(it[0])))
    parts: list[str] = []
    used = 0
    left_vals = left_members = 0
    for i, (v, ms) in enumerate(minor):
        part = f"{v} on {members_text(ms, noun)}"
        if parts and used + len(part) > width:
            left_vals = len(minor) - i
            left_members = sum(len(set(m)) for _, m in minor[i:])
            break
        parts.append(part)
        used += len(part) + 2
    if left_vals:
        parts.append(f"{count_text(left_vals, 'other value')} on {count_text(left_members, noun)}")
    if big is not None:
        parts.append(f"{big} on {count_text(len(set(values[big])), noun)}")
    return "; ".join(parts)


# -- JSON reports ------------------------------------------------------------------------------------

LIST_LIMIT = 64     # a longer list of records is cut (the count is kept)
INT_LIMIT = 16      # a longer list of numbers is written as runs
KEY_LIMIT = 64      # a table with more keys is grouped by equal values, then cut


def compact_json(value: Any, keep: Iterable[int] = ()) -> Any:
    """A JSON-ready copy of ``value`` that stays small for any job:

    * a list of more than ``INT_LIMIT`` numbers becomes its runs (``[0, "2-4999", 5001]``);
    * a list of more than ``LIST_LIMIT`` strings is folded as a host list (``["gpu-[001-625]"]``);
    * a list of more than ``LIST_LIMIT`` records keeps the first ones and those about a rank in ``keep``;
    * a table with more than ``KEY_LIMIT`` keys (per host, per file) groups the keys whose values are
      equal (``{"gpu-[001-625]": {...}}``), and is cut if still too long.

    What was cut is said in a ``"..."`` entry (a count), never silently."""
    keep = set(keep)
    return _compact(value, keep)


def _compact(v: Any, keep: set) -> Any:
    if isinstance(v, Mapping):
        items = [(str(k), _compact(x, keep)) for k, x in v.items()]
        if len(items) > KEY_LIMIT:
            return _group_keys(items)
        return dict(items)
    if isinstance(v, (list, tuple, set, frozenset)):
        seq = list(v)
        if len(seq) > INT_LIMIT and all(isinstance(x, int) and not isinstance(x, bool) for x in seq):
            return compact_ranks(seq)
        if len(seq) > LIST_LIMIT and all(isinstance(x, str) for x in seq):
            folded = hostlist(seq, max_parts=LIST_LIMIT // 2)
            return folded.split(",") if len(folded) < 4000 else seq[:LIST_LIMIT // 2] + [f"... ({_num(len(seq))} in all)"]
        if len(seq) > LIST_LIMIT:
            head = seq[:LIST_LIMIT // 2]
            picked = [x for x in seq[LIST_LIMIT // 2:] if isinstance(x, Mapping) and x.get("rank") in keep][:LIST_LIMIT // 2]
            out = [_compact(x, keep) for x in head + picked]
            out.append({"...": len(seq) - len(head) - len(picked), "of": len(seq)})
            return out
        return [_compact(x, keep) for x in seq]
    return v


def _group_keys(items: list[tuple[str, Any]]) -> dict[str, Any]:
    import json

    by_val: dict[str, list[str]] = {}
    vals: dict[str, Any] = {}
    for k, x in items:
        s = json.dumps(x, sort_keys=True, default=str)
        by_val.setdefault(s, []).append(k)
        vals.setdefault(s, x)
    out: dict[str, Any] = {}
    groups = sorted(by_val.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    for s, ks in groups[:KEY_LIMIT]:
        out[hostlist(ks, max_parts=16) if len(ks) > 1 else ks[0]] = vals[s]
    if len(groups) > KEY_LIMIT:
        out["..."] = {"keys": sum(len(ks) for _, ks in groups[KEY_LIMIT:]), "of": len(items)}
    return out


__all__ = ["rank_runs", "ranks_text", "compact_ranks", "hostlist", "hosts_text", "members_text", "majority",
           "mapping_text", "count_text", "compact_json", "compact_report"]


REPORT_LIMIT = 900_000  # bytes of JSON: the report stays under 1 MB whatever the job


def compact_report(report: Mapping[str, Any], limit: int = REPORT_LIMIT) -> dict[str, Any]:
    """The JSON report of ``logdoc explain --format json`` without ``--full``: the same keys, with rank
    lists as runs, per-host and per-file tables grouped or cut (:func:`compact_json`), and, should it
    still exceed ``limit`` bytes, the biggest parts of the job's anatomy replaced by their size.
    ``abridged`` says what was done; a small job's report comes back unchanged but for that key."""
    import json

    keep: set = set()
    for d in report.get("diagnoses") or ():
        for r in (d.get("ranks") or ())[:64]:
            if isinstance(r, int):
                keep.add(r)
    out = dict(report)
    out["diagnoses"] = [_compact_diagnosis(d) for d in report.get("diagnoses") or ()]
    for key in ("job", "files", "notes"):
        if key in report:
            out[key] = compact_json(report[key], keep)
    changed = json.dumps(out, default=str) != json.dumps(report, default=str)
    dropped = []
    size = len(json.dumps(out, ensure_ascii=False, default=str))
    job = out.get("job")
    if size > limit and isinstance(job, dict):
        job = dict(job)
        parts = sorted(((len(json.dumps(v, ensure_ascii=False, default=str)), k) for k, v in job.items()), reverse=True)
        for n, k in parts:
            if size <= limit:
                break
            job[k] = {"...": f"{n:,} bytes left out; --full for everything"}
            size -= n
            dropped.append(k)
        out["job"] = job
    if changed or dropped:
        out["abridged"] = {"how": "rank lists as runs (\"0-719\"), long host and file lists folded (\"gpu-[001-625]\"), "
                                  "tables of many hosts grouped by equal values; --full for everything",
                           "left_out": dropped}
    return out


TITLE_WIDTH = 120


def _compact_diagnosis(d: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(d)
    t = out.get("title")
    if isinstance(t, str) and len(t) > TITLE_WIDTH:  # a title is one line, whatever card it comes from
        out["title"] = t[:TITLE_WIDTH - 1].rstrip() + "\u2026"
    for k in ("ranks", "hosts", "reported_by"):
        if isinstance(out.get(k), list):
            out[k] = compact_json(out[k])
    if isinstance(out.get("symptoms"), list):
        out["symptoms"] = [_compact_diagnosis(s) if isinstance(s, Mapping) else s for s in out["symptoms"]]
    return out
