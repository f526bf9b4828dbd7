"""``logdoc redact`` and ``explain --redact``: what is replaced, what is kept, and the promise that
logdoc says the same about a redacted copy as about the original (every sample)."""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logdoc.redact import Redactor, redact_paths, RedactError, _IPV4

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SAMPLE_DIRS = sorted(p.parent for p in SAMPLES.glob("*/sample.yaml"))
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1"}


def learned(*lines: str) -> Redactor:
    r = Redactor()
    for line in lines:
        r.learn_line(line)
    return r


# ------------------------------------------------------------------------------------------------
# what is kept

KEPT = [
    "NCCL version 2.21.5+cuda12.4", "cuda12.4", "torch 2.7.1", "cudnn 9.1.0.70", "nccl==2.18.3",
    "comm 0x5655f915ef00 rank 3 nranks 8 cudaDev 3 nvmlDev 3 busId 18000 commId 0x4c0d9e7a2b165f38 - Init START",
    "busId 0000:18:00.0", "[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632]", "2026-11-29T17:01:53.123Z",
    "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]", "eth0 enp1s0f0np0 ib0 bond4 eno1 docker0 lo",
    "Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA", "[rank3]: RuntimeError: connect() timed out",
    "c10::Error std::runtime_error c10d::ProcessGroupNCCL::WorkNCCL at::Tensor", "127.0.0.1:29500 [::1]:29500",
    "[::ffff:127.0.0.1]:51618", "0.0.0.0 255.255.255.255", "172.17.0.1 (docker0)", "port 29500 pid 77310",
    "PG GUID 1(mesh_pp)", "17:01:53 12:34:56.789", "exitcode: -9 (SIGKILL)", "Timeout(ms)=600000",
    "frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x1e9 (0x7f1a2b3c4d5e in libtorch_cuda.so)",
    "rank0 rank12 local_rank 3 [default0]: [1]: world_size 16", "node_rank=1 master_port=29500",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_a_diagnosis_needs_is_kept(text):
    r = learned("dgx1:1:1 [0] NCCL INFO x", "  host      : gpu-node-11")
    assert r.text(text) == text


# ------------------------------------------------------------------------------------------------
# what is replaced

def test_hosts_are_learned_from_where_logs_print_them():
    r = learned(
        "dgx1:1311:1311 [0] NCCL INFO Bootstrap : Using eth0:10.50.0.11<0>",
        "[2026-11-29 17:00:00] hgx-b07:7:7 [1] transport/net_ib.cc:10 NCCL WARN x",
        "  host      : pod4-gpu001.cluster.local",
        "srun: error: node-17: task 3: Exited with exit code 1",
        "slurmstepd: error: *** STEP 812.0 ON gpu-a24 CANCELLED AT 2026-11-29T17:00:00 ***",
        "[pod/trainer-worker-3/pytorch] hello",
        "Rank 5 on host cn-0042 failed",
        "MASTER_ADDR=head-node-1 MASTER_PORT=29500",
        "TCP client failed to connect/validate to host store-7:29500 - retrying",
    )
    assert list(r.hosts) == ["dgx1", "hgx-b07", "pod4-gpu001.cluster.local", "node-17", "gpu-a24",
                             "trainer-worker-3", "cn-0042", "head-node-1", "store-7"]


@pytest.mark.parametrize("line", [
    "Rank 3 on the node", "rank0: hello", "MASTER_ADDR:MASTER_PORT", "  host      : localhost",
    "  host      : <N/A>", "Rank 1 on node eth0", "on host 10.0.0.1",
])
def test_words_ranks_interfaces_and_addresses_are_not_learned_as_hosts(line):
    assert list(learned(line).hosts) == []


def test_envelope_hosts_come_from_parsed_events():
    from logdoc.pipeline import parse_text

    res = parse_text("node-7: [rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] [PG 0 Rank 0] NCCL error\n"
                     "[pod/job-worker-2/main] RuntimeError: NCCL error: unhandled system error\n")
    r = Redactor.for_events(res.events)
    assert {"node-7", "job-worker-2"} <= set(r.hosts)


def test_every_kind_is_replaced_with_a_stable_alias():
    r = learned("dgx1:1:1 [0] NCCL INFO a", "dgx2:2:2 [0] NCCL INFO b", "  host      : node9.corp.example")
    text = ("dgx1 talks to dgx2-ib0 and node9.corp.example (node9) from 10.50.0.11 and 10.50.0.12 to 10.60.1.5; "
            "fe80::a288:c2ff:fe4b:1d30%ib0 2001:db8:1:2::7 GID fe80:0000:0000:0000:506b:4b03:00c2:a0f8 "
            "mac 00:1A:2b:3c:4d:5e port_guid 0x506b4b0300c2a0f8 node_guid 506b:4b03:00c2:a0f9 "
            'File "/home/ana/train.py" by ana.lee@corp.example.com USER=ana')
    out = r.text(text)
    assert out == ("host-1 talks to host-2-ib0 and host-3.domain-1 (host-3) from 10.200.0.11 and 10.200.0.12 to "
                   "10.200.1.5; fe80::1%ib0 fd00:0:0:1::2 GID fe80:0000:0000:0000:0000:0000:0000:0003 "
                   "mac 02:00:00:00:00:01 port_guid 0x0200000000000002 node_guid 0200:0000:0000:0001 "
                   'File "/home/user-1/train.py" by user-1@example.invalid USER=user-1')
    assert r.text(text) == out  # stable: the same alias for the same thing, every time


def test_networks_keep_their_shape():
    r = Redactor()
    a, b, c = r.text("10.1.2.3"), r.text("10.1.2.4"), r.text("10.1.3.3")
    assert a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] != c.rsplit(".", 1)[0]   # same /24 stays one /24
    assert r.text("169.254.7.9").startswith("169.254.")                      # link-local stays link-local
    assert r.text("fe80::1234:5678:9abc:def0").startswith("fe80::")
    assert r.text("[10.1.2.3]:51618") == f"[{a}]:51618"                     # Gloo's peer: port kept


