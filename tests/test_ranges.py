"""Rank sets, host lists and value -> ranks mappings in words that stay short at any scale
(logdoc.analysis.ranges), the JSON report's size, and disagreement findings that hold on big jobs."""
from __future__ import annotations

import json

from logdoc.analysis import analyze
from logdoc.analysis.ranges import (compact_json, compact_report, compact_ranks, hostlist, hosts_text, majority,
                                    mapping_text, ranks_text)
from logdoc.kb import render_template
from logdoc.pipeline import parse_sources


def test_rank_ranges_with_counts():
    assert ranks_text([7]) == "rank 7"
    assert ranks_text([1, 3, 5]) == "ranks 1, 3 and 5"
    assert ranks_text([0, 1, 2, 3, 4, 5, 6, 8, 9]) == "ranks 0-6, 8 and 9"
    assert ranks_text([r for r in range(5000) if r != 720]) == "ranks 0-719, 721-4999 (4,999 ranks)"
    # scattered: a few runs, then the last, and always the count
    assert ranks_text(range(0, 10000, 2)) == "ranks 0, 2, 4, 6, 8, ..., 9998 (5,000 ranks)"
    assert ranks_text([3, 2, 2, 1]) == "ranks 1-3"
    assert ranks_text([]) == "no rank"
    assert compact_ranks([0, 1, 2, 3, 5, 7, 8, 9]) == ["0-3", 5, "7-9"]


def test_host_lists_as_slurm_writes_them():
    assert hostlist([f"gpu-{i:04d}" for i in range(1, 626)]) == "gpu-[0001-0625]"
    assert hostlist(["gpu-0003", "gpu-0001", "gpu-0002", "gpu-0007"]) == "gpu-[0001-0003,0007]"
    # the padded width holds numbers that outgrow it; an unpadded shorter number is another host
    assert hostlist([f"n{i:03d}" for i in range(995, 1003)]) == "n[995-1002]"
    assert hostlist(["n01", "n02", "n9"]) == "n9,n[01-02]"
    assert hostlist(["node1", "node2", "node3", "login"]) == "login,node[1-3]"
    assert hostlist(["rack1-gpu3", "rack1-gpu4", "rack2-gpu3"]) == "rack1-gpu[3-4],rack2-gpu3"
    assert hosts_text(["a"]) == "host a"
    assert hosts_text([f"gpu-h100-{i:03d}" for i in range(625)]) == "hosts gpu-h100-[000-624] (625 hosts)"
    many = hostlist([f"h{i}x{j}" for i in range(20) for j in range(2)])
    assert many.endswith("(40 hosts)") and len(many) < 80


def test_majority_as_a_count_and_the_minority_listed():
    versions = {"2.21.5": [r for r in range(10000) if r != 3333], "2.18.3": [3333]}
    assert majority(versions) == "2.21.5"
    assert mapping_text(versions) == "2.18.3 on rank 3333; 2.21.5 on 9,999 ranks"
    hosts = {"docker0:172.17.0.1": ["gpu-007", "gpu-100"], "enp226s0": [f"gpu-{i:03d}" for i in range(625)
                                                                          if i not in (7, 100)]}
    assert mapping_text(hosts) == "docker0:172.17.0.1 on hosts gpu-[007,100]; enp226s0 on 623 hosts"
    # no majority (a routed cluster's addresses, one per host): the first few, then a count, short
    spread = {f"10.33.{n // 100}.{n % 100}": list(range(8 * n, 8 * n + 8)) for n in range(1250)}
    text = mapping_text(spread)
    assert len(text) < 160 and text.endswith("1,247 other values on 9,976 ranks")
    assert majority({"a": [1], "b": [2]}) is None
    # a placeholder of a rule renders a big mapping the same way; a small one as before
    assert render_template("{v}", {"v": versions}) == "2.18.3 on rank 3333; 2.21.5 on 9,999 ranks"
    assert render_template("{v}", {"v": {"eth0": [0, 1], "ib0": [2]}}) == "eth0: 0, 1; ib0: 2"
    # a rank list renders without the noun, big or small: the rule's text says "rank{s} {}" itself
    assert render_template("{r}", {"r": list(range(100))}) == "0-99 (100 ranks)"
    assert render_template("{r?(rank{s} {})}", {"r": list(range(100))}) == "ranks 0-99 (100 ranks)"
    assert render_template("{r?(rank{s} {})}", {"r": [0, 4, 5]}) == "ranks 0, 4, 5"


def test_compact_json_keeps_small_values_and_folds_big_ones():
    small = {"ranks": [0, 1, 2], "by_host": {"a": {"ranks": [0]}, "b": {"ranks": [1]}}}
    assert compact_json(small) == small
    big = {"ranks": list(range(5000)), "hosts": [f"gpu-{i:03d}" for i in range(625)],
           "transports": {f"gpu-{i:03d}": {"network": ["IB"]} for i in range(625)},
           "rows": [{"rank": r, "events": 3} for r in range(5000)]}
    c = compact_json(big, keep=[3333])
    assert c["ranks"] == ["0-4999"] and c["hosts"] == ["gpu-[000-624]"]
    assert c["transports"] == {"gpu-[000-624]": {"network": ["IB"]}}
    assert any(row.get("rank") == 3333 for row in c["rows"]) and c["rows"][-1]["of"] == 5000
    assert len(json.dumps(c)) < 5000


