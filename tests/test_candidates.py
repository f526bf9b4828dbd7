"""The ranked differential in the report (logdoc/differential/candidates.py): after a generic first
diagnosis, the next candidate causes as diagnoses of role ``candidate``, ranked by what the log shows."""
from __future__ import annotations

from functools import lru_cache

from logdoc.api import build_report
from logdoc.kb import load_rules
from logdoc.kb.schema import REPORT_ROLES
from logdoc.pipeline import parse_sources
from logdoc.report.markdown import render as render_markdown

SYSTEM_ERROR = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
                "NCCL version 2.20.5")
ONE_NODE = "node1:12:12 [0] NCCL INFO comm 0x55d0c4a0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0"
TWO_HOSTS = ("node1:12:12 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
             "node2:13:13 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n")


@lru_cache(maxsize=1)
def _rules():
    return load_rules()


def _report(files: dict[str, str]) -> dict:
    return build_report(parse_sources(list(files.items())), _rules())


def _cands(report: dict) -> list[dict]:
    return [d for d in report["diagnoses"] if d["role"] == "candidate"]


def test_candidate_is_a_report_role():
    assert "candidate" in REPORT_ROLES


def test_generic_system_error_gets_two_ranked_candidates():
    rep = _report({"rank0.log": SYSTEM_ERROR + "\n"})
    diags = rep["diagnoses"]
    assert diags[0]["role"] in ("symptom", "root_cause") and diags[0]["severity"] == "error"
    cands = _cands(rep)
    assert len(cands) == 2
    assert [d["role"] for d in diags[1:3]] == ["candidate", "candidate"]  # right after the lead
    assert diags[0]["category"] not in {c["category"] for c in cands}
    for c in cands:
        assert c["severity"] in ("warning", "info")
        assert c["title"].startswith("Candidate: ")
        assert c["fix"] and c["evidence"]


def test_candidate_order_follows_the_log():
    """One node: shared memory leads and the network causes drop out (the log speaks against them);
    two hosts: the network first."""
    one = _report({"rank0.log": ONE_NODE + "\n" + SYSTEM_ERROR + "\n"})["diagnoses"]
    two = _report({"rank0.log": TWO_HOSTS + SYSTEM_ERROR + "\n"})["diagnoses"]
    one_cats = [d["category"] for d in one[:3]]
    two_cats = [d["category"] for d in two[:3]]
    assert "shm_exhausted" in one_cats[:2]
    assert not {"firewall_or_unreachable_peer", "wrong_network_interface"} & set(one_cats)
    assert two_cats[:2] == ["firewall_or_unreachable_peer", "wrong_network_interface"]
    assert [d["role"] for d in two[1:3]] == ["candidate", "candidate"]
    assert one_cats != two_cats


def test_a_candidate_shows_the_lines_that_speak_for_it():
    env = "node1:12:12 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    rep = _report({"rank0.log": env + TWO_HOSTS + SYSTEM_ERROR + "\n"})
    cands = {c["category"]: c for c in _cands(rep)}
    iface = cands["wrong_network_interface"]
    assert iface["severity"] == "warning" and iface["for"]
    assert any("NCCL_SOCKET_IFNAME" in e["text"] for e in iface["evidence"])
    quiet = [c for c in cands.values() if not c["for"]]
    assert all(c["severity"] == "info" for c in quiet)


def test_no_candidates_after_a_specific_root_cause():
    line = ("node1:12:12 [0] misc/shmutils.cc:82 NCCL WARN Error while creating shared memory segment "
            "/dev/shm/nccl-abc (size 9637888)")
    rep = _report({"rank0.log": line + "\n" + SYSTEM_ERROR + "\n"})
    assert rep["diagnoses"][0]["category"] == "shm_exhausted"
    assert not _cands(rep)


