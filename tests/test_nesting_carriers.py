"""A generic carrier yields to the message it carries (issue 13, 5: a specific cause outranks a generic
one, a root cause beats its symptom).

A message nested in another is an event of its own (logdoc/nested.py); the report ranks it: "a Python
exception" (LD710) or a DistBackendError's card whose only content is a message with a diagnosis of its
own is that diagnosis's evidence, folded under it (logdoc/diagnose.py ``fold_carriers``). The links:
``fields.nested_line``, the records of one line (an exception's repr decoded by the paste repair), the
cause's frames a message goes on with (Ray), an exception that only reports another process's failure
(subprocess's CalledProcessError). The messages are written from the catalogs' formats.
"""
from __future__ import annotations

import pytest

from logdoc.api import build_report
from logdoc.blocks import BlockAssembler
from logdoc.envelope import unwrap
from logdoc.kb import load_rules
from logdoc.nested import carrier_links
from logdoc.pipeline import parse_sources

_DIST = ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
         "1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
         "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
         "Last error:\n")
_WARN = "ncclSocketReady: unexpected socket state 3"   # misc/socket.cc: its own rule (LD184)
_FRAMES = '  File "/workspace/train.py", line 10, in <module>\n    main()\n'


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def _report(text: str, rules) -> dict:
    return build_report(parse_sources([("rank0.log", text + "\n")]), rules)


def _ids(rep: dict) -> list[str]:
    return [d["id"] for d in rep["diagnoses"]]


def _folded(rep: dict) -> list[str]:
    return [s["id"] for s in rep["diagnoses"][0].get("symptoms") or ()]


def _want(rules) -> str:
    rep = _report(f"node1:12:40 [0] misc/socket.cc:448 NCCL WARN {_WARN}", rules)
    return _ids(rep)[0]


def test_the_warn_alone_has_its_rule(rules):
    assert _want(rules) == "LD184"


def test_an_exception_repr_on_one_line_yields_to_the_message_it_quotes(rules):
    # `raise ValueError(f"the worker failed with {e!r}")`: the repr's line ends are escaped
    body = (_DIST + _WARN).split(": ", 1)[1]
    text = "ValueError: the worker failed with DistBackendError({!r})".format(body)
    rep = _report(text, rules)
    assert _ids(rep)[0] == _want(rules)
    assert "LD710" in _folded(rep)


def test_ray_frames_under_the_actor_error_are_the_cause(rules):
    # Ray prints the cause's frames and exception line under its own message, without a traceback head
    text = ("ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation task, "
            "ray::Worker.__init__() (pid=4242, ip=10.0.0.2)\n" + _FRAMES + _DIST + _WARN)
    rep = _report(text, rules)
    assert _ids(rep)[0] == _want(rules)
    assert "LD710" in _folded(rep)


def test_a_called_process_error_yields_to_the_childs_error(rules):
    text = ("subprocess.CalledProcessError: Command '['torchrun', 'train.py']' returned non-zero exit status 1.\n"
            "ERROR:launcher:stderr: " + repr(("Traceback (most recent call last):\n" + _FRAMES + _DIST + _WARN + "\n").encode()))
    rep = _report(text, rules)
    assert _ids(rep)[0] == _want(rules)
    assert "LD710" in _folded(rep)


def test_a_called_process_error_alone_still_says_something(rules):
    rep = _report("subprocess.CalledProcessError: Command '['torchrun', 'train.py']' returned non-zero exit status 1.",
                  rules)
    assert _ids(rep)[0] == "LD710"


def test_a_dist_backend_errors_card_folds_into_the_card_of_its_last_error(rules):
    # a WARN no rule explains (aws-ofi-nccl 1.19's memory-registration cache, logged through NCCL's logger, so
    # NCCL's `Last error:` quotes it): both are cards; the one of the message under `Last error:` leads
    msg = "NET/OFI Unable to initialize domain mr cache"
    alone = _ids(_report(f"node1:12:40 [0] nccl_net_ofi_rdma_init:100 NCCL WARN {msg}", rules))[0]
    assert alone.startswith(("catalog:", "family:"))
    body = (_DIST + msg).split(": ", 1)[1]
    rep = _report("2026-12-02 09:00:00,123 ERROR step failed: DistBackendError({!r})".format(body), rules)
    assert _ids(rep)[0] == alone
    assert any(s.startswith("catalog:torch:") for s in _folded(rep))