def test_compact_report_stays_under_the_limit():
    report = {"diagnoses": [{"id": "LD1", "ranks": list(range(10000)), "hosts": [], "symptoms": []}],
              "job": {"big": {f"k{i}": "x" * 5000 for i in range(40)}, "small": 1}, "files": ["f"]}
    c = compact_report(report, limit=100_000)
    assert len(json.dumps(c)) < 100_000
    assert c["diagnoses"][0]["ranks"] == ["0-9999"] and c["job"]["small"] == 1
    assert c["abridged"]["left_out"] == ["big"]
    long = compact_report({"diagnoses": [{"id": "LD1", "title": "x" * 300, "symptoms": [{"title": "y" * 130}]}]})
    assert len(long["diagnoses"][0]["title"]) == 120 and len(long["diagnoses"][0]["symptoms"][0]["title"]) == 120
    tiny = {"diagnoses": [{"id": "LD1", "ranks": [1], "symptoms": []}], "job": {"ranks": [1]}, "files": ["a.log"]}
    assert compact_report(tiny) == tiny


# -- disagreements that hold at scale ---------------------------------------------------------------------

def _host_log(h: str, rank: int, addr: str, nranks: int, iface: str = "ens1") -> str:
    p = 100 + rank
    return (f"{h}:{p}:{p} [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            f"{h}:{p}:{p} [0] NCCL INFO Bootstrap : Using {iface}:{addr}<0>\n"
            f"{h}:{p}:{p} [0] NCCL INFO comm 0x{p:x} rank {rank} nranks {nranks} cudaDev 0 nvmlDev 0 "
            f"busId 1000 commId 0xabc - Init COMPLETE\n")


def _cluster(n: int, addr, extra: dict[int, str] | None = None, iface=lambda i: "ens1"):
    files = {f"rank{i}.log": _host_log(f"node{i:03d}", i, addr(i), n, iface(i)) + (extra or {}).get(i, "")
             for i in range(n)}
    res = parse_sources(list(files.items()))
    a = analyze(res.events, res.files)
    return [e for e in a.synthetic if e.kind == "analysis.interface_disagreement"]


def test_a_routed_cluster_in_many_subnets_is_not_a_finding():
    assert _cluster(40, lambda i: f"10.33.{i // 10}.{10 + i % 10}") == []


def test_a_host_alone_in_another_network_stands_out():
    found = _cluster(40, lambda i: "192.168.5.9" if i == 17 else f"10.33.0.{10 + i}")
    assert [(e.fields["aspect"], e.fields["basis"]) for e in found] == [("subnet", "lone")]
    assert found[0].fields["origin_hosts"] == ["node017"] and found[0].rank == 17
    assert len(found[0].text) < 300


def test_a_connect_failure_between_two_subnets_makes_them_evidence():
    warn = ("node003:103:140 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.33.2.15<40021> "
            "failed : Connection timed out\n")
    found = _cluster(40, lambda i: f"10.33.{i // 10}.{10 + i % 10}", extra={3: warn})
    assert [(e.fields["aspect"], e.fields["basis"]) for e in found] == [("subnet", "failure")]
    assert found[0].fields["networks"] == ["10.33.0.0/24", "10.33.2.0/24"]
    assert found[0].fields["origin_hosts"] == ["node003"]


def test_loopback_and_a_name_only_some_hosts_have():
    found = _cluster(40, lambda i: "127.0.0.1" if i == 5 else f"10.33.0.{10 + i}",
                     iface=lambda i: "lo" if i == 5 else "ens1")
    by = {e.fields["aspect"]: e for e in found}
    assert by["subnet"].fields["basis"] == "special" and by["subnet"].fields["origin_hosts"] == ["node005"]
    assert by["name"].fields["origin_hosts"] == ["node005"]
    assert by["name"].fields["values"] == {"ens1": [r for r in range(40) if r != 5], "lo": [5]}
    assert "ens1 on 39 ranks" not in by["name"].text  # hosts are named: hosts, not ranks
    assert "lo on host node005" in by["name"].text and "ens1 on 39 hosts" in by["name"].text


def test_a_long_value_is_shortened_so_the_title_keeps_its_own_words():
    """A title fits one line of 120 characters in every report (terminal and Markdown too, not only the compact
    JSON): the value a placeholder brings in (an exception's message, a cause's sentence) is shortened at a word
    boundary, and the rule's own words around it stay."""
    from logdoc.kb.render import TITLE_WIDTH, render_title

    message = "Invalid mesh_dim_names ('dp_replicate', 'dp_shard_cp', 'tp') specified. Mesh dim indices should be " \
              "in ascending order."
    t = render_title("{exc_type}: {message} (a Python exception on {rank?(rank {})|(a rank)})",
                     {"exc_type": "KeyError", "message": message, "rank": 1})
    assert len(t) <= TITLE_WIDTH and t.startswith("KeyError: Invalid mesh_dim_names") and "…" in t
    assert t.endswith(" (a Python exception on rank 1)")
    # short titles are untouched, and a title whose words alone are too long is still cut to the width
    assert render_title("Rank {rank} failed", {"rank": 3}) == "Rank 3 failed"
    assert len(render_title("w " * 100 + "{x}", {"x": "y"})) == TITLE_WIDTH


def test_every_diagnosis_title_fits_one_line():
    """End to end: a Python exception with a long message and the candidates after a bare NCCL error, whose
    cause sentences are long, all have titles of at most 120 characters."""
    from logdoc.api import explain

    for text in ("[rank1]: KeyError: \"Invalid mesh_dim_names ('dp_replicate', 'dp_shard_cp', 'tp') specified. Mesh "
                 "dim indices should be in ascending order.\"\n",
                 "RuntimeError: NCCL Error 2: unhandled system error\n"):
        rep = explain(text)
        titles = [d["title"] for d in rep["diagnoses"]] + [s["title"] for d in rep["diagnoses"] for s in d.get("symptoms") or ()]
        assert titles and all(len(t) <= 120 for t in titles), [t for t in titles if len(t) > 120]
