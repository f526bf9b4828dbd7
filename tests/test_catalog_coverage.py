"""tools/catalog_coverage.py: the machinery that measures how much of the catalogs the knowledge
base explains, and a floor under the figure it prints (how many catalog lines a rule explains)."""
from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

from logdoc.kb import load_rules

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "catalog_coverage.py"


def tool():
    spec = importlib.util.spec_from_file_location("catalog_coverage", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_lines_it_renders():
    cc = tool()
    nccl = list(cc.nccl_lines())
    assert len(nccl) == 2120  # every WARN format, in the layouts of its first and last release
    assert all(" NCCL WARN " in line for _, line in nccl)
    torch = list(cc.torch_lines())
    rows = [line.split("\t") for line in (ROOT / "grammars" / "torch_templates.tsv").read_text(encoding="utf-8")
            .splitlines() if not line.startswith(("#", "id\t"))]
    want = sum(1 for r in rows if r[2] in ("ERROR", "FATAL", "WARN"))
    assert want >= 630 and len(torch) == want and {s for _, _, s in torch} == {"torch", "gloo", "logdoc"}
    # a row with several wordings is printed in one of them, never with the alternation's name
    text = dict((label, line) for label, line, _ in torch)
    assert "The IPv4 network addresses of (" in text["torch torch:c10d-socket:the-network-addresses-of-cannot-be-retrieved"]
    assert "family=" not in "".join(text.values())


def test_it_counts_covered_lines_and_misses():
    cc = tool()
    rules = load_rules()
    items = list(itertools.islice(cc.all_items(), 0, 12))
    items.append(("nccl", "not a catalog line", "hello world"))
    items.append(("gloo", "the seed", "RuntimeError: Gloo connectFullMesh failed ..."))
    tallies, misses = cc.measure(items, rules)
    assert sum(t[1] for t in tallies.values()) == len(items)
    assert any("hello world" in m for m in misses)
    assert not any("connectFullMesh" in m for m in misses)
    assert tallies["nccl"][0] == tallies["nccl"][1] - 1  # the annotated WARN lines all get a category


def test_it_tells_a_rule_from_a_generic_card():
    cc = tool()
    rules = load_rules()
    shm = ("node1:1234:1234 [0] misc/shmutils.cc:82 NCCL WARN Error while creating shared memory segment "
           "/dev/shm/nccl-abc123 (size 9637888)")
    items = [("nccl", "v2.21.5-1 src/misc/shmutils.cc:82", shm, "shm"),
             # the bare-text WARN format ("%s", here as the tool renders it): no rule reads an unknown text
             ("nccl", "v2.26.2-1 src/misc/strongstream.cc:337",
              "node1:1234:1234 [0] misc/strongstream.cc:337 NCCL WARN eth0", "bare"),
             ("nccl", "not a catalog line", "hello world")]
    rows: list = []
    tallies, misses = cc.measure(items, rules, each=rows)
    assert tallies["nccl"] == [2, 3, 1]  # two get a category, one of them from a rule
    assert [r[5] for r in rows] == ["rule", "card", "none"]
    listing = cc.by_family(rows)
    assert listing[0] == "nccl misc/strongstream.cc: 1 of 1 formats get only a generic card"
    assert listing[1].endswith("NCCL WARN eth0") and not any("shared memory" in l for l in listing)
    assert cc.group_of("torch", "torch torch:TCPStore:some-message") == "TCPStore"
    assert cc.group_of("nccl", "v2.19.3-1 src/transport/net_ib.cc:839 src/transport/net_ib.cc:901") == "transport/net_ib.cc"


# Catalog lines whose first diagnosis (or, with none, first note) comes from a knowledge-base rule, of the
# 2772 the tool renders (session 13: 1949 at its start). Raise it when rules are added; a change that lowers
# it loses a rule's reading of some catalog format (`python tools/catalog_coverage.py --by-family 5`).
# 2676 -> 2670 (session 17): "unhandled system error" alone, with no node count in the log, is the
# ncclSystemError card's ranked differential now, no longer LD132's guess of the network (7 formats);
# one new format (torchelastic's etcd timeout) is a rule's.
# 2670 -> 2677 (session 17, kb16): the scalable init's unique-id failure as c10d logs it is LD660/LD661's; new logdoc rows.
# 2677 -> 2671 (session 18): NCCL's "no IB device" lines alone (Failed to open libibverbs.so, NET/IB : No IP
# interface found) are LD210's only when the log shows the job is meant to use RDMA (analysis.context's
# ib_expected): alone they are a note or the card; an abort whose nested reason is "NCCL error: unhandled
# system error" gets that result's card ahead of LD514's symptom (2 formats).
# 2671 -> 2675 (session 18, kb17): NCCL 2.3's "No usable listening interface found" and 2.3-2.4's "Error : Network
# returned 0 device" (the socket network found no interface) are LD101/LD102/LD181's.
# 2682 -> 2690 (session 19, kb18): NCCL's NVML table limit (LD826), 2.3-2.11's "NVML failure '%s'" (LD827), 2.4's
# network table limit "CUDA device %d >= MAX %d" (LD418), and 2.19-2.23's "Unknown device code index" without the
# index (LD232).
# 2699 -> 2701 (session 23, kb23): Windows' "Failed to load nvml.dll" (os/windows.cc, 2.30.3+, both layouts) is
# LD823's, like Linux's "Failed to open libnvidia-ml.so.1".
# 2701 -> 3323 (session 30, ofi30): the AWS OFI plugin's lines, which the sum counts too (21 -> 622, below).
# 3323 -> 3334 (session 31, wordings31): NCCL 2.3's "Bootstrap Root : invalid op type received" (LD109), 2.4's "Could
# not find transport to connect next group" (LD444), "NET/IB : No IP interface found." without NCCL_SOCKET_IFNAME
# (LD102), the device API's version lines whatever the version's shape (LD493), the desync report's head alone
# (LD553), env://'s "MASTER_ADDR expected, but not set" without its ValueError (LD609).
# 3334 -> 3559 (session 31, ofi31): the plugin's 622 -> 847.
# 3564 -> 3567 (session 33, leads33): three logdoc rows of lines real logs show, each a rule's: TCPStore's client
# logging its failed call (LD692), c10d's connect that timed out and retries (LD693), the watchdog's 2.4-2.6
# `Exception (either an error or timeout) detected by watchdog at work` (LD505).
# 3567 -> 3632 (session 35, LD2040 and ofi35): the plugin's 852 -> 907 (below); NCCL 2.29+'s Windows affinity calls
# (LD482) and 2.30's Windows topology reads (LD4000), 2073 -> 2083.
# 3632 -> 3642 (session 36, cat36): NCCL 2083 -> 2093: 2.26+'s "host threads racing to launch NCCL" (LD5000), 2.10.3+'s
# "Could not find real path" of a GPU's PCI path, a note there (LD4001), 2.28's "no symmetric kernel available"
# (LD4002/LD4003), 2.3's "[Proxy thread error]" (LD2046), 2.28.7+'s IB completion with a status name (LD204);
# the plugin's 907 -> 911 (below).
EXPLAINED_BY_A_RULE_FLOOR = 3646


# Of them, the AWS OFI plugin's WARN formats (tests/data/ofi-messages-by-version.tsv, 921) that a rule explains: 21 at
# session 30's start; 622 with the rules LD2014-LD2028, which group the plugin's formats by cause (host memory,
# teardown after an abort, internal checks, PCI topology, the topology file, CUDA, OFI_NCCL_* settings, provider
# features, libfabric resources, posting after a failure, ID pools, rails, the tuner). 847 (session 31) with
# LD2029-LD2039: GDRCopy, GIN's set-up, NCCL calling the plugin in ways its release does not support, the two ends
# disagreeing, start-up follow-ups, setenv, no usable provider, settings noted or ignored, request pools used up,
# exceptions in connect / accept / listen, the registered buffer pools' set-up. 851 of 920 -> 852 of 921 (session 32,
# leads32): the extractor reads a macro's argument joined to the literals ("Called " fn_name " on request with inactive
# endpoint", once catalogued as "Called ") as %s, which also gives 1.16-1.17's "inactive domain" (LD2026's) and
# PACKAGE_NAME's "aws-ofi-nccl initialization failed" (the plugin card's: the summary after the WARN that says why),
# and "%" PRIu64 as %lu, not %%lu, which merges two rows of "Received an invalid communicator ID".
# 852 -> 903 (session 35): buffer registration (LD2040); the completion-queue error entry of every release (LD2041),
# memory-registration keys (LD2042), the endpoint-per-communicator list (LD2043), registrations bound to an endpoint
# (LD2044), 1.20's "CM connect failed: <exception>" (LD2038) and follow-ups of earlier failures (LD2014, LD2016,
# LD2024, LD2026, LD2033), the flush buffer's missing key (LD2042), a registered buffer's mmap (LD2014), 1.7-1.8's
# retried connect-message receive (LD2045) and SENDRECV's freelist registration (LD2039) (ofi35).
# 907 -> 911 (session 36, cat36): the AWS platform set-up's NCCL version check (LD2047, LD2048) and its instance-type
# lookup (LD2049).
OFI_EXPLAINED_BY_A_RULE_FLOOR = 911


def test_the_rules_explain_at_least_the_floor():
    cc = tool()
    tallies, _ = cc.measure(cc.all_items(), load_rules())
    assert sum(t[2] for t in tallies.values()) >= EXPLAINED_BY_A_RULE_FLOOR
    assert tallies["ofi"][2] >= OFI_EXPLAINED_BY_A_RULE_FLOOR


def test_the_ofi_plugins_lines_and_their_extraction():
    cc = tool()
    rows = [line for line in (ROOT / "tests" / "data" / "ofi-messages-by-version.tsv").read_text(encoding="utf-8")
            .splitlines() if not line.startswith(("#", "format\t"))]
    ofi = list(cc.ofi_lines())
    assert len(ofi) == len(rows) >= 900
    assert all(" NCCL WARN NET/OFI " in line for _, line in ofi)
    # a literal's C escapes are printed as the plugin prints them (`\"` is a quote)
    assert any('NCCL_PROTO was set to "LL/LL128", but' in line for _, line in ofi)
    assert not any('\\"' in line for _, line in ofi)
    assert "ofi" in {source for source, *_ in cc.all_items()}

    spec = importlib.util.spec_from_file_location("ofi_catalog", ROOT / "tools" / "ofi_catalog.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # adjacent literals joined, an integer macro between them read as a conversion, the arguments left out
    assert mod._format('"Request %p seq " PRIu64 " failed: "\n\t\t"%s", req, seq, err);') == "Request %p seq %lu failed: %s"
    assert mod._format("msg, arg);") is None   # a format that is not a literal
    # a macro's argument joined to the literals is the string it expands to; a known literal macro is its text
    assert mod._format('"Called " fn_name " on request with inactive endpoint"); \\') == \
        "Called %s on request with inactive endpoint"
    assert mod._format('PACKAGE_NAME " initialization failed");', {"PACKAGE_NAME": "aws-ofi-nccl"}) == \
        "aws-ofi-nccl initialization failed"
    # PRIx64 completes the conversion a literal opened ("%" PRIu64 is %lu, "0x%016" PRIX64 is 0x%016lX)
    assert mod._format('"Key (%" PRIu64 ") at 0x%016" PRIX64, k, a);') == "Key (%lu) at 0x%016lX"
    assert not any(row.startswith(("Called \t", "Called\t")) or "%%l" in row for row in rows)
    assert any(row.startswith("Called %s on request with inactive endpoint\t") for row in rows)