def test_a_user_exception_beside_another_ranks_symptom_still_leads(rules):
    # no link: rank 0's own ValueError is the cause, rank 1's closed connection its consequence
    files = [("rank0.log", "Traceback (most recent call last):\n" + _FRAMES + "ValueError: bad batch shape\n"),
             ("rank1.log", "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] "
                           "Connection closed by peer [10.0.0.1]:5000\n")]
    rep = build_report(parse_sources(files), rules)
    assert _ids(rep)[0] == "LD710"


def test_links_are_directed():
    text = ("ValueError: the worker failed with DistBackendError({!r})".format((_DIST + _WARN).split(": ", 1)[1]))
    evs = parse_sources([("x.log", text + "\n")]).events
    links = carrier_links(evs)
    (carrier,) = [e for e in evs if e.kind == "torch.exception"]
    carried = links[("x.log", carrier.line, carrier.kind)]
    assert {k[2] for k in carried} == {"torch.nccl_error", "nccl.warn"}
    assert not any(("x.log", carrier.line, "torch.exception") in v for v in links.values())


# ---------------------------------------------------------------------------------------------
# a traceback without its head: frames start a record

def _records(text: str):
    asm = BlockAssembler()
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        env, msg = unwrap(line)
        out.extend(asm.feed(i, env, msg))
    return out + asm.flush()


C10D = "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py"


def test_frames_without_their_head_start_a_record_through_the_exception_line():
    text = (f'  File "{C10D}", line 4159, in barrier\n    work = default_pg.barrier(opts=opts)\n'
            "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error.\nEpoch 3 done")
    recs = _records(text)
    assert [(r.line, r.end_line) for r in recs][0] == (1, 3)


def test_headless_frames_end_at_a_line_that_is_no_exception():
    text = f'  File "{C10D}", line 4159, in barrier\n    work = default_pg.barrier(opts=opts)\nepoch 3 done'
    recs = _records(text)
    assert [(r.line, r.end_line) for r in recs] == [(1, 2), (3, 3)]


def test_a_paste_that_starts_inside_a_traceback_is_read(rules):
    text = (f'  File "{C10D}", line 4159, in barrier\n    work = default_pg.barrier(opts=opts)\n' + _DIST + _WARN)
    evs = parse_sources([("x.log", text + "\n")]).events
    assert evs[0].line == 1 and evs[0].kind == "torch.nccl_error"
    assert _ids(_report(text, rules))[0] == _want(rules)


# the frames of a cut traceback say where in torch.distributed it stopped (torch/distributed/ sources)

def _cut(frames: list[tuple[str, str]], head: bool = True) -> str:
    body = "".join(f'  File "{p}", line 10, in {f}\n    x = y()\n' for p, f in frames)
    return ("Traceback (most recent call last):\n" if head else "") + body.rstrip("\n")


_TD = "/usr/lib/python3/dist-packages/torch/distributed/"


@pytest.mark.parametrize("frames, where, call", [
    ([("/w/train.py", "main"), (_TD + "distributed_c10d.py", "all_reduce")], "collective", "all_reduce"),
    ([("/w/train.py", "main"), (_TD + "c10d_logger.py", "wrapper"), (_TD + "distributed_c10d.py", "barrier")],
     "collective", "barrier"),
    ([("/w/train.py", "main"), (_TD + "distributed_c10d.py", "init_process_group"),
      (_TD + "rendezvous.py", "_env_rendezvous_handler")], "store", "_env_rendezvous_handler"),
    ([("/w/train.py", "main"), (_TD + "distributed_c10d.py", "_store_based_barrier")], "store", "_store_based_barrier"),
    ([("/usr/local/bin/torchrun", "<module>")], "launcher", "<module>"),
    ([("/usr/local/bin/torchrun", "<module>"), (_TD + "elastic/rendezvous/dynamic_rendezvous.py", "next_rendezvous")],
     "store", "next_rendezvous"),
])
@pytest.mark.parametrize("head", [True, False])
def test_a_cut_traceback_says_where_in_torch_distributed(frames, where, call, head):
    (ev,) = [e for e in parse_sources([("x.log", _cut(frames, head) + "\n")]).events if e.kind == "torch.exception"]
    assert ev.fields.get("cut") and ev.fields["dist_where"] == where and ev.fields["dist_call"] == call


def test_a_cut_traceback_in_the_programs_own_code_says_no_place():
    (ev,) = parse_sources([("x.log", _cut([("/w/train.py", "main"), ("/w/model.py", "forward")]) + "\n")]).events
    assert ev.fields.get("cut") and "dist_where" not in ev.fields