def test_a_result_whose_warn_a_rule_reads_gets_no_family_card():
    """`NCCL error ...: internal error` of one stream and, apart (another process's prefix), the `Last error:` NCCL printed
    for it, which a rule reads: the rule's reading leads, not the result's generic family card."""
    text = ("NCCL error in: ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3\n"
            "node2: Last error:\n"
            "node2: Net : Call to recv from 10.0.0.2<56843> failed : Connection reset by peer\n")
    ids = [d["id"] for d in _report({"rank0.log": text})["diagnoses"]]
    assert ids[0] == "LD111" and not any(i.startswith("family:") for i in ids), ids
    # NCCL's error trace returning the result (`-> 3`) beside the WARN a rule reads: the same
    trace = ("node1:9:12 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.2<40318>\n"
             "node2:7:11 [1] NCCL INFO bootstrap.cc:312 -> 3\n"
             "node2:7:11 [1] NCCL INFO init.cc:1493 -> 3\n")
    ids = [d["id"] for d in _report({"rank0.log": trace})["diagnoses"]]
    assert ids[0] == "LD110" and not any(i.startswith("family:") for i in ids), ids
    # without the WARN, the result is still read on its own
    alone = [d["id"] for d in _report({"rank0.log": text.split("\n", 1)[0] + "\n"})["diagnoses"]]
    assert alone and "LD111" not in alone


def test_candidates_in_markdown():
    rep = _report({"rank0.log": SYSTEM_ERROR + "\n"})
    md = render_markdown(rep)
    assert "candidate" in md and "Candidate: " in md


WATCHDOG = ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={n}, NumelOut={n}, Timeout(ms)={t}) "
            "ran for {t} milliseconds before timing out.")


def test_a_bare_watchdog_timeout_is_read_from_its_record():
    """SeqNum, OpType, NumelIn and Timeout(ms) decide: a start-up barrier is a rank still busy (hung next);
    a late collective is a hung rank (a too-short timeout next); an hour-long timeout is not too short."""
    early = [d["category"] for d in _report({"r.log": WATCHDOG.format(seq=2, op="ALLREDUCE", n=1, t=1800000)})["diagnoses"]]
    late = [d["category"] for d in _report({"r.log": WATCHDOG.format(seq=4711, op="ALLREDUCE", n=4096, t=1800000)})["diagnoses"]]
    long_ = [d["category"] for d in _report({"r.log": WATCHDOG.format(seq=4711, op="_ALLGATHER_BASE", n=4096, t=5400000)})["diagnoses"]]
    assert early[:2] == ["timeout_misconfigured", "collective_timeout_hung_rank"]
    assert late[0] == "collective_timeout_hung_rank" and "timeout_misconfigured" in late[1:3]
    assert long_[0] == "collective_timeout_hung_rank" and "timeout_misconfigured" not in long_


def test_an_internal_error_at_init_names_a_missing_interface_among_its_candidates():
    """ncclInternalError without a WARN: a rule only half sure of its cause (confidence 0.5) is a
    generic lead, and NCCL's internal error is also what it returns when no socket interface matches
    NCCL_SOCKET_IFNAME (NCCL's source): that candidate follows, on nccl-tests and on a wrapper's line."""
    for text in ("node1: Test NCCL failure common.cu:959 'internal error - please report this issue to the NCCL developers / '",
                 "ERROR 05-30 22:22:26 [pynccl.py:153] ncclCommInitRank failed with error: NCCL error: internal error - "
                 "please report this issue to the NCCL developers"):
        rep = _report({"rank0.log": text + "\n"})
        assert rep["diagnoses"][0]["category"] == "nccl_bug_or_version_specific", rep["diagnoses"][:1]
        assert "wrong_network_interface" in [c["category"] for c in _cands(rep)], [d["id"] for d in rep["diagnoses"]]


def test_a_bare_unhandled_cuda_error_names_the_driver_pairing_first():
    """ncclUnhandledCudaError without its WARN: NCCL's CUDACHECK turns the first failing CUDA call of the
    init into it, where an NCCL built for another CUDA than the driver fails: that leads (LD815), and the
    result's other candidates follow."""
    rep = _report({"rank0.log": "Test NCCL failure common.cu:777 'unhandled cuda error'\n"})
    cats = [d["category"] for d in rep["diagnoses"][:3]]
    assert cats[0] == "fabric_manager_or_driver" and "cuda_error_other" in cats[1:], cats