def test_aliases_never_collide_with_the_input():
    r = learned("peer 10.200.0.5 and 10.7.7.7", "dgx1:1:1 [0] NCCL INFO x")
    assert not r.text("10.7.7.7").startswith("10.200.0.")
    r = learned("host-1:1:1 [0] NCCL INFO a", "dgx1:1:1 [0] NCCL INFO b")   # a real host named host-1
    assert r.text("dgx1 host-1") == "rhost-2 rhost-1"


def test_versions_and_pointers_that_look_like_addresses():
    r = Redactor()
    for text in ("cudnn 9.1.0.70", "driver 535.104.05", "version==1.2.3.4", "0x7f1a2b3c4d5e", "1.2.3.4.5"):
        assert r.text(text) == text


def test_report_keys_are_redacted_too():
    r = learned("dgx1:1:1 [0] NCCL INFO a")
    assert r.value({"hosts_by_version": {"dgx1": ["2.21.5"]}, "n": 3}) == {"hosts_by_version": {"host-1": ["2.21.5"]}, "n": 3}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("dgx1:0.5 abf-[]@/home\n12") + ["dgx1", "10.1.2.3", "::", "ana"]),
                max_size=80).map("".join))
def test_any_text_is_redacted_without_error_and_hides_learned_hosts(text):
    r = learned("dgx1:1:1 [0] NCCL INFO x")
    out = r.text(text)
    assert isinstance(out, str)
    assert not re.search(r"(?<![A-Za-z0-9])dgx1(?![A-Za-z0-9])", out)
    # a run of five or more dotted numbers (10.1.2.3.1) is a version or an OID, not an address
    assert not re.search(r"(?<![\w.])10\.1\.2\.3(?!\.?\d)", out)


def test_redaction_is_linear_on_hostile_lines():
    r = learned("dgx1:1:1 [0] NCCL INFO x", "  host      : a_b-1")
    for unit in ("a:", "1.", "ff:", "a@b.", "/home/x", "dgx1-", "a.b-", "::", "0x", "guid ", "1.1.1.1.", "a_b-1_"):
        text = unit * (100_000 // len(unit))
        t0 = time.process_time()
        r.text(text)
        r.learn_line(text)
        # a guard against super-linear matching (quadratic on 100,000 characters takes minutes), not a speed
        # target: linear work here is milliseconds even on a loaded machine
        assert time.process_time() - t0 < 10.0, unit


# ------------------------------------------------------------------------------------------------
# the same diagnoses, nothing left

@lru_cache(maxsize=1)
def _rules():
    from logdoc.kb import load_rules

    return load_rules()


def _diagnoses(path: str) -> list[tuple]:
    from logdoc.api import build_report
    from logdoc.pipeline import parse_paths

    report = build_report(parse_paths([path]), _rules())
    return [(d["category"], d["id"], d["ranks"]) for d in report["diagnoses"]]


def _texts(folder: Path) -> str:
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != "sample.yaml":
            data = p.read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            out.append(data.decode("utf-8", "replace"))
    return "\n".join(out)


_NOT_IDENTIFYING = ("127.", "0.", "255.255.255.255", "172.17.")


@pytest.mark.parametrize("sample", SAMPLE_DIRS, ids=lambda p: p.name)
def test_redacted_sample_gives_the_same_diagnoses_and_leaks_nothing(sample, tmp_path):
    out = tmp_path / "redacted"
    r, done = redact_paths([str(sample)], str(out))
    assert done["files"] >= 1 and not done["skipped"]
    assert _diagnoses(str(out)) == _diagnoses(str(sample))
    original, redacted = _texts(sample), _texts(out)
    for host in r.hosts:
        assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(host)}(?![A-Za-z0-9])", redacted), host
    for m in set(_IPV4.findall(original)):
        if not m.startswith(_NOT_IDENTIFYING):
            assert not re.search(rf"(?<![\d.]){re.escape(m)}(?!\d)", redacted), m
    for user in r.mapping().get("user", {}):
        assert f"/{user}/" not in redacted