def test_the_place_decides_the_cut_tracebacks_card(rules):
    own = _cut([("/w/train.py", "main"), ("/w/model.py", "forward")])
    coll = _cut([("/w/train.py", "main"), (_TD + "distributed_c10d.py", "all_reduce")])
    store = _cut([("/w/train.py", "main"), (_TD + "rendezvous.py", "_env_rendezvous_handler")])
    agent = ("I1201 10:11:12.000000 4001 torch/distributed/elastic/agent/server/api.py:677] [default] Rendezvous'ing "
             "worker group\n" + _cut([("/usr/local/bin/torchrun", "<module>")]))
    assert [_ids(_report(t, rules))[0] for t in (own, coll, store, agent)] == ["LD772", "LD551", "LD650", "LD651"]


# ------------------------------------------------------------------------------------------------
# the line after a bare `Last error:` is NCCL's last WARN text (debug.cc keeps every WARN's formatted
# text for ncclGetLastError), whatever its first word looks like

_NO_TRANSPORT = "[3] Error no transport for eth0 peer 3 on channel 3"   # proxy.cc: `[%d] Error no transport ...`


def _nested_warns(text: str) -> list:
    return [e for e in parse_sources([("rank0.log", text + "\n")]).events
            if e.kind == "nccl.warn" and (e.fields or {}).get("nested_kind")]


@pytest.mark.parametrize("prefix", ["", "[rank1]: ", "[1,1]<stderr>:", "node2: "])
def test_a_warn_text_that_starts_like_a_prefix_stays_under_last_error(prefix):
    # `[%d] ` is MPICH's rank prefix too: after a bare `Last error:` it is the WARN's own text, and a
    # paste whose every line has a prefix keeps it (rank, host) on the nested message
    text = "\n".join(prefix + line for line in (_DIST + _NO_TRANSPORT).split("\n"))
    warns = _nested_warns(text)
    assert [w.fields["message"] for w in warns] == [_NO_TRANSPORT]
    assert warns[0].template is not None
    carrier = [e for e in parse_sources([("rank0.log", text + "\n")]).events if e.kind == "torch.nccl_error"]
    assert len(carrier) == 1 and carrier[0].text.endswith(_NO_TRANSPORT)
    if prefix == "[rank1]: ":
        assert warns[0].rank == 1
    if prefix == "node2: ":
        assert warns[0].host == "node2"


def test_a_host_like_word_after_last_error_is_the_warn_text():
    # `%s: failed to set the number of devices for netPlugin[%d] to %d` (plugin/net.cc) with a word
    # that pdsh's `host: ` prefix would take
    msg = "net0: failed to set the number of devices for netPlugin[1] to 4"
    warns = _nested_warns(_DIST + msg)
    assert [w.fields["message"] for w in warns] == [msg]
    assert warns[0].host is None


def test_a_prefix_like_line_elsewhere_is_still_peeled():
    # only the line a bare `Last error:` waits for is read whole
    events = parse_sources([("rank0.log", "RuntimeError: boom\n[3] Error no transport for eth0 peer 3 on channel 3\n")]).events
    assert all(e.rank == 3 for e in events if e.kind == "nccl.warn")


def test_a_last_error_no_catalog_reads_is_still_an_nccl_warn(rules):
    # a plugin's own words, or a `WARN("%s", ...)` format: a WARN of no known format, nested in its carrier
    msg = "NET/Plugin : the vendor transport refused the handle (code 7)"
    warns = _nested_warns(_DIST + msg)
    assert len(warns) == 1 and warns[0].template is None
    assert warns[0].fields["message"] == msg and warns[0].fields["nested_kind"] == "torch.nccl_error"
    rep = _report(_DIST + msg, rules)
    assert any(msg in (e.get("text") or "") for e in rep["diagnoses"][0]["evidence"])


def test_an_abort_reason_is_a_message_of_its_own():
    # NCCLUtils: `NCCL communicator was aborted on rank {rank}.  Original reason for failure was: {reason}`;
    # the reason (a watchdog timeout) is read, with its own rank and SeqNum
    text = ("RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for "
            "1800532 milliseconds before timing out.")
    evs = parse_sources([("rank1.log", text + "\n")]).events
    nested = [e for e in evs if (e.fields or {}).get("nested_kind") == "torch.nccl_error"]
    assert [(e.kind, e.fields.get("seq"), e.fields.get("pg_rank")) for e in nested] == [("torch.watchdog_timeout", 7, 1)]


_SHOULD_DUMP = ('[rank1]:[W1201 10:11:12.000000000 ProcessGroupNCCL.cpp:1662] [PG ID 0 PG GUID 0 Rank 1] Failed to check '
                'the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Failed '
                'to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?')