def test_the_aws_ofi_plugin_warnings_get_their_own_candidates():
    """aws-ofi-nccl's WARNs (NET/OFI ...) are in no NCCL catalog: a completion error is read as a
    security group first, a registration refused with EFAULT as a missing GPUDirect path."""
    cq = ("node1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7f00deadbeef completed with error. "
          "RC: 113. Error: No route to host. Completed length: 0, Request: { dev: 1, size: 0 }\n")
    reg = ("node1:35:89 [5] register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) "
           "for device 0. RC: {rc}, Error: {err}\n")
    assert _report({"r.log": cq})["diagnoses"][0]["category"] == "firewall_or_unreachable_peer"
    # EINVAL on GPU memory is rule LD2002's (EFA installers before 1.29.1 with NCCL 2.19+): a named cause, no candidates
    einval = _report({"r.log": reg.format(rc=-22, err="Invalid argument")})["diagnoses"]
    efault = [d["category"] for d in _report({"r.log": reg.format(rc=-14, err="Bad address")})["diagnoses"]]
    assert (einval[0]["id"], einval[0]["category"]) == ("LD2002", "nccl_bug_or_version_specific")
    assert efault[0] == "gpu_direct_rdma_issue"


def _top3(text: str) -> list[str]:
    return [d["category"] for d in _report({"rank0.log": text})["diagnoses"][:3]]


def test_a_bare_system_error_names_shared_memory_next():
    """ncclSystemError with nothing else in the log: creating, extending or mapping a /dev/shm segment
    returns it (NCCL's shm code), and a container's default /dev/shm is the commonest case, so it is among
    the first three even when the log says nothing of the node count."""
    cats = _top3("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, "
                 "unhandled system error, NCCL version 2.10.3\n")
    assert "shm_exhausted" in cats, cats


def test_a_bare_unhandled_cuda_error_names_the_release_among_the_first_three():
    cats = _top3("ncclUnhandledCudaError: Call to CUDA function failed.\n")
    assert cats[1] == "fabric_manager_or_driver" and "nccl_bug_or_version_specific" in cats, cats


def test_a_bare_invalid_usage_is_a_duplicate_gpu_first_and_a_cuda_graph_capture_speaks_for_the_driver():
    """ncclInvalidUsage: the init's duplicate-GPU check is its commonest source; under CUDA-graph capture
    (vLLM's pynccl) NCCL returns it when the driver or NCCL's CUDA is too old for capture."""
    bare = _top3("Failed, NCCL error test.cu:106 'invalid usage'\n")
    assert bare[0] == "duplicate_gpu", bare
    captured = _top3(
        '  File "/opt/venv/lib/python3.10/site-packages/vllm/distributed/device_communicators/pynccl_wrapper.py", '
        "line 223, in NCCL_CHECK\n"
        '    raise RuntimeError(f"NCCL error: {error_str}")\n'
        "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n")
    assert "fabric_manager_or_driver" in captured[:2], captured


