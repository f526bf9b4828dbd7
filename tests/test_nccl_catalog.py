"""Every INFO, WARN and VERSION format NCCL printed from 2.3 to 2.30.7, rendered under the line
layout of the oldest and the newest release that printed it, must parse."""
from __future__ import annotations

from logdoc.events import Envelope
from logdoc.nccl import classify
from logdoc.templates import nccl_catalog

from nccl_render import catalog_rows, render_line, render_message

EXPECTED_LEVEL = {"WARN": "WARN", "INFO": "INFO", "VERSION": "INFO", "CALL": "TRACE"}


def _run():
    total = ok = warn_formats = warn_own = 0
    misses: list[str] = []
    own_misses: list[str] = []
    cat = nccl_catalog()
    for row in catalog_rows():
        fmt, level = row["format"], row["level"]
        own_counted = False
        for tag in {row["first_tag"], row["last_tag"]}:
            line = render_line(level, fmt, tag, row["locations_in_last_tag"])
            total += 1
            parsed = classify(line, Envelope())
            good = parsed is not None and parsed.level == EXPECTED_LEVEL[level]
            if good and level == "WARN":
                loc = row["locations_in_last_tag"].split(",")[0].split(" ")[0]
                loc = loc[4:] if loc.startswith("src/") else loc
                good = parsed.fields.get("code_location") == loc
            if good:
                ok += 1
            else:
                misses.append(f"{tag} {level}: {line[:160]}")
            if level == "WARN" and not own_counted and parsed is not None:
                own_counted = True
                warn_formats += 1
                tpl = cat.templates.get(parsed.template) if parsed.template else None
                if tpl is not None and (tpl.format == fmt or tpl.rx.match(render_message(fmt)) and
                                        render_message(tpl.format) == render_message(fmt)):
                    warn_own += 1
                else:
                    own_misses.append(f"{fmt[:120]!r} -> {tpl.format[:120] if tpl else parsed.template!r}")
    return total, ok, misses, warn_formats, warn_own, own_misses


def test_nccl_catalog_lines_parse():
    total, ok, misses, warn_formats, warn_own, own_misses = _run()
    rate = ok / total
    own = warn_own / warn_formats
    summary = (f"NCCL catalog: {ok}/{total} rendered lines parsed with the right level and location ({rate:.2%});"
               f" WARN formats recognised as their own template: {warn_own}/{warn_formats} ({own:.2%})\n"
               + "".join(f"  miss: {m}\n" for m in misses[:15])
               + "".join(f"  other template: {m}\n" for m in own_misses[:15]))
    assert rate >= 0.99, summary
    assert own >= 0.90, summary


def test_family_for_a_first_word_is_family():
    """The bulk lane asks nccl.family_for(word) instead of _family: on every rendered catalog
    message, and on those messages with their first word changed (a colon added, a C/N/B/U first
    letter, `comm`), both must say the same."""
    from logdoc import nccl

    msgs = []
    for row in catalog_rows():
        for tag in sorted({row["first_tag"], row["last_tag"]}):
            msgs.append(render_message(row["format"]))
    extra = []
    for m in msgs:
        first, sep, rest = m.partition(" ")
        for w in (first + ":", "C" + first, "N" + first, "B" + first + ":", "U" + first, "comm", "x:y", "Bootstrap",
                  "Bootstrap:", "Using", "Channel", "Connected", "NET/IB", "NET/Socket", "NCCL", "NCCL_X", "Broadcast:"):
            extra.append(w + sep + rest)
        extra.append(first + sep + "comm 0x1 " + rest)
        extra.append(first + ": a -> b " + rest)
    checked = 0
    for m in msgs + extra + ["", " ", "comm 0x5", "a comm 0x5", "a b c comm 0x5", "f.cc:12 -> 3", "x -> 3"]:
        word = m.split(" ", 1)[0]
        assert nccl.family_for(word)(m) == nccl._family(m), m
        checked += 1
    assert checked > 10000


def test_a_format_without_literal_text_is_never_offered():
    from logdoc.classify.formats import printf_has_text
    assert not printf_has_text("%s") and not printf_has_text("%s %d")
    assert printf_has_text("%s: %s") and printf_has_text("NET/IB : %s")
    assert nccl_catalog().match("a line NCCL never printed in any release") is None


def test_a_warn_no_format_reads_is_not_taken_for_the_version_banner():
    # NCCL prints its banner and one 2.26+ WARN with a bare `%s`: a format without literal text reads any
    # message, so it is never offered; a WARN of a newer release or a plugin stays an unread WARN
    from logdoc import kb
    from logdoc.api import build_report
    from logdoc.pipeline import parse_sources

    line = "node1:1234:1290 [0] transport/net_plugin.cc:88 NCCL WARN NET/Plugin : device mlx5_9 lost its link\n"
    p = classify(line.rstrip("\n"), Envelope())
    assert p.kind == "nccl.warn" and p.template is None
    d = build_report(parse_sources([("x.log", line)]), kb.load_rules())
    assert d["diagnoses"] and d["diagnoses"][0]["severity"] == "error"
    assert nccl_catalog().match("NCCL version 2.18.1+cuda12.1") is None or nccl_catalog().match(
        "NCCL version 2.18.1+cuda12.1")[0].anchor