def test_a_warnings_quoted_message_keeps_the_warnings_level(rules):
    # ProcessGroupNCCL's heartbeat monitor warns so at every shutdown where the store's host exits first:
    # the store error it quotes is read (its own event), at the warning's level, and no card is an error
    evs = parse_sources([("rank1.log", _SHOULD_DUMP + "\n")]).events
    nested = [e for e in evs if (e.fields or {}).get("nested_kind") == "torch.flight_recorder"]
    assert [(e.kind, e.level) for e in nested] == [("store.recv_closed", "WARN")]
    rep = _report(_SHOULD_DUMP, rules)
    assert rep["diagnoses"] and all(d["severity"] != "error" for d in rep["diagnoses"])


def test_an_errors_quoted_message_stays_an_error():
    # the same store error quoted by an exception is the job's error
    text = ("torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. Did the "
            "remote server shutdown or crash?")
    evs = parse_sources([("rank1.log", text + "\n")]).events
    assert any(e.kind == "store.recv_closed" and e.level == "ERROR" for e in evs)


def test_a_message_after_an_empty_context_is_read_as_the_catalog_prints_it(rules):
    """``RuntimeError: : NCCL communicator was aborted ...``: an exception whose context before its ``: ``
    was empty; the message after it is NCCL's abort (NCCLUtils), and the watchdog timeout it quotes is an
    event of its own, so the timeout leads (with its candidates), not "a Python exception"."""
    text = ("RuntimeError: : NCCL communicator was aborted on rank 3.  Original reason for failure was: [Rank 3] "
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=266392, OpType=ALLGATHER, "
            "Timeout(ms)=1800000) ran for 1803169 milliseconds before timing out.")
    rep = _report(text, rules)
    kinds = {e.kind for e in parse_sources([("rank0.log", text + "\n")]).events}
    assert {"torch.nccl_error", "torch.watchdog_timeout"} <= kinds
    assert rep["diagnoses"][0]["category"] == "collective_timeout_hung_rank"
    assert "timeout_misconfigured" in [d["category"] for d in rep["diagnoses"][:3]]
    assert "LD710" not in _ids(rep)
    # a colon that is part of the message is not taken for an empty context
    plain = _report("RuntimeError: :memory: is not a valid path", rules)
    assert plain["diagnoses"] == [] or plain["diagnoses"][0]["category"] != "collective_timeout_hung_rank"


def test_a_warn_quoted_by_xlas_status_ends_at_its_quote(rules):
    """XLA's status quotes NCCL's last WARN (``... log entry (may be unrelated) '<WARN>'.``, jax-ml/jax#22747): the
    strerror text LD189 names is the WARN's, without the status's closing quote and full stop."""
    text = ("INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:305: NCCL operation ncclCommInitRank(&comm, nranks, id, "
            "rank) failed: unhandled system error (run with NCCL_DEBUG=INFO for details). Last NCCL warning(error) log "
            "entry (may be unrelated) 'socketTryAccept: Accept failed: Bad file descriptor'.")
    rep = _report(text, rules)
    d = [d for d in rep["diagnoses"] if d["id"] == "LD189"]
    assert d and d[0]["title"].endswith("a socket: Bad file descriptor"), d and d[0]["title"]


def test_a_warn_quoted_by_xlas_logged_status_is_the_quote_alone(rules):
    """The same status as XLA's own log line prints it (``<time>: E external/xla/.../nccl_api.cc:450] NCCL operation
    ... failed: ... Last NCCL warning(error) log entry (may be unrelated) '<WARN>'.``): the nested event is the WARN,
    so a rule's field ends where the WARN ends (the peer ``node2<49934>``, not ``node2<49934>'.``)."""
    text = ("2024-01-01 10:00:00.000000: E external/xla/xla/service/gpu/nccl_api.cc:450] NCCL operation "
            "ncclCommInitRankConfig failed: remote process exited or there was a network error. Last NCCL warning(error) "
            "log entry (may be unrelated) 'socketProgress: Connection closed by remote peer node2<49934>'.")
    rep = _report(text, rules)
    d = [d for d in rep["diagnoses"] if d["id"] == "LD110"]
    assert d and d[0]["title"].endswith("peer node2<49934>"), d and d[0]["title"]
    assert [e["text"] for e in d[0]["evidence"]] == ["socketProgress: Connection closed by remote peer node2<49934>"]