def test_a_bare_remote_error_names_the_interface_next():
    cats = _top3("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                 "ProcessGroupNCCL.cpp:1333, remote process exited or there was a network error, NCCL version 2.18.6\n")
    assert cats[0] == "peer_process_died" and "wrong_network_interface" in cats, cats


def test_a_gloo_receive_timeout_ranks_a_missing_partner():
    """Gloo's waitRecv timed out: the connection was up and the peer never sent (hung, another
    collective, busy), so the network causes do not lead."""
    cats = _top3("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms "
                 "for recv operation to complete\n")
    assert cats[0] == "collective_timeout_hung_rank" and "collective_mismatch" in cats, cats
    assert "firewall_or_unreachable_peer" not in cats


def test_a_socket_closed_in_the_bootstrap_accept_names_the_release_before_2_27_3():
    """Before NCCL 2.27.3 a connection closed before its magic number failed the bootstrap's accept
    (src/misc/socket.cc); a trace through bootstrap.cc speaks for it, a 2.27.3 version line against."""
    trace = ("node1:1234:1240 [0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer node2<36138>\n"
             "node1:1234:1240 [0] NCCL INFO misc/socket.cc:80 -> 6\n"
             "node1:1234:1240 [0] NCCL INFO bootstrap.cc:701 -> 6\n")
    cats = _top3(trace)
    assert cats[0] == "peer_process_died" and cats[1] == "nccl_bug_or_version_specific", cats
    new = _top3("node1:1234:1234 [0] NCCL INFO NCCL version 2.28.3+cuda12.9\n" + trace)
    assert new[1] == "firewall_or_unreachable_peer", new


def test_wrong_values_in_nccl_tests_name_the_driver_next():
    cats = _top3("Out of bounds values : 248 FAILED\n")
    assert cats[0] == "p2p_acs_iommu_hang" and "fabric_manager_or_driver" in cats, cats


def test_a_cut_traceback_waiting_in_main_process_first_names_the_timeout():
    cats = _top3('Traceback (most recent call last):\n'
                 '  File "/workspace/run_clm.py", line 414, in main\n'
                 '    with training_args.main_process_first(desc="dataset map tokenization"):\n'
                 '  File "/usr/lib/python3.10/contextlib.py", line 135, in __enter__\n'
                 '    return next(self.gen)\n')
    assert "timeout_misconfigured" in cats, cats


def test_a_nonblocking_call_timeout_is_a_missing_peer_with_the_timeout_next():
    cats = _top3("RuntimeError: NCCL timeout when waiting for nonblocking call to become successful.\n")
    assert cats[0] == "collective_timeout_hung_rank" and cats[1] == "timeout_misconfigured", cats


def test_a_python_exception_that_is_only_a_connect_error_is_a_network_card_not_the_programs_bug():
    # PyTorch 1.x's TCPStore raised its connect's error text bare; Python's socket raises its own types
    for line in ("RuntimeError: Connection refused", "ConnectionRefusedError: [Errno 111] Connection refused",
                 "TimeoutError: [Errno 110] Connection timed out", "OSError: [Errno 113] No route to host",
                 "RuntimeError: Network is unreachable", "OSError: [Errno 99] Cannot assign requested address",
                 "RuntimeError: Address family not supported by protocol"):
        diags = _report({"rank0.log": line + "\n"})["diagnoses"]
        assert diags and diags[0]["id"] == "family:socket_connect_failed", (line, [d["id"] for d in diags])
        cats = {d["category"] for d in diags}
        assert {"firewall_or_unreachable_peer", "rendezvous_store_failure"} <= cats, line
    # near-misses: a program's own exception stays the program's; a Gloo mesh that was refused keeps its rule
    assert _report({"r.log": "ValueError: bad shape\n"})["diagnoses"][0]["id"] == "LD710"
    gloo = ("RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152] "
            "timed out connecting: SO_ERROR: Connection refused, remote=[10.0.0.2]:18306\n")
    assert not _report({"r.log": gloo})["diagnoses"][0]["id"].startswith("family:")


_CARRIER = ("Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n    dist.all_reduce(t)\n"
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "Last error:\n{last}\n")


def test_a_carrier_whose_last_error_a_rule_explains_gets_no_family_card():
    # the WARN under `Last error:` is what the carrier's generic `unhandled system error` reports; a rule that
    # names it (here a symptom: the peer's EFA endpoint is gone) leads, not the carrier's family
    last = ("NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. Error: Invalid receiver queue pair "
            "number (QPN) My EFA addr: fi_addr_efa://[fe80::1]:0:657145598")
    ids = [d["id"] for d in _report({"r0.log": _CARRIER.format(last=last)})["diagnoses"]]
    assert ids[0] == "LD2005" and not any(i.startswith("family:") for i in ids)
    # a Last error no rule names leaves the carrier's family card
    ids = [d["id"] for d in _report({"r0.log": _CARRIER.format(last="some plugin said something odd"),
                                     })["diagnoses"]]
    assert ids[0].startswith("family:")


def test_a_store_that_could_not_be_reached_ranks_what_keeps_it_unreachable():
    """The c10d store's connect failed: the message says that, not why. A host name as the store's
    address and a connect that timed out speak for a name that leads elsewhere and for a network that
    drops the port; a refused connect speaks for a store that was not listening (the lead's own cause)."""
    timed_out = ("torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
                 "(trainer-0, 29500). The client socket has failed to connect to trainer-0:29500 (errno: 110 - "
                 "Connection timed out).")
    rep = _report({"rank1.log": timed_out + "\n"})
    lead, cands = rep["diagnoses"][0], _cands(rep)
    assert lead["category"] == "rendezvous_store_failure" and lead["severity"] == "error"
    assert {c["category"] for c in cands} == {"hostname_resolution", "firewall_or_unreachable_peer"}
    assert all(c["for"] for c in cands)
    by_ip = timed_out.replace("trainer-0", "10.1.2.3")
    names = [c["category"] for c in _cands(_report({"rank1.log": by_ip + "\n"}))]
    assert names[0] == "firewall_or_unreachable_peer"   # the address is a number: nothing speaks for the name
    rdzv = ("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
            "failed. See inner exception for details.")
    assert _cands(_report({"agent.log": rdzv + "\n"}))


def test_a_peer_that_no_route_reaches_and_a_hostname_gloo_cannot_resolve_name_the_interface_next():
    """NCCL's connect to a peer that found no route, and Gloo's lookup of its own hostname, are read
    for what happened; the interface that NCCL or Gloo chose is the next candidate, as both fixes go
    through it (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME)."""
    no_route = ("node1:2211:2290 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.19.14<52822> "
                "failed : No route to host")
    gloo = ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:138] rp != nullptr. "
            "Unable to find address for: node1.cluster")
    for text, lead in ((no_route, "firewall_or_unreachable_peer"), (gloo, "hostname_resolution")):
        rep = _report({"rank0.log": text + "\n"})
        assert rep["diagnoses"][0]["category"] == lead
        assert "wrong_network_interface" in [c["category"] for c in _cands(rep)]


