"""Score logdoc on the field corpus (tests/field/cases): real logs posted in public threads.

    python tools/field_score.py [--cases DIR] [--logdoc DIR] [--quiet] [--known-misses]

Every case folder holds ``case.yaml`` (layout in tests/field/README.md) and the log files as posted.
logdoc runs on the case's log files through its Python API (``logdoc.explain(paths)``), and the
categories of its diagnoses, in the report's order, are compared with the case's ``category``:

- top-1 / top-3: the expected category is the category of the first diagnosis / of one of the first
  three (no diagnosis reads as ``none``). A benign case (``category: none``) scores when no diagnosis
  has severity ``error`` (warnings and notes about harmless lines are allowed);
- culprit: for the cases whose case.yaml names ``culprit_rank``, whether it is among the first
  diagnosis's ranks;
- false alarms: benign cases with a diagnosis of severity ``error``;
- crashes: logdoc raised (counted as a miss, with the exception's message).

``--logdoc DIR`` imports logdoc from another checkout (for the score of an older version; the API
``logdoc.explain`` is the same). The last line of the output reads
``field: top-1 N/M = P%; top-3 N/M = P%; culprit N/M; false alarms N/B; crashes N``.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CASES = ROOT / "tests" / "field" / "cases"
CASE_FILE = "case.yaml"
REQUIRED_KEYS = ("source", "category", "established_by")
OPTIONAL_KEYS = ("culprit_rank", "versions", "batch")
BENIGN = "none"
CASE_TIMEOUT = 120  # seconds for one case; a case that takes longer counts as a crash


class CaseError(ValueError):
    """A case folder that does not follow tests/field/README.md."""


@dataclass
class Case:
    name: str
    path: Path
    category: str
    culprit_rank: int | None
    logs: list[Path]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def benign(self) -> bool:
        return self.category == BENIGN


def load_case(path: Path, categories: tuple[str, ...] | None = None) -> Case:
    """Read one case folder; raise CaseError when it is not valid."""
    import yaml

    cfile = path / CASE_FILE
    if not cfile.is_file():
        raise CaseError(f"{path.name}: no {CASE_FILE}")
    try:
        meta = yaml.safe_load(cfile.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise CaseError(f"{path.name}: {CASE_FILE} is not valid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise CaseError(f"{path.name}: {CASE_FILE} is not a mapping")
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise CaseError(f"{path.name}: {CASE_FILE} lacks {', '.join(missing)}")
    unknown = sorted(k for k in meta if k not in REQUIRED_KEYS + OPTIONAL_KEYS)
    if unknown:
        raise CaseError(f"{path.name}: {CASE_FILE} has unknown keys {', '.join(map(str, unknown))}")
    source = meta["source"]
    if not isinstance(source, str) or not source.startswith(("http://", "https://")):
        raise CaseError(f"{path.name}: source must be a URL, got {source!r}")
    category = meta["category"]
    if categories is not None and category != BENIGN and category not in categories:
        raise CaseError(f"{path.name}: unknown category {category!r}")
    if not isinstance(meta["established_by"], str) or not meta["established_by"].strip():
        raise CaseError(f"{path.name}: established_by must be a line of text")
    culprit = meta.get("culprit_rank")
    if culprit is not None and (isinstance(culprit, bool) or not isinstance(culprit, int) or culprit < 0):
        raise CaseError(f"{path.name}: culprit_rank must be a rank number, got {culprit!r}")
    if "versions" in meta and meta["versions"] is not None and not isinstance(meta["versions"], dict):
        raise CaseError(f"{path.name}: versions must be a mapping")
    logs = sorted(p for p in path.iterdir() if p.is_file() and p.name != CASE_FILE and not p.name.startswith("."))
    if not logs:
        raise CaseError(f"{path.name}: no log file")
    return Case(path.name, path, category, culprit, logs, meta)


def case_dirs(cases: Path) -> list[Path]:
    if not cases.is_dir():
        return []
    return sorted(p for p in cases.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


# what the renderer writes for a placeholder whose value the log did not give (logdoc/kb/render.py): a text
# that should have said it another way
_UNFILLED = re.compile(r"[^\s(]{0,30}\(\w+ not in log\)\S{0,30}")


@dataclass
class Outcome:
    case: Case
    categories: list[str]           # of the diagnoses, in the report's order
    errors: list[str]               # categories of the diagnoses with severity error
    titles: list[str]
    top_ranks: list[int]
    crash: str | None = None
    seconds: float = 0.0
    unfilled: list[str] = field(default_factory=list)  # "(name not in log)" left in a diagnosis's texts

    @property
    def top1(self) -> bool:
        if self.crash:
            return False
        if self.case.benign:
            return not self.errors
        return bool(self.categories) and self.categories[0] == self.case.category

    @property
    def top3(self) -> bool:
        if self.crash:
            return False
        if self.case.benign:
            return not self.errors
        return self.case.category in self.categories[:3]

    @property
    def culprit(self) -> bool | None:
        if self.case.culprit_rank is None:
            return None
        return not self.crash and self.case.culprit_rank in self.top_ranks

    @property
    def false_alarm(self) -> bool:
        return self.case.benign and not self.crash and bool(self.errors)

    def reason(self) -> str:
        """Why the case missed its top-1: what came out instead."""
        if self.crash:
            return f"crash: {self.crash}"
        if self.case.benign:
            return "false alarm: " + "; ".join(f"{c} ({t})" for c, t in zip(self.categories, self.titles)
                                                if c in self.errors)[:300]
        if not self.categories:
            return "silent"
        got = f"got {self.categories[0]} ({self.titles[0][:120]})"
        if self.case.category in self.categories:
            got += f"; expected at #{self.categories.index(self.case.category) + 1}"
        return got


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Timeout()


class Runner:
    """``logdoc.explain(paths)``, with the knowledge base loaded once for all cases (loading it is most
    of the time of a short case): ``build_report(parse_paths(paths), rules)`` is what ``explain`` does.
    A checkout without those functions is run through ``explain`` itself."""

    def __init__(self, logdoc_mod):
        self.logdoc = logdoc_mod
        self._fast = None
        try:
            from logdoc.api import build_report
            from logdoc.kb import load_rules
            from logdoc.pipeline import parse_paths

            self._fast = (build_report, parse_paths, load_rules)
        except ImportError:
            pass
        self._rules = None

    def explain(self, paths: list[str]) -> dict:
        if self._fast is None:
            return self.logdoc.explain(paths)
        build_report, parse_paths, load_rules = self._fast
        if self._rules is None:
            self._rules = load_rules()
        return build_report(parse_paths(paths), self._rules)


def run_case(logdoc_mod, case: Case, timeout: int = CASE_TIMEOUT) -> Outcome:
    """Run logdoc on one case; ``logdoc_mod`` is the logdoc package or a :class:`Runner`."""
    t0 = time.perf_counter()
    use_alarm = hasattr(signal, "SIGALRM") and timeout > 0
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(timeout)
    try:
        report = logdoc_mod.explain([str(p) for p in case.logs])
        diags = report.get("diagnoses") or []
        cats = [d.get("category") or "?" for d in diags]
        errors = [d.get("category") or "?" for d in diags if d.get("severity") == "error"]
        titles = [str(d.get("title") or "") for d in diags]
        ranks = list(diags[0].get("ranks") or []) if diags else []
        unfilled = [f"{d.get('id')}: {m.group(0)}" for d in diags + list(report.get("notes") or [])
                    for key in ("title", "explanation", "fix", "confirm")
                    for text in ([d.get(key)] if isinstance(d.get(key), str) else d.get(key) or [])
                    for m in _UNFILLED.finditer(str(text))]
        return Outcome(case, cats, errors, titles, ranks, seconds=time.perf_counter() - t0, unfilled=unfilled)
    except _Timeout:
        return Outcome(case, [], [], [], [], crash=f"no answer within {timeout} s",
                       seconds=time.perf_counter() - t0)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("logdoc"):
            raise  # a dependency this Python lacks: no case can be scored (main says so), not a crash of logdoc's
        msg = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        return Outcome(case, [], [], [], [], crash=msg, seconds=time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - a crash is what is counted
        msg = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        return Outcome(case, [], [], [], [], crash=msg, seconds=time.perf_counter() - t0)
    finally:
        if use_alarm:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)


def import_logdoc(logdoc_dir: str | None):
    """Import logdoc from ``logdoc_dir`` (another checkout), else from this checkout."""
    where = Path(logdoc_dir).resolve() if logdoc_dir else ROOT
    if not (where / "logdoc" / "__init__.py").is_file():
        raise SystemExit(f"field_score: no logdoc package in {where}")
    sys.path.insert(0, str(where))
    for name in [m for m in sys.modules if m == "logdoc" or m.startswith("logdoc.")]:
        del sys.modules[name]
    import logdoc

    return logdoc


def _pct(n: int, m: int) -> str:
    return f"{100.0 * n / m:.1f}%" if m else "n/a"


def score(outcomes: list[Outcome]) -> dict[str, int]:
    culprit = [o.culprit for o in outcomes if o.culprit is not None]
    return {
        "cases": len(outcomes),
        "top1": sum(o.top1 for o in outcomes),
        "top3": sum(o.top3 for o in outcomes),
        "culprit": sum(culprit),
        "culprit_cases": len(culprit),
        "false_alarms": sum(o.false_alarm for o in outcomes),
        "benign": sum(o.case.benign for o in outcomes),
        "crashes": sum(bool(o.crash) for o in outcomes),
    }


def summary_line(s: dict[str, int]) -> str:
    m = s["cases"]
    return (f"field: top-1 {s['top1']}/{m} = {_pct(s['top1'], m)}; top-3 {s['top3']}/{m} = {_pct(s['top3'], m)}; "
            f"culprit {s['culprit']}/{s['culprit_cases']}; false alarms {s['false_alarms']}/{s['benign']}; "
            f"crashes {s['crashes']}")


def report(outcomes: list[Outcome], invalid: list[str], out=sys.stdout, quiet: bool = False) -> None:
    w = out.write
    if invalid:
        w(f"invalid cases (not scored): {len(invalid)}\n")
        for msg in invalid:
            w(f"  {msg}\n")
        w("\n")
    by_cat: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_cat.setdefault(o.case.category, []).append(o)
    w(f"{'category':34} {'cases':>5} {'top-1':>11} {'top-3':>11} {'culprit':>8} {'f.alarm':>7} {'crash':>5}\n")
    for cat in sorted(by_cat):
        s = score(by_cat[cat])
        m = s["cases"]
        culprit = f"{s['culprit']}/{s['culprit_cases']}" if s["culprit_cases"] else "-"
        fa = str(s["false_alarms"]) if cat == BENIGN else "-"
        w(f"{cat:34} {m:5d} {s['top1']:4d} {_pct(s['top1'], m):>6} {s['top3']:4d} {_pct(s['top3'], m):>6} "
          f"{culprit:>8} {fa:>7} {s['crashes']:5d}\n")
    misses = [o for o in outcomes if not o.top1]
    if misses and not quiet:
        w(f"\nmisses ({len(misses)}):\n")
        for o in sorted(misses, key=lambda o: (o.case.category, o.case.name)):
            top3 = " [in top-3]" if o.top3 and not o.case.benign else ""
            w(f"  {o.case.name:40} expected {o.case.category}: {o.reason()}{top3}\n")
    crashes = [o for o in outcomes if o.crash]
    if crashes:
        w(f"\ncrashes ({len(crashes)}):\n")
        for o in crashes:
            w(f"  {o.case.name}: {o.crash}\n")
    culprit_misses = [o for o in outcomes if o.culprit is False and o.top1]
    if culprit_misses and not quiet:
        w(f"\nright category, wrong culprit ({len(culprit_misses)}):\n")
        for o in culprit_misses:
            w(f"  {o.case.name:40} culprit {o.case.culprit_rank}, top diagnosis names ranks {o.top_ranks}\n")
    w("\n" + summary_line(score(outcomes)) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Score logdoc on the field corpus.")
    ap.add_argument("--cases", default=None, help="folder of case folders (default: tests/field/cases)")
    ap.add_argument("--logdoc", default=None, help="import logdoc from this checkout instead of this one")
    ap.add_argument("--quiet", action="store_true", help="only the table and the last line")
    ap.add_argument("--timeout", type=int, default=CASE_TIMEOUT, help="seconds allowed for one case")
    ap.add_argument("--known-misses", action="store_true",
                    help="print the misses as KNOWN_MISSES lines ('<case-name>  <reason>') instead of the report")
    args = ap.parse_args(argv)
    cases_dir = Path(args.cases) if args.cases else DEFAULT_CASES
    if args.cases and not cases_dir.is_dir():
        print(f"field_score: no such folder: {cases_dir}", file=sys.stderr)
        return 2
    logdoc_mod = import_logdoc(args.logdoc)
    categories = None
    try:
        from logdoc.kb import CATEGORIES as categories
    except ImportError:
        pass
    cases, invalid = [], []
    for d in case_dirs(cases_dir):
        try:
            cases.append(load_case(d, categories))
        except CaseError as e:
            invalid.append(str(e))
    runner = Runner(logdoc_mod)
    try:
        outcomes = [run_case(runner, c, args.timeout) for c in cases]
    except ModuleNotFoundError as e:
        print(f"field_score: this Python cannot run logdoc: no module named {e.name!r} "
              f"(install its dependencies: pip install -e '.[test]')", file=sys.stderr)
        return 2
    if args.known_misses:
        for o in outcomes:
            if not o.top1:
                print(f"{o.case.name}  {o.reason()}")
        return 0
    report(outcomes, invalid, quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