def test_a_message_after_its_context_on_the_exceptions_line_is_read_from_the_next_line(rules):
    """``RuntimeError: work = default_pg.broadcast([tensor], opts): `` / ``NCCL error in: ...``: the exception's
    line holds only the context (the code that raised) and its separator; the message it introduces is on the next
    line, so the exception is NCCL's error (XiaohangZhan/deocclusion#45), not "a Python exception"."""
    text = ("RuntimeError: work = default_pg.broadcast([tensor], opts): \n"
            "NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.7.8\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library (such as too many async ops, too many "
            "collectives at once, mixing streams in a group, etc).")
    evs = parse_sources([("rank0.log", text + "\n")]).events
    nccl = [e for e in evs if e.kind == "torch.nccl_error"]
    assert len(nccl) == 1 and nccl[0].line == 1 and nccl[0].fields.get("exc_type") == "RuntimeError"
    rep = _report(text, rules)
    assert rep["diagnoses"][0]["id"] == "LD476" and "LD710" not in _ids(rep)
    # in a traceback, the same
    tb = ("Traceback (most recent call last):\n  File \"/x/torch/distributed/distributed_c10d.py\", line 1039, in broadcast\n"
          "    work = default_pg.broadcast([tensor], opts)\n" + text)
    assert _report(tb, rules)["diagnoses"][0]["id"] == "LD476"
    # an exception whose message ends with a colon and no known message after it stays the exception
    other = _report("ValueError: expected one of:\n  alpha, beta", rules)
    assert other["diagnoses"] and other["diagnoses"][0]["id"] == "LD710"


@pytest.mark.parametrize("cut", [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/Pro",
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGr",
])
def test_the_last_error_is_read_when_the_carriers_first_line_was_cut(rules, cut):
    """A viewer's width cut the DistBackendError's first line inside its source path, so no wording of
    the carrier reads it and it is a Python exception; the NCCL WARN it quotes after `Last error:`
    (NCCLUtils' getNcclErrorDetailStr) is still a message of its own, and its rule leads."""
    prefix = "[rank0]: " if cut.startswith("[rank0]") else ""
    lines = [cut, "ncclInternalError: Internal check failed.", "Last error:", "Bootstrap : no socket interface found"]
    text = "\n".join([lines[0]] + [prefix + ln for ln in lines[1:]])
    assert _ids(_report(text, rules))[0] == "LD102"


@pytest.mark.parametrize("cut", ["GroupNCCL.cpp:1970, ", "cpp:1970, ", "h:268, "])
def test_nccl_error_in_whose_head_a_paste_cut_still_carries_its_last_error(rules, cut):
    """`NCCL error in: <file>:<line>, <string>, NCCL version X` cut inside the file's path (a selection started
    mid-line): the record was read as nothing, the `Last error:` it carries lost with it."""
    tail = _DIST.split("1970, ", 1)[1]
    r = parse_sources([("rank0.log", cut + tail + _WARN + "\n")])
    carrier = [e for e in r.events if e.kind.startswith("torch.nccl_error")]
    assert carrier and carrier[0].fields.get("cut") is True and carrier[0].fields.get("nccl_result") == "ncclSystemError"
    assert _ids(_report(cut + tail + _WARN, rules))[0] == _want(rules)


@pytest.mark.parametrize("line", [
    "config.cpp:12, bad value, NCCL version is not set",  # no version number
    "train.py:12, loss 0.5, epoch 3",  # no NCCL version at all
])
def test_a_located_line_without_nccls_version_is_not_a_cut_nccl_error(line):
    r = parse_sources([("rank0.log", line + "\n")])
    assert not any(e.kind.startswith("torch.nccl_error") for e in r.events)


@pytest.mark.parametrize("join", [" ", "  "])
def test_nccl_error_flattened_on_one_line_still_carries_its_last_error(rules, join):
    """The message's lines joined into one (an issue's paragraph, a title, a logger that folds lines): the result's
    interpretation ran to the end of the line and swallowed `Last error: <reason>`, so the reason was never read."""
    text = join.join(line.strip() for line in (_DIST + _WARN).split("\n"))
    r = parse_sources([("rank0.log", text + "\n")])
    carrier = [e for e in r.events if e.kind.startswith("torch.nccl_error")][0]
    assert carrier.fields["interpretation"].endswith("device error.") and carrier.fields["last_error"] == _WARN
    assert _ids(_report(text, rules))[0] == _want(rules)


def test_a_result_line_that_only_mentions_last_error_keeps_its_words():
    text = "ncclInternalError: Internal check failed. Check the last error: printed above"  # not the `Last error:` line
    r = parse_sources([("rank0.log", text + "\n")])
    assert [e.fields.get("interpretation") for e in r.events if e.kind.startswith("torch.nccl_error")] == [text]