def test_an_nvls_setup_failure_names_the_container_and_the_release_after_the_fabric():
    """CUDA refusing NVLS multicast memory says which call failed, not why: the fabric leads, then what this
    log shows for a container without the capability devices, an NCCL release or a forced setting."""
    warn = ("node1:81:93 [0] transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'\n"
            "node1:81:93 [0] NCCL INFO transport/nvls.cc:401 -> 1\n")
    rep = _report({"rank0.log": warn})
    assert rep["diagnoses"][0]["category"] == "fabric_manager_or_driver"
    assert len(_cands(rep)) == 2
    forced = "node1:81:81 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.\n"
    cands = _cands(_report({"rank0.log": forced + warn}))
    assert cands[0]["category"] == "bad_nccl_env_config" and cands[0]["for"]


def test_the_rank_the_others_waited_for_gets_what_kept_it_away():
    """The SeqNums name the rank that never arrived; why is open: a barrier's one-element ALLREDUCE early in
    the run speaks for work of its own that outlasted the timeout."""
    def timeout(rank: int, seq: int) -> str:
        return (f"[rank{rank}]:[E1201 10:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
                f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                f"Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n")
    rep = _report({"rank1.log": timeout(1, 2), "rank2.log": timeout(2, 2), "rank0.log": "loading shards\n"})
    lead, cands = rep["diagnoses"][0], _cands(rep)
    assert lead["category"] == "collective_timeout_hung_rank" and lead["ranks"] == [0]
    assert cands and cands[0]["category"] == "timeout_misconfigured" and cands[0]["for"]


def test_a_rule_sure_of_what_it_read_on_an_undecided_family_keeps_its_confidence_and_gets_candidates():
    """An ``undecided`` family's message says what failed, never why: a rule that reads it leads with its own
    confidence (its rank among the other diagnoses), and the family's next causes follow it all the same. Gloo
    connecting to 127.0.1.1 (the hostname resolves to loopback, LD940 at 0.75) names the interface next; the
    gloo_host_address family is chosen before the broader Gloo I/O family that also meets the line."""
    text = ("terminate called after throwing an instance of 'gloo::IoException'\n"
            "  what():  [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: "
            "Connection refused\n")
    rep = _report({"rank0.log": text})
    lead = rep["diagnoses"][0]
    assert lead["category"] == "hostname_resolution" and lead["confidence"] > 0.5
    assert [c["category"] for c in _cands(rep)][:1] == ["wrong_network_interface"]
    store = ("torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
             "(trainer-0, 29500). The client socket has failed to connect to trainer-0:29500 (errno: 110 - "
             "Connection timed out).\n")
    rep = _report({"rank1.log": store})
    assert rep["diagnoses"][0]["confidence"] > 0.5 and _cands(rep)