def test_all_hosts_of_the_samples_are_found(tmp_path):
    """Every host the parser attributes an event to, or that a torchrun summary names, is learned."""
    from logdoc.pipeline import parse_paths

    r, _ = redact_paths([str(SAMPLES)], str(tmp_path))
    want = set()
    for ev in parse_paths([str(SAMPLES)]).events:
        if ev.host:
            want.add(ev.host)
        for f in ev.fields.get("failures") or ():
            if isinstance(f, dict) and f.get("host") and f["host"] != "localhost":
                want.add(f["host"])
    assert want and want <= set(r.hosts)


# ------------------------------------------------------------------------------------------------
# the command

def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "logdoc", *args], capture_output=True, text=True, timeout=120,
                          env=ENV, cwd=ROOT, **kw)


def test_cli_mirrors_the_tree_renames_host_files_and_keeps_gzip(tmp_path):
    src = tmp_path / "job"
    (src / "logs" / "attempt_0").mkdir(parents=True)
    node = (SAMPLES / "nccl-ib-completion-error-12" / "node0.log").read_bytes()
    (src / "hgx-b07.log").write_bytes(node)
    (src / "logs" / "attempt_0" / "rank1.log.gz").write_bytes(gzip.compress(node))
    (src / "core").write_bytes(b"\x00" * 4096)
    res = run("redact", str(src), "-o", str(tmp_path / "out"), "--map", str(tmp_path / "key.json"))
    assert res.returncode == 0, res.stderr
    files = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == ["host-1.log", "logs/attempt_0/rank1.log.gz"]
    assert gzip.decompress((tmp_path / "out" / "logs" / "attempt_0" / "rank1.log.gz").read_bytes()).startswith(b"host-1:")
    assert res.stderr.splitlines()[0] == f"logdoc: skipped {src / 'core'}: binary file"
    assert res.stderr.splitlines()[-1].startswith("logdoc: redacted 572 lines in 2 files to ")
    key = json.loads((tmp_path / "key.json").read_text())
    assert key["host"] == {"hgx-b07": "host-1"}


def test_cli_one_input_to_standard_output_and_from_standard_input():
    node = SAMPLES / "nccl-socket-fallback" / "node0.log"
    res = run("redact", str(node))
    assert res.returncode == 0 and res.stdout.startswith("host-1:182301:182301 [0] NCCL INFO Bootstrap: Using eno1:10.200.0.11<0>")
    assert "gpu-node-11" not in res.stdout
    res2 = run("redact", "-", "-o", "-", input=node.read_text())
    assert res2.returncode == 0 and res2.stdout == res.stdout


def test_cli_usage_errors(tmp_path):
    res = run("redact", str(SAMPLES / "nccl-socket-fallback"))
    assert res.returncode == 2 and res.stderr.strip() == (
        "logdoc: error: 2 inputs: give a folder with -o/--out (- writes one input to standard output)")
    node = tmp_path / "n.log"
    node.write_text("dgx1:1:1 [0] NCCL INFO x\n")
    res = run("redact", str(node), "-o", str(tmp_path))
    assert res.returncode == 2 and "refusing to overwrite the input" in res.stderr
    assert node.read_text() == "dgx1:1:1 [0] NCCL INFO x\n"


def test_explain_redact_shows_no_original_host_or_address():
    sample = SAMPLES / "nccl-ib-completion-error-12"
    plain = json.loads(run("explain", str(sample), "--format", "json").stdout)
    res = run("explain", str(sample), "--format", "json", "--redact")
    report = json.loads(res.stdout)
    assert [(d["category"], d["id"], d["ranks"]) for d in report["diagnoses"]] == \
        [(d["category"], d["id"], d["ranks"]) for d in plain["diagnoses"]]
    assert "hgx-b07" in json.dumps(plain)
    text = json.dumps(report)
    for secret in ("hgx-b07", "hgx-b08", "10.50.0."):
        assert secret not in text
    assert report["diagnoses"][0]["hosts"] and all(h.startswith("host-") for h in report["diagnoses"][0]["hosts"])