def test_undecided_must_be_a_boolean():
    from logdoc.differential.load import Differentials, _add_document

    out = Differentials()
    fam = {"id": "x", "match": {"kind": "nccl.warn"}, "title": "t", "undecided": "yes",
           "generic_causes": ["wrong_network_interface"]}
    _add_document(out, {"families": [fam]}, {}, "f.yaml")
    assert not out.families and any("undecided" in str(p) for p in out.problems)


def test_a_registration_with_jaxs_coordination_service_that_ran_out_of_time_names_the_network_next():
    """The gRPC status and the call it failed, pasted alone: the rule reads a failed registration (logged as
    notices, so the report says a warning), and the coordination family is undecided, so what keeps the
    service away follows, a network that drops the port first: the call ran out of time."""
    text = "DEADLINE_EXCEEDED: Deadline Exceeded\nRPC: /tensorflow.CoordinationService/RegisterTask\n"
    rep = _report({"worker1.log": text})
    lead, cands = rep["diagnoses"][0], _cands(rep)
    assert lead["id"] == "LD694" and lead["severity"] == "warning"
    assert cands and cands[0]["category"] == "firewall_or_unreachable_peer" and cands[0]["for"]
    # the status alone names no service (LD6000's hedged warning): no family, no candidates
    assert not _cands(_report({"worker1.log": "DEADLINE_EXCEEDED: Deadline Exceeded\n"}))
    refused = ("jaxlib.xla_extension.XlaRuntimeError: UNAVAILABLE: failed to connect to all addresses; last error: "
               "UNKNOWN: ipv4:10.0.0.1:1234: Failed to connect to remote host: Connection refused\n")
    rep = _report({"worker1.log": refused})
    assert rep["diagnoses"][0]["category"] == "rendezvous_store_failure"
    assert "firewall_or_unreachable_peer" in [c["category"] for c in _cands(rep)]


def test_a_refused_nccl_connect_names_a_dead_peer_and_the_interface_next():
    """NCCL's connect refused until its retries ran out: nothing listened there. The line does not say whether a
    firewall rejects the port (the rule's reading), the peer had died, or the address led to another host."""
    refused = ("node1:2211:2290 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 192.168.19.14<52822> "
               "failed : Connection refused\n")
    rep = _report({"rank0.log": refused})
    assert rep["diagnoses"][0]["id"] == "LD113"
    assert [c["category"] for c in _cands(rep)] == ["peer_process_died", "wrong_network_interface"]
    # a connect that timed out is another family's (nccl_socket_unreachable): the interface comes first there
    timed_out = refused.replace("Connection refused", "Connection timed out")
    assert [c["category"] for c in _cands(_report({"rank0.log": timed_out}))][:1] == ["wrong_network_interface"]


def test_a_store_that_counted_too_few_clients_names_what_kept_them_away():
    """'Timed out after N seconds waiting for clients. 1/2 clients joined.': the count says that a rank stayed
    away, not why; a connect that timed out speaks for a network that drops the store's port."""
    joined = ("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients "
              "joined.\n")
    rep = _report({"rank0.log": joined})
    lead, cands = rep["diagnoses"][0], _cands(rep)
    assert lead["id"] == "LD603" and len(cands) == 2
    slow = ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 110 - "
            "Connection timed out).\n")
    cands = _cands(_report({"rank0.log": joined, "rank1.log": slow}))
    assert any(c["category"] == "firewall_or_unreachable_peer" and c["for"] for c in cands)


_DEVICE = "RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:{}] "


def test_a_gloo_device_check_cut_in_its_condition_names_the_interface_or_the_host_name():
    """Every check of Gloo's tcp/device.cc is about the address the process listens on: a line cut in
    its condition (a viewer's width) still says which file failed, so the interface and the host name's
    address lead, not a size the ranks disagree on; a condition of the host name's lookup (`rp`) puts
    the name first."""
    by_iface = _top3(_DEVICE.format(83) + "ifa != nul\n")
    assert by_iface[:2] == ["wrong_network_interface", "hostname_resolution"], by_iface
    by_name = _top3(_DEVICE.format(138) + "rp != nul\n")
    assert by_name[0] == "hostname_resolution", by_name
    # whole, the line's own rule reads it
    whole = _report({"rank0.log": _DEVICE.format(84) + "ifa != nullptr. Unable to find address for: ib0\n"})
    assert whole["diagnoses"][0]["id"] == "LD908"
