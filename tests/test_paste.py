"""Paste damage repaired per source (logdoc/paste/): learned prefixes, markdown residue, hard
wraps, character interleaving, unprefixed lines of a multi-process paste. The logs here are made up
in the shapes the field corpus shows; none is a field case."""
from __future__ import annotations

import io
import re

import pytest

from logdoc.pipeline import parse_sources, parse_text
from logdoc.paste import EVERY_LINE_MAX, deinterleave, is_interleaved, prepare, repair_lines
from logdoc.paste.markdown import unlinked
from logdoc.paste.screen import as_written
from logdoc.read.source import ReadStats, Source, read_lines

TORCH_NCCL = [
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    "Last error:",
    "Error while creating shared memory segment /dev/shm/nccl-AbCdEf (size 9637888)",
]


def _check_counts(res):
    s = res.stats
    assert s.lines_read == s.irrelevant + s.relevant and s.relevant == s.understood + s.not_understood


def _kinds(res):
    return [(e.kind, e.line) for e in res.events]


# ------------------------------------------------------------------------------------------------
# learned prefixes


@pytest.mark.parametrize("prefix", [
    "job-7b.0 [stderr] ",
    "[Trainer LOG] ",
    "ERROR 03-05 00:25:45 [core.py:1094] ",
    "10.1.2.3: ",
    "run_12.node3.77.log:[0003/0016] ",
    "trainer-worker-1 pytorch ",  # stern's pod and container: a word the prefix holds as it is
])
def test_a_repeated_prefix_no_envelope_knows_is_peeled(prefix):
    plain = parse_text("\n".join(TORCH_NCCL) + "\n")
    pasted = parse_text("\n".join(prefix + t for t in TORCH_NCCL) + "\n")
    _check_counts(pasted)
    assert _kinds(pasted) == _kinds(plain) and plain.events
    assert [e.fields for e in pasted.events] == [e.fields for e in plain.events]


def test_a_prefix_alone_on_its_line_is_that_streams_empty_line():
    """The prefix with nothing after it (its blank stripped with the line's end, as stern prints an empty line) ends
    the record before it, as an empty line does: it is not read as the last line's continuation."""
    tb = ["Traceback (most recent call last):", '  File "/usr/lib/python3.6/multiprocessing/reduction.py", line 51, in dumps',
          "    cls(buf, protocol).dump(obj)", "RuntimeError: unable to write to file </torch_74396_2983595444>"]
    lines = [("trainer-worker-0 pytorch " + t) for t in tb] + ["trainer-worker-0 pytorch"]
    out, paste = repair_lines(lines)
    assert out[-1] == "" and out[:-1] == tb
    res = parse_text("\n".join(lines) + "\n")
    exc = [e for e in res.events if e.kind == "torch.exception"]
    assert exc and exc[-1].fields.get("message", exc[-1].text).rstrip().endswith("</torch_74396_2983595444>")


def test_a_word_after_the_prefix_is_peeled_only_where_every_line_has_it():
    from logdoc.paste.prefix import _learn_prefix

    stern = [f"trainer-worker-{k} pytorch {t}" for k in range(2) for t in TORCH_NCCL]
    assert _learn_prefix(stern).match(stern[0]) == len("trainer-worker-0 pytorch ")
    # a word that changes from line to line is the message's
    varied = [f"node-1 {w} {t}" for w, t in zip(("alpha", "beta", "gamma", "delta"), TORCH_NCCL)]
    assert _learn_prefix(varied).match(varied[0]) == len("node-1 ")
    # nor a word with a colon after it (`bash: line 1:`)
    colon = [f"10.1.2.{k}: bash: line {k}: {t}" for k, t in enumerate(TORCH_NCCL)]
    assert _learn_prefix(colon).match(colon[0]) == len("10.1.2.0: ")


def test_a_learned_level_word_prefix_spares_nccl1_warn_header():
    # NCCL 1.x's INFO lines start with the level word, so `INFO ` is learned as a prefix; its WARN
    # lines (`WARN <file>:<line> <msg>`, src/core.h's WARN macro) keep theirs and are still read
    info = [f"INFO rank {k} using device {k} (0000:0{k + 6}:00.0)" for k in range(2)]
    info += ["INFO NCCL debug level set to INFO", "INFO Global device memory space is enabled"]
    res = parse_text("\n".join(info + ["WARN src/core.cu:225 Cuda failure 'out of memory'"]) + "\n")
    assert [(e.kind, e.fields.get("header"), e.fields.get("code_location")) for e in res.events] == \
        [("nccl.warn", "nccl1", "src/core.cu:225")]


def test_a_prefix_that_names_processes_keeps_their_records_apart():
    lines = []
    for pid in (101, 202):
        lines += [f"(Worker_{pid % 7} pid={pid}) WARN 01-17 00:55:01 [w.py:12] {t}" for t in TORCH_NCCL]
    res = parse_text("\n".join(lines) + "\n")
    _check_counts(res)
    errs = [e for e in res.events if e.fields.get("nccl_result") or e.kind.startswith("torch.nccl")]
    assert sorted(e.pid for e in errs) == [101, 202]
    assert all(e.time == "--01-17T00:55:01" for e in res.events)


def test_labels_without_pid_become_streams():
    lines = []
    for k in range(2):
        lines += [f"job-{k}.log [stderr] {t}" for t in TORCH_NCCL]
    got = repair_lines(lines)
    assert got is not None
    fixed, paste = got
    assert fixed[:4] == TORCH_NCCL
    hosts = {paste.ids[n].get("host") for n in range(1, 9)}
    assert len(hosts) == 2 and None not in hosts


@pytest.mark.parametrize("lines", [
    # NCCL's own headers, old and new: never peeled
    ["node1:11:12 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"] * 5,
    ["cx50:18926:19004 [1] INFO NET : Using interface eno1:192.168.12.50<0>"] * 5,
    ["WARN src/core.cu:225 failed to allocate 2101248 byte device buffer"] * 4,
    ["transport/nvls.cc:401 -> 1", "init.cc:1138 -> 1", "init.cc:1407 -> 1", "group.cc:75 -> 1 [Async thread]"],
    # c10 lines: what follows their header is a message
    ["[rank0]:[E1129 17:01:53.685814139 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE) ran for 600021 milliseconds before timing out."] * 4,
    # ordinary prints
    ["step 1 loss 0.5", "step 2 loss 0.4", "step 3 loss 0.3", "step 4 loss 0.2"],
    ["Pinning local process 5 to gpu 5", "Pinning local process 7 to gpu 7", "Pinning local process 4 to gpu 4"],
])
def test_lines_that_are_no_paste_damage_are_left_alone(lines):
    assert repair_lines(list(lines)) is None


def test_ray_similar_lines_note_is_peeled():
    line = ("[3 similar log lines] [W1008 23:40:22.836678340 socket.cpp:767] [c10d] The IPv6 network addresses of "
            "(job-x.internal, 50745) cannot be retrieved (gai error: -2 - Name or service not known).")
    fixed, _ = repair_lines([line])
    assert fixed[0].startswith("[W1008 23:40:22.836678340 socket.cpp:767] [c10d]")


def test_a_console_row_that_shows_its_message_twice_is_read_once():
    """AWS CloudWatch's log events table copied with rows opened (aws/aws-ofi-nccl#889): the message glued to the
    time, then again in its own column; one event per row, its NCCL header read."""
    ts = "  | 2025-05-16T16:39:51.208-07:00"
    boot = "ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.36.29.253<0>"
    warn = ("ip-10-36-29-253:79:79 [0] nccl_net_ofi_domain_get_ep:969 NCCL WARN NET/OFI Creating new endpoint for domain"
            " 0x7f9befa99380 failed: Invalid argument")
    res = parse_sources([("x.log", "\n".join([f"{ts} | ip-10-36-29-253:79:79 [0] NCCL INFO cudaDriverVersion 12040",
                                               f"{ts}{boot} | {boot}", f"{ts}{warn} | {warn}"]) + "\n")])
    _check_counts(res)
    assert [(e.line, e.kind, e.host) for e in res.events] == [
        (1, "nccl.info", "ip-10-36-29-253"), (2, "nccl.bootstrap", "ip-10-36-29-253"), (3, "nccl.warn", "ip-10-36-29-253")]
    assert res.events[2].text.endswith("failed: Invalid argument") and res.events[2].time.startswith("2025-05-16T16:39:51")
    # a row whose columns differ is the program's own bar, left alone
    got = repair_lines([f"{ts}a | b"] * 3)
    assert got is None or all(t.endswith("00a | b") for t in got[0])


def test_tmux_scroll_position_at_the_end_of_a_copys_first_line_is_dropped():
    """tmux's copy mode shows '[<lines up>/<history>]' at the right end of the pane's first row; a terminal
    selection of the screen copies it as the end of the first line, where it hid the NCCL version."""
    first = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system error,"
             " NCCL version 2.10.3")
    rest = "ncclSystemError: System call (socket, malloc, munmap, etc) failed."
    for marker in ("          [142/1234]", " [0/5321] (3 results)", "[0/88]"):
        res = parse_sources([("x.log", "```\n" + first + marker + "\n" + rest + "\n```\n")])
        ev = [e for e in res.events if e.kind == "torch.nccl_error"]
        assert ev and ev[0].fields.get("nccl_version") == "2.10.3", marker
    # the marker on another line, a short line, or a count that is no position stays
    assert repair_lines(["step 40 loss 0.31 [3/8]", "step 41 loss 0.30 [3/8]"]) is None
    assert repair_lines([rest, first + " [0/12]"]) is None
    assert repair_lines([first + " [13/12]", rest]) is None


# ------------------------------------------------------------------------------------------------
# markdown residue


def test_fences_details_and_quotes_are_stripped():
    lines = ["<details><summary>full log</summary>", "", "```shell"] + ["> " + t for t in TORCH_NCCL] + \
            ["```", "</details>"]
    fixed, _ = repair_lines(lines)
    assert len(fixed) == len(lines)
    assert [t for t in fixed if t] == TORCH_NCCL


def test_an_indented_code_block_is_dedented_but_frames_keep_their_indentation():
    block = ["    " + t for t in TORCH_NCCL]
    fixed, _ = repair_lines(block)
    assert fixed == TORCH_NCCL
    frames = ['  File "/w/train.py", line 1, in <module>', "    main()", '  File "/w/x.py", line 2, in main']
    assert repair_lines(frames) is None


# ------------------------------------------------------------------------------------------------
# hard wraps


def _hard_wrap(lines: list[str], width: int) -> list[str]:
    """The lines as a terminal cuts them at ``width`` columns."""
    return [m[i:i + width] for m in lines for i in range(0, len(m), width)]


def test_lines_cut_at_a_fixed_width_are_joined_and_the_line_count_kept():
    msgs = [
        "host-a:1:2 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer host-b<4242>",
        "host-a:1:2 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : socket progress error",
        "host-a:1:2 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-x "
        "(size 9637888), error: No space left on device (28)",
        "host-a:1:2 [0] transport/shm.cc:551 NCCL WARN Cuda failure 'out of memory' while setting up the transport",
    ]
    width = 72
    wrapped = _hard_wrap(msgs, width)
    fixed, _ = repair_lines(wrapped)
    assert len(fixed) == len(wrapped)
    assert [t for t in fixed if t] == msgs
    res = parse_text("\n".join(wrapped) + "\n")
    _check_counts(res)
    assert sum(e.kind == "nccl.warn" for e in res.events) == 4


def test_a_traceback_cut_at_a_fixed_width_stays_one_record():
    """The lines a wrap joins away are not read again: the empty line left in their place (the line
    count is kept) does not end the traceback, whose exception line still names the failure."""
    tb = [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce',
        "    work = group.allreduce([tensor], opts)",
        '  File "/opt/conda/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83, in wrapper',
        "    return func(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
        "of which 1.02 GiB is free.",
    ]
    width = 80
    wrapped = _hard_wrap(tb, width)
    fixed, paste = repair_lines(wrapped)
    assert [t for t in fixed if t] == tb
    assert paste.joined and all(fixed[n - 1] == "" for n in paste.joined)
    res = parse_text("\n".join(wrapped) + "\n")
    _check_counts(res)
    assert [(e.kind, e.line) for e in res.events] == [("cuda.oom", 1)]


def test_a_line_that_lost_the_prefix_continues_the_line_before():
    cut = TORCH_NCCL[0].index(" version")  # `..., NCCL` / `version 2.21.5`
    lines = ["job-1.0 [stderr] " + TORCH_NCCL[0][:cut], TORCH_NCCL[0][cut + 1:]] + \
            ["job-1.0 [stderr] " + t for t in TORCH_NCCL[1:]]
    fixed, _ = repair_lines(lines)
    assert fixed[0] == TORCH_NCCL[0] and fixed[1] == ""


def test_independent_lines_are_not_joined():
    lines = ["job-1.0 [stderr] Loading checkpoint shards", "loading weights took 3 s.",
             "job-1.0 [stderr] step 1", "job-1.0 [stderr] step 2", "second independent line", "third one"]
    got = repair_lines(lines)
    assert got is not None and got[0][1:] == lines[1:2] + ["step 1", "step 2"] + lines[4:]  # short lines: no wrap


# ------------------------------------------------------------------------------------------------
# interleaving


def _interleave(a: str, b: str) -> str:
    out = []
    for x, y in zip(a, b):
        out += [x, y]
    return "".join(out) + a[len(b):] + b[len(a):]


def test_two_copies_interleaved_character_by_character_are_taken_apart():
    a = "NCCL WARN Duplicate GPU detected : rank 3 and rank 2 both on CUDA device e2000"
    b = "NCCL WARN Duplicate GPU detected : rank 2 and rank 3 both on CUDA device e2000"
    mixed = _interleave(a, b)
    assert is_interleaved(mixed)
    assert deinterleave(mixed) == (a, b)
    t = "Traceback (most recent call last):"
    assert deinterleave(_interleave(t, t)) == (t, t)


@pytest.mark.parametrize("line", ["x" * 60, "Successfully connected to all peers", "aa bb cc dd ee",
                                  "=" * 40, "0000000000000000000000000000", "coffee committee bookkeeper"])
def test_ordinary_lines_are_not_interleaved(line):
    assert not is_interleaved(line)


def test_an_interleaved_paste_is_read_and_reported():
    text = "\n".join(_interleave(t, t) for t in TORCH_NCCL) + "\n"
    res = parse_text(text)
    plain = parse_text("\n".join(TORCH_NCCL) + "\n")
    assert _kinds(res) == _kinds(plain)
    assert any("interleaved character by character" in w for w in res.stats.warnings)


# ------------------------------------------------------------------------------------------------
# unprefixed lines of a multi-process paste


def test_a_bare_nccl_banner_takes_the_process_around_it():
    lines = ["nodeA:41:41 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
             "nodeB:52:52 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>",
             "nodeA:41:41 [0] NCCL INFO cudaDriverVersion 12020",
             "NCCL version 2.21.5+cuda12.1",
             "nodeA:41:60 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
             "nodeB:52:52 [0] NCCL INFO cudaDriverVersion 12020"]
    res = parse_text("\n".join(lines) + "\n")
    banner = [e for e in res.events if e.line == 4]
    assert banner and banner[0].host == "nodeA" and banner[0].pid == 41


def test_a_bare_line_between_two_processes_is_not_assigned():
    lines = ["nodeA:41:41 [0] NCCL INFO cudaDriverVersion 12020", "NCCL version 2.21.5+cuda12.1",
             "nodeB:52:52 [0] NCCL INFO cudaDriverVersion 12020"]
    assert repair_lines(lines) is None


# ------------------------------------------------------------------------------------------------
# sources


def test_standard_input_is_repaired_and_files_read_the_same(tmp_path):
    text = "".join("job-7b.0 [stderr] " + t + "\n" for t in TORCH_NCCL)
    p = tmp_path / "log.txt"
    p.write_text(text)
    a = parse_sources([Source("<stdin>", stream=io.BytesIO(text.encode()))])
    b = parse_sources([Source("<stdin>", path=str(p))])
    c = parse_text(text, "<stdin>")
    assert [e.to_dict() for e in a.events] == [e.to_dict() for e in b.events] == [e.to_dict() for e in c.events]
    assert a.events and a.stats.to_dict() == b.stats.to_dict()


def test_an_undamaged_source_is_read_as_it_is(tmp_path):
    p = tmp_path / "log.txt"
    p.write_text("node1:11:12 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n" * 3)
    src = Source("log.txt", path=str(p))
    got, paste = prepare(src)
    assert got is src and not paste.ids and not paste.notes
    assert paste.every_line  # a short source: every line is read (logdoc.paste.EVERY_LINE_MAX)
    p.write_text("node1:11:12 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n" * 1200)
    src = Source("log.txt", path=str(p))
    assert prepare(src) == (src, None)


def test_a_long_standard_input_is_handed_back_whole(monkeypatch):
    import logdoc.paste as paste

    monkeypatch.setattr(paste, "REPAIR_MAX", 100)
    data = b"".join(b"line %d of ordinary output\n" % i for i in range(50))
    src, got = prepare(Source("<stdin>", stream=io.BytesIO(data)))
    assert got is None
    assert [t for _, t in read_lines(src, ReadStats())] == data.decode().splitlines()


def test_two_tracebacks_interleaved_with_their_line_ends_read_as_one_record():
    a = "\n".join(['Traceback (most recent call last):', '  File "train.py", line 10, in <module>',
                   '    dist.init_process_group("nccl")'] + TORCH_NCCL) + "\n"
    b = a.replace("nccl-AbCdEf", "nccl-XyZwVu")
    mixed = "".join(x + y for x, y in zip(a, b))
    res = parse_text(mixed)
    _check_counts(res)
    plain = parse_text(a)
    assert [e.kind for e in res.events] == [e.kind for e in plain.events] and plain.events
    assert res.events[0].fields.get("last_error") == plain.events[0].fields.get("last_error")
    assert any("differ between the two" in w for w in res.stats.warnings)


def test_masked_pids_name_no_process_but_never_crash():
    lines = ["host-01:XXXXXX:XXXXXX [0] NCCL INFO cudaDriverVersion 12020", "NCCL version 2.21.5+cuda12.1",
             "host-01:XXXXXX:XXXXXX [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"]
    got = repair_lines(lines)
    assert got is None or got[1].ids.get(2, {}).get("pid") is None
    res = parse_text("\n".join(lines) + "\n")
    _check_counts(res)


def test_the_short_files_of_a_large_input_are_read_by_keyword(tmp_path, monkeypatch):
    # every line of a short source is read (a paste); the short files of a large input (a job folder
    # of many rank logs) are logs as written and keep the keyword pass: the same events, less time
    import logdoc.paste as paste
    from logdoc.pipeline import parse_sources

    bare = "No interface found in the same subnet as remote address\n"  # no prefilter keyword
    for i in range(3):
        (tmp_path / f"rank{i}.log").write_text("step 1 loss 2.0\n" * 20 + (bare if i == 1 else ""))
    files = [Source(str(p), path=str(p)) for p in sorted(tmp_path.glob("*.log"))]
    assert [e.line for e in parse_sources(files).events] == [21]
    seen = []
    real = paste._prepare_read
    monkeypatch.setattr(paste, "_prepare_read", lambda s, a, every: seen.append(every) or real(s, a, every))
    monkeypatch.setattr(paste, "EVERY_LINE_INPUT_MAX", 100)   # the three files are more than this
    assert parse_sources(files).events == []
    assert seen == [False, False, False]
    assert len(parse_sources(files[1:2]).events) == 1         # one file alone is read every line


# ------------------------------------------------------------------------------------------------
# one message cut at the source's width: too few cut lines for a width of their own

_STORE = "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined."
_IB = ("node1:1234:1300 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> "
       "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0")


def _cut_at(text: str, at: int) -> list[str]:
    return [text[:at].rstrip(" "), text[at:].lstrip(" ")]


def _templates(lines: list[str]) -> list[str]:
    return [e.template for e in parse_text("\n".join(lines) + "\n").events]


@pytest.mark.parametrize("word", ["joined", "clients", "waiting"])
def test_a_message_cut_inside_a_word_is_joined(word):
    at = _STORE.index(word) + 3   # `... joi` / `ned.`
    lines = ["[2026-12-02 09:00:00] starting", *_cut_at(_STORE, at)]
    fixed, _ = repair_lines(lines)
    assert fixed == [lines[0], _STORE, ""]
    assert "torch:TCPStore:timed-out-after-seconds-waiting-for-clients" in _templates(lines)


def test_a_message_cut_on_a_blank_the_paste_dropped_is_joined_with_it():
    at = _STORE.index(" clients joined") + 1   # `... 1/2` / `clients joined.`: the line's end lost its blank
    fixed, _ = repair_lines(_cut_at(_STORE, at))
    assert fixed == [_STORE, ""]


def test_an_nccl_warn_cut_inside_a_word_reads_its_whole_format():
    at = _IB.index("opcode") + 3
    lines = _cut_at(_IB, at)
    assert repair_lines(lines)[0] == [_IB, ""]
    warns = [e for e in parse_text("\n".join(lines) + "\n").events if e.kind == "nccl.warn"]
    assert len(warns) == 1 and "vendor err 129" in warns[0].fields["message"]


_OLD_SOCKET = ("e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : "
               "Address family not supported by protocol")  # NCCL 2.2's header: older than the catalog


@pytest.mark.parametrize("at", [_OLD_SOCKET.index("Address") + 2, _OLD_SOCKET.index("not supported")])
def test_a_line_cut_inside_a_strerror_text_is_joined_without_a_catalog_format(at):
    # no catalog format reads either piece, but the errno text runs over the cut (inside a word, or on
    # a blank the paste dropped)
    lines = [_OLD_SOCKET[:at].rstrip(" "), _OLD_SOCKET[at:].lstrip(" ")]
    assert repair_lines(lines)[0] == [_OLD_SOCKET, ""]
    # the same pieces with a line between them, or a second piece that starts no listed text, stay apart
    assert repair_lines([lines[0], "next step started", lines[1]]) is None
    assert repair_lines([lines[0], "family doctor notes"]) is None


def test_a_line_cut_inside_its_formats_last_field_is_joined_without_a_blank():
    # marian-dev#998's WARN wrapped at 80 columns inside the path, the format's last field (`Could not find real
    # path of %s`): no reading gains by the rest, the path does (LD472 reads the bus id after `/../../`)
    warn = "graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/fffffff/../../fffffff:ff:f"
    lines = [warn[:80], warn[80:]]
    assert repair_lines(lines)[0] == [warn, ""]
    events = [e for e in parse_text("\n".join(lines) + "\n").events if e.kind == "nccl.warn"]
    assert len(events) == 1 and events[0].fields["message"].endswith("/../../fffffff:ff:f")
    # a rest with a blank at the cut, one that reads as a message of its own, or one as long as the width stays apart
    assert repair_lines([warn[:80], " and went on"]) is None
    assert repair_lines([warn[:80], "Traceback (most recent call last):"]) is None
    # the next line of a log after its widest line, a line of words, is no rest of the last field (a pointer here)
    info = ("node1:52106:52106 [1] NCCL INFO AllReduce: opCount 2b sendbuff 0x7f0c00000000 recvbuff 0x7f0c00000000 "
            "count 4194304 datatype 9 op 0 root 0 comm 0x55c7f4a13b50 [nranks=4] stream 0x55c7f4a14d30")
    assert repair_lines([info, "slurmstepd: error: *** STEP 90317.0 ON node1 CANCELLED AT 2026-11-30T23:18:21 ***"]) is None


def test_a_plugin_warn_of_no_catalog_cut_inside_a_word_is_joined():
    # aws-ofi-nccl's WARN (no NCCL catalog has its formats) wrapped inside `for`: no reading can gain by the rest, the
    # letters across the cut read as one word of the catalogs' vocabulary; LD2002 then reads the RC on the rest
    warn = ("ip-10-0-8-9:4410:4470 [0] register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) "
            "for device 0. RC: -22, Error: Invalid argument")
    at = warn.index("or device")
    lines = [warn[:at], warn[at:], "ip-10-0-8-9:4410:4470 [0] NCCL INFO transport/net.cc:300 -> 2"]
    assert repair_lines(lines)[0] == [warn, "", lines[2]]
    warns = [e for e in parse_text("\n".join(lines) + "\n").events if e.kind == "nccl.warn"]
    assert len(warns) == 1 and warns[0].fields["message"].endswith("RC: -22, Error: Invalid argument")
    # a next line whose letters make no word with the cut's (two lines of a log), or a catalogued WARN's, stay apart
    assert repair_lines([warn[:at], "terminate called after throwing an instance of 'c10::DistBackendError'"]) is None
    assert repair_lines([warn[:at - 1], "terminate called after throwing an instance of 'c10::DistBackendError'"]) is None


def test_a_line_cut_before_a_mark_is_joined_without_a_blank():
    # the cut fell inside an address (`peer 10.0` / `.0.2<44321> ...`) and before a source line's colon
    trunc = ("node1:1234:1290 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : peer 10.0.0.2<44321> "
             "message truncated : receiving 1048576 bytes instead of 65536")
    lines = [trunc[:trunc.index(".0.2<")], trunc[trunc.index(".0.2<"):]]
    assert repair_lines(lines)[0] == [trunc, ""]
    exc = ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
           "unhandled system error, NCCL version 2.14.3")
    lines = [exc[:exc.index(":1269")], exc[exc.index(":1269"):]]
    assert repair_lines(lines)[0] == [exc, ""]
    assert "torch.nccl_error.in" in _templates(lines)


_RAY_SHM = ("[2026-03-25 05:44:29,435 W 39 39] (raylet) store_runner.cc:83: System memory request exceeds memory "
            "available in /dev/shm. The request is for 10200547328 bytes, and the amount available is 9663676416 bytes.",
            "You may be able to free up space by deleting files in /dev/shm. If you are inside a Docker container, you "
            "may need to pass an argument with the flag '--shm-size' to 'docker run'.")


def _hard_wrap(lines, width):
    out = []
    for line in lines:
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return out


def test_two_lines_wrapped_at_one_wide_width_are_joined():
    wrapped = _hard_wrap(_RAY_SHM, 120)  # `... in /dev/sh` / `m. The request ...`: two cuts only
    assert len(wrapped) == 4 and repair_lines(wrapped)[0] == [_RAY_SHM[0], "", _RAY_SHM[1], ""]
    # two lines of one length whose next lines start lines of their own are no wrap
    a, b = "x" * 60 + " the loader read shard 1 of 8 from the store", "y" * 60 + " the loader read shard 2 of 8 from the store"
    assert len(a) == len(b) and repair_lines([a, "Epoch 1 done", b, "# NCCL Tests compiled"]) is None


def test_real_lines_are_never_joined_as_a_cut():
    # the first line reads whole on its own; a line shorter than the source's width is no cut; a line
    # ending inside a word whose join reads no message stays as it is
    assert repair_lines([_STORE, "next step started"]) is None
    short = _cut_at(_STORE, _STORE.index("joined") + 3)
    assert repair_lines([short[0], short[1], "x" * (len(short[0]) + 5)]) is None
    lines = ["INFO 2026-12-02 the loader read shard 1 of 8 from the object store in 12 secon", "ds and went on"]
    assert repair_lines(lines) is None


def test_an_exception_name_cut_inside_it_is_joined():
    # `... NCCL version 2.10.3 ncc` / `lSystemError: ...`: the rest reads like an exception line of its own,
    # but the letters at either side are one name of the catalogs and apart no two
    line = ("NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system error, "
            "NCCL version 2.10.3 ncclSystemError: System call (socket, malloc, munmap, etc) failed.")
    at = line.index("lSystemError")
    assert repair_lines([line[:at], line[at:]])[0] == [line, ""]
    # a real exception line after a line that ends a word stays a line of its own
    assert repair_lines(["the loader gave up after waiting for the object store", "RuntimeError: boom"]) is None


_HCA = ["node1:{pid}:{pid} [{dev}] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA {hca} 'mlx5_{hca}'".format(
    pid=1000 + dev, dev=dev, hca=hca) for dev, hca in ((0, 0), (0, 1), (1, 0), (1, 1))]


def test_every_ranks_copy_cut_at_one_column_is_joined():
    # each rank prints the same message, so the rests repeat (`0 'mlx5_0'` twice); the cut fell beside a
    # blank that the first piece kept, which no line printed as it is ends with
    width = _HCA[0].index(" 0 'mlx5_0'") + 1
    wrapped = _hard_wrap(_HCA, width)
    assert len(wrapped) == 8
    assert repair_lines(wrapped)[0] == [_HCA[0], "", _HCA[1], "", _HCA[2], "", _HCA[3], ""]
    # the same rest after lines of one width that end a word is a line of its own, printed again
    a, b = "x" * 60 + " the loader read shard 1 of 8 from the store", "y" * 60 + " the loader read shard 2 of 8 from the store"
    c = "z" * 60 + " the loader read shard 3 of 8 from the store"
    assert repair_lines([a, "loaded ok", b, "loaded ok", c, "loaded ok"]) is None


def test_markdown_bold_around_a_wrapped_message_is_stripped():
    msg = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
           "This error indicates that your module has parameters that were not used in producing loss.")
    wrapped = _hard_wrap(["**" + msg + "**"], 80)
    fixed, _ = repair_lines(wrapped)
    assert "".join(fixed) == msg
    assert [e.kind for e in parse_text("\n".join(wrapped) + "\n").events] == ["torch.exception"]
    # markers of two spans, or a blank line between the ends, are left alone
    assert repair_lines(["**one** line", "and **another**"]) is None
    assert repair_lines(["**RuntimeError: a", "", "b**"]) is None


def test_a_progress_bar_cut_inside_its_padding_is_joined():
    bar = (" 35%|" + "\u2588" * 40 + " " * 73 + "| 73811210851/208140108456 [30:01<57:14, 39115047.81MB/s]")
    head = "Init /data/users/loader/model_data/0711-0814/NegativeTrain loaded in 12.5 seconds, next shard"
    lines = _hard_wrap([head, bar], 80)
    assert len(lines) == 5 and lines[3].startswith("  ")  # the rest starts inside the padding
    fixed, _ = repair_lines(lines)
    assert fixed == [head, "", bar, "", ""]
    # an indented line after a line that ends a word, or a frame after a blank, is no rest
    assert repair_lines(["x" * 79 + "a", "    indented code line", "y" * 79 + "b", "    more code"]) is None


def test_bold_whose_close_a_cut_took_is_stripped_before_an_exception_line():
    line = ("**RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
            "This error indicat\u2026 [truncated]")
    fixed, _ = repair_lines([line])
    assert fixed == [line[2:]]
    assert [e.kind for e in parse_text(line + "\n").events] == ["torch.exception"]
    # a span that closes on a later line of its paragraph is the wrapped bold's (closed there), and a marker
    # before anything but an exception line, or one the line closes again, is left alone
    assert repair_lines(["**RuntimeError: a b", "c d**"])[0] == ["RuntimeError: a b", "c d"]
    assert repair_lines(["**Note: the close was cut"]) is None
    assert repair_lines(["see **ValueError: x** and **y"]) is None


def test_a_line_a_progress_bar_stood_in_front_of_is_read_as_printed():
    # tqdm redraws its bar after a carriage return and ends no line: what another writer prints next lands
    # after the bar's last update, and the reader keeps what follows the last carriage return
    bar = " 45%|\u2588\u2588\u2588\u2588\u258c     | 45/100 [00:12<00:15,  3.60it/s]"
    nccl = "gpu-node-1:1234:5678 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<44444> with error 12, opcode 0, len 0, vendor err 129"
    lines = ["[W socket.cpp:601] [c10d] The client socket has failed to connect.", bar + nccl]
    fixed, paste = repair_lines(lines)
    assert fixed[1] == nccl and paste.pieces[2] == [bar, nccl]
    kinds = [(e.kind, e.line) for e in parse_text(bar + "\r" + bar + nccl + "\n").events]
    assert ("app.progress", 1) in kinds and any(k.startswith("nccl.") and n == 1 for k, n in kinds), kinds
    tb = [bar + _TB[0]] + _TB[1:]
    got = [(e.kind, e.line, e.end_line) for e in parse_text("\n".join(tb) + "\n").events]
    assert ("torch.exception", 1, 7) in got, got  # one traceback, from the line the bar stood in front of
    # a bar alone, or with only its padding after it, is no glued line
    assert repair_lines(["loading", bar, bar + "   "]) is None
    # a long source (a log as written, more than EVERY_LINE_MAX lines) keeps its lines and its fast path
    assert repair_lines(["step loss"] * EVERY_LINE_MAX + [bar + nccl]) is None
    assert repair_lines(["step loss"] * (EVERY_LINE_MAX - 1) + [bar + nccl]) is not None


_TB = ["Traceback (most recent call last):",
       '  File "train.py", line 11, in <module>',
       '    torch.distributed.init_process_group(backend="nccl", world_size=4)',
       '  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 423, in init_process_group',
       "    store, rank, world_size = next(rendezvous_iterator)",
       "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
       "RuntimeError: Distributed package doesn't have NCCL built in"]


def test_a_traceback_whose_indentation_the_paste_dropped_is_indented_again():
    flush = [t.lstrip() for t in _TB]
    fixed, _ = repair_lines(flush)
    assert fixed == _TB
    read = [(e.kind, e.template, e.line, e.end_line) for e in parse_text("\n".join(flush) + "\n").events]
    assert read == [(e.kind, e.template, e.line, e.end_line) for e in parse_text("\n".join(_TB) + "\n").events]
    assert read[0][2:] == (1, 7)  # one record, as printed
    # frame-like lines without a traceback's head before them are left as they are
    assert repair_lines(flush[1:3]) is None


def test_a_dedented_traceback_pasted_without_its_head_is_indented_when_it_ends_in_the_exception():
    flush = [t.lstrip() for t in _TB[3:]]  # the paste begins at a frame; the exception's line ends it
    fixed, _ = repair_lines(["the rest of a line above"] + flush)
    assert fixed == ["the rest of a line above"] + _TB[3:]
    events = parse_text("\n".join(flush) + "\n").events
    assert [(e.line, e.end_line) for e in events] == [(1, 4)]  # one record
    # frames that end in anything but an exception's line may be no traceback: left as they are
    assert repair_lines(flush[:3] + ["done"]) is None


def test_typeset_quotes_of_a_page_read_as_the_straight_ones_printed():
    typeset = [t.replace('"', "\u201c", 1).replace('"', "\u201d", 1) for t in _TB]
    typeset[-1] = "RuntimeError: Distributed package doesn\u2019t have NCCL built in"
    fixed, _ = repair_lines(typeset)
    assert fixed == _TB
    got = parse_text("\n".join(typeset) + "\n").events
    assert [(e.kind, e.template, e.line, e.end_line) for e in got] == \
        [(e.kind, e.template, e.line, e.end_line) for e in parse_text("\n".join(_TB) + "\n").events]


# ------------------------------------------------------------------------------------------------
# one rank's paste: what the other members did is not read

_INIT = "node1:100:100 [0] NCCL INFO comm 0x5555 rank 0 nranks {n} cudaDev 0 nvmlDev 0 busId 1000 commId 0xabc - Init COMPLETE"
_WATCHDOG = ("[rank0]:[E1202 09:10:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
             "600023 milliseconds before timing out.")


def _hung(files: list[tuple[str, str]]):
    from logdoc.api import build_report
    from logdoc.kb import load_rules

    rep = build_report(parse_sources(files), load_rules())
    return [d for d in rep["diagnoses"] if d["id"] == "LD503"]


def test_one_ranks_paste_says_the_others_were_not_read():
    got = _hung([("paste.txt", _INIT.format(n=2) + "\n" + _WATCHDOG + "\n")])
    assert len(got) == 1 and got[0]["ranks"] == [1]
    assert "only rank 0's output was given" in got[0]["explanation"]
    # with the other rank's log given (it printed no error), nothing is said of output not given
    rank1 = "node2:200:200 [0] NCCL INFO comm 0x6666 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0xabc - Init COMPLETE\n"
    got = _hung([("rank0.log", _INIT.format(n=2) + "\n" + _WATCHDOG + "\n"), ("rank1.log", rank1)])
    assert got and all("output was given" not in d["explanation"] for d in got)


# ------------------------------------------------------------------------------------------------
# a prefix no envelope knows, on a paste too short to learn it from


@pytest.mark.parametrize("prefix", ["opt-1_3b.0 [stderr] ", "job-7 [rank3] ", "[12:01:02] node-3 "])
@pytest.mark.parametrize("message, kind", [
    ("Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)", "nccl.warn"),
    ("Failed, NCCL error a.cpp:106 'invalid usage'", None),
])
def test_a_one_line_paste_under_an_unknown_prefix_is_read(prefix, message, kind):
    bare = parse_text(message + "\n")
    assert bare.events, "the message alone is read"
    res = parse_text(prefix + message + "\n")
    _check_counts(res)
    assert [(e.kind, e.template) for e in res.events] == [(e.kind, e.template) for e in bare.events]
    if kind:
        assert res.events[0].kind == kind


# (a prefix's tokens, and one that ends in a plain word: stern's `<pod> <container> message`)
@pytest.mark.parametrize("prefix", ["[01:02:03] ", "opt-1_3b.0 [stderr] ", "trainer-worker-0 pytorch ", "[node3] python3 "])
@pytest.mark.parametrize("message", [
    # a message that starts with what a prefix may hold: a bracketed source location, a level word
    "[/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 workers joined.",
    "ncclSocketInit: connecting to address with family 0 is neither AF_INET(2) nor AF_INET6(10)",
    "terminate called after throwing an instance of 'c10::DistBackendError'",
])
def test_a_one_line_paste_under_a_prefix_is_read_as_its_message(prefix, message):
    bare = parse_text(message + "\n")
    assert bare.events, "the message alone is read"
    res = parse_text(prefix + message + "\n")
    _check_counts(res)
    assert [(e.kind, e.template, e.fields) for e in res.events] == [(e.kind, e.template, e.fields) for e in bare.events]


def test_a_plain_word_is_no_prefix_alone_nor_after_prose():
    from logdoc.residue import leading_prefixes

    line = "trainer-worker-0 pytorch RuntimeError: boom"
    assert leading_prefixes(line) == [len("trainer-worker-0 pytorch "), len("trainer-worker-0 ")]
    assert leading_prefixes("pytorch RuntimeError: boom") == []  # no prefix token before the word
    assert leading_prefixes("then pytorch RuntimeError: boom") == []
    assert leading_prefixes("worker-0 Pytorch RuntimeError: boom") == [len("worker-0 ")]  # not lower case
    assert leading_prefixes("worker-0 error: RuntimeError: boom") == [len("worker-0 ")]  # a colon after it


@pytest.mark.parametrize("prefix", ["opt-1_3b.0 [stderr] ", "trainer-worker-0 pytorch ", "[01:02:03] "])
def test_a_one_line_record_under_an_unknown_prefix_over_a_known_envelope_is_read(prefix):
    # docker compose's `<service>-<n>  | ` under a prefix no envelope knows, on a one-line paste (too few lines to learn
    # the prefix from): the message after both, read with what the compose envelope says (the service)
    line = "trainer-1  | ERROR mlx5_0: ibv_create_cq() failed: Cannot allocate memory."
    alone = parse_text(line + "\n").events
    events = parse_text(prefix + line + "\n" + prefix + "trainer-1  | \n").events
    assert [(e.kind, e.template, e.fields) for e in events] == [(e.kind, e.template, e.fields) for e in alone]
    assert events[0].process == alone[0].process == "trainer-1"


@pytest.mark.parametrize("prefix", ["opt-1_3b.0 [stderr] ", "opt-1_3b.0 [stderr] trainer-1  | ", "trainer-worker-0 pytorch "])
def test_the_prefix_alone_after_an_exception_line_is_no_rest_of_its_message(prefix):
    # the stream's empty line under the prefix the exception line's envelope peeled (its blank stripped with the
    # line's end) ends the message: LD319 reads `... in read-write mode` at the message's end
    line = "RuntimeError: unable to open shared memory object XXX in read-write mode"
    events = parse_text(prefix + line + "\n" + prefix.rstrip() + "\n").events
    assert [e.fields.get("exc_message") for e in events] == [line.split(": ", 1)[1]]
    # a hard wrap's rest (no prefix of that length) is still joined
    wrapped = parse_text("opt-1_3b.0 [stderr] " + line[:-5] + "\nmode (24)\n").events
    assert wrapped[0].fields["exc_message"].endswith("read-write mode (24)")


@pytest.mark.parametrize("text", [
    "step 38 loss 1.2 error rate 0.1",           # prose first: no prefix
    "a.cpp:106 something failed",                 # a source location is part of a message
    "12 Failed attempts to reach the mirror",     # a number then prose: not read as a message either
])
def test_leading_prefix_takes_only_what_reads_as_a_prefix(text):
    from logdoc.residue import leading_prefix

    cut = leading_prefix(text)
    assert cut == 0 or not parse_text(text[cut:] + "\n").events


@pytest.mark.parametrize("line, width", [
    # an NCCL WARN with its header, cut twice inside words: the middle piece alone reads nothing
    ("gpu-a:12:34 [1] transport/net_ib.cc:1004 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<51234> "
     "with error 12, opcode 1, len 0, vendor err 129", 80),
    # an NCCL WARN pasted without its header, cut once
    ("ncclSocketInit: connecting to address with family 0 is neither AF_INET(2) nor AF_INET6(10)", 80),
    # a PyTorch message whose cut took the words that name the NCCL result
    ("RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:911, invalid usage", 98),
])
def test_a_short_paste_cut_inside_words_is_read_whole(line, width):
    wrapped = _hard_wrap([line], width)
    assert len(wrapped) >= 2
    whole = parse_text(line + "\n")
    res = parse_text("\n".join(wrapped) + "\n")
    _check_counts(res)
    assert [(e.kind, e.template, e.line) for e in res.events] == [(e.kind, e.template, 1) for e in whole.events]
    assert res.events[0].fields == whole.events[0].fields


def test_html_entities_of_a_scraped_page_read_as_printed():
    lines = ["Traceback (most recent call last):", "  File &quot;train.py&quot;, line 3, in &lt;module&gt;",
             "    dist.init_process_group(&#39;nccl&#39;)",
             "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
             "unhandled system error, NCCL version 2.18.1"]
    fixed, _ = repair_lines(lines)
    assert fixed[1] == '  File "train.py", line 3, in <module>' and fixed[2] == "    dist.init_process_group('nccl')"
    assert repair_lines(["x&y is not an entity", "a &amp b"]) is None  # no entity: nothing to repair


@pytest.mark.parametrize("gutter", ["{n:4d} | ", "{n:6d}\t", "{n:>3}| "])
def test_a_viewers_line_numbers_are_removed(gutter):
    body = ["[W socket.cpp:601] [c10d] The IPv6 network addresses of (user, 53821) cannot be retrieved "
            "(gai error: -3 - Temporary failure in name resolution).", "", "RuntimeError: boom"]
    lines = [(gutter.format(n=n) + t) if t or "|" in gutter else t for n, t in enumerate(body, 40)]
    fixed, _ = repair_lines(lines)
    assert [t.strip() for t in fixed] == [t.strip() for t in body]
    one, _ = repair_lines([gutter.format(n=7) + body[0]])
    assert one == [body[0]]


def test_a_numbered_line_a_wrap_cut_is_joined_to_its_rest_rows():
    # a viewer's numbers, then a hard wrap at 80 columns: the rows after a full one carry no number, and the
    # numbers count lines, not rows (easyr1#228's line; awsome-distributed-training#192's rest that reads like a
    # line of its own, `pts) 10: torch...`)
    one = ["   1 | (Runner pid=868697) Error while creating shared memory segment /dev/shm/n",
           "ccl-UmqSM9 (size 7340384)"]
    fixed, paste = repair_lines(one)
    assert fixed == ["(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)", ""]
    assert paste.joined == {2}
    body = ['File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1906, in broadcast',
            "    work = default_pg.broadcast([tensor], opts)", "",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5"]
    rows = [t[k:k + 80] for n, line in enumerate(body, 17) for t in [f"{n:4d} | {line}" if line else ""]
            for k in range(0, max(1, len(t)), 80)]
    assert len(rows) > len(body) and not rows[1][:1].isspace()
    fixed, _ = repair_lines(rows)
    assert [t for t in fixed if t] == [t for t in body if t]


def test_line_numbers_in_brackets_are_a_gutter_not_mpich_ranks():
    # LlamaFactory#8261's paste: each line under its line number in brackets, read before as MPICH's `-prepend-rank`
    # (`[1745]` was rank 1745, and LD503 named ranks 1745...1755 as hung)
    lines = ["[1754]   1%|          | 19/1752 [00:54<1:22:59,  2.87s/it]",
             "[1755]   1%|          | 20/1752 [00:57<1:22:40,  2.86s/it]",
             "[1756]                                                    ",
             "[1757] {'loss': 0.0, 'grad_norm': 1.4142135381698608, 'learning_rate': 4.3181818181818185e-06, 'epoch': 0.01}",
             "[1758] ",
             "[1763]   1%|\u258f         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 "
             "ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6, "
             "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600007 milliseconds before timing out."]
    events = parse_text("\n".join(lines[:5]) + "\n").events
    assert events and all(e.rank is None for e in events)
    # (the numbers jump where the paste skipped lines)
    assert [(e.kind, e.rank) for e in parse_text("\n".join(lines) + "\n").events if e.rank is not None] == [
        ("torch.watchdog_timeout", 5)]
    # MPICH's ranks repeat and start at 0: they stay ranks
    from logdoc.paste import _strip_gutter

    assert not _strip_gutter(["[0] step 1 loss 2.3", "[1] step 1 loss 2.4", "[0] step 2 loss 2.1", "[1] step 2 loss 2.2"])
    assert not _strip_gutter(["[0] NCCL INFO a", "[1] NCCL INFO b", "[2] NCCL INFO c", "[3] NCCL INFO d"])
    assert _strip_gutter(["[41] a", "[42] b", "[43] c"])


def test_numbers_that_do_not_count_the_lines_up_are_no_gutter():
    from logdoc.paste import _strip_gutter

    assert not _strip_gutter(["3 | worker says hi", "1 | worker says hi", "7 | worker says hi", "2 | x"])
    assert not _strip_gutter(["0: RuntimeError: a", "1: RuntimeError: b", "2: RuntimeError: c"])  # srun's task ids
    assert _strip_gutter(["3 | a", "4 | b", "5 | c"])


def test_pytest_failure_lines_read_without_their_marker():
    lines = ["    def test_allreduce():", ">       dist.all_reduce(t)", "",
             "E       torch.distributed.DistBackendError: NCCL error in: x.cpp:1970, unhandled cuda error",
             "E       Last error:", "E       Cuda failure 'out of memory'", "E         indented detail"]
    fixed, _ = repair_lines(lines)
    assert fixed[3].startswith("torch.distributed.DistBackendError") and fixed[5] == "Cuda failure 'out of memory'"
    assert fixed[6] == "  indented detail" and fixed[1] == lines[1]
    assert repair_lines(["E1129 10:00:00.000 123 x.cc:1] glog line", "E1129 10:00:01.000 123 x.cc:2] again"]) is None


def test_a_path_wrapped_before_its_next_part_is_joined():
    # a page cut the line at its width between two parts of a path (`.../tcp` / `/device.cc:276] ...`):
    # the join reads Gloo's located check whole, so the two pieces are one line again
    from logdoc.pipeline import parse_sources

    text = ("[rank0]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp\n"
            "/device.cc:276] ss1.ss_family == ss2.ss_family. 2 vs 10\n"
            "[rank1]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp\n"
            "/device.cc:276] ss1.ss_family == ss2.ss_family. 10 vs 2\n")
    events = parse_sources([("x.log", text)]).events
    assert [e.fields.get("code_location") for e in events] == ["gloo/transport/tcp/device.cc:276"] * 2
    assert all(e.template and e.template.startswith("gloo:transport/tcp/device.cc:") for e in events)


def test_an_exception_named_alone_on_its_line_is_no_wraps_rest():
    # an exception raised without a message prints its dotted name alone: a line of its own, never the
    # rest of the (unknown-prefixed) logger line before it
    lines = ["[INFO] job7 2020-06-10 10:00:00.000 etcd_rendezvous: Rendezvous timeout occured in EtcdRendezvousHandler",
             "[INFO] job7 2020-08-04 23:33:44.430 api: [default] Starting worker group",
             "[ERROR] job7 2020-08-04 23:33:44.430 local_elastic_agent: [default] Worker group failed",
             "torchelastic.rendezvous.api.RendezvousTimeoutException"]
    got = repair_lines(lines)
    assert got is not None and not got[1].joined
    assert got[0][3] == lines[3] and got[0][2].endswith("Worker group failed")


@pytest.mark.parametrize("line, message", [
    ('raise RuntimeError("Distributed package doesn\'t have NCCL " "built in")',
     "Distributed package doesn't have NCCL built in"),
    ("    raise RuntimeError('Distributed package ' \"doesn't have NCCL \"'built in')",
     "Distributed package doesn't have NCCL built in"),
    ('raise RuntimeError("first", "second")', "first"),
])
def test_adjacent_string_literals_of_a_raise_line_are_one_message(line, message):
    # Python joins adjacent literals (torch 1.x wrote this message as two): the exception read from the
    # raise line is the whole message; literals that are separate arguments stay apart
    excs = [e for e in parse_text(line + "\n").events if e.kind == "torch.exception"]
    assert [e.fields["exc_message"] for e in excs] == [message]


# ------------------------------------------------------------------------------------------------
# damages combined: a wrap with the indentation dropped, quoted or indented as a code block


def test_a_frame_line_cut_inside_its_file_name_is_joined_at_any_width():
    # Python closes a frame's file name on its line: an open quote is a cut (here at 79 columns, too few
    # lines for a width of their own), and a page that dropped the indentation leaves the same pieces
    frames = ['File "train.py", line 11, in <module>',
              'torch.distributed.init_process_group(backend="nccl", world_size=4)',
              'File "/home/user/envs/ml/lib/python3.8/site-packages/torch/distributed/distrib',
              'uted_c10d.py", line 423, in init_process_group',
              "store, rank, world_size = next(rendezvous_iterator)"]
    lines = ["Traceback (most recent call last):", *frames]
    fixed, paste = repair_lines(lines)
    assert fixed[3] == '  File "/home/user/envs/ml/lib/python3.8/site-packages/torch/distributed/' \
                       'distributed_c10d.py", line 423, in init_process_group'
    assert fixed[4] == "" and paste.joined == {5}
    assert fixed[1] == '  File "train.py", line 11, in <module>' and fixed[5].startswith("    store, rank")
    # a name whose quote closes on its line is no cut; neither is a next line that is no name's rest
    assert repair_lines(['  File "a.py", line 3, in f', "x = 1"]) is None
    assert repair_lines(['  File "/home/user/envs/ml/lib/python3.8/site-', "packages are here", "x"]) is None


def test_a_wraps_rest_that_lost_its_blank_reads_with_it_again():
    # a terminal wrapped the lines at 80 columns, a page dropped each line's leading blanks, and with
    # them the blank a cut before a word left: the catalog's message decides that the blank goes back
    message = ("2026-09-17 13:40:02 [rank2]: RuntimeError: Detected mismatch between collectives on ranks. "
               "Rank 2 is running collective: "
               "CollectiveFingerPrint(SequenceNumber=8372, OpType=BROADCAST, TensorShape=[24084544], "
               "TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)), but "
               "Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=8372, OpType=BROADCAST).")
    cut = [message[i:i + 80].lstrip() for i in range(0, len(message), 80)]
    assert cut[0].endswith("collectives") and cut[1].startswith("on ranks")
    fixed, _ = repair_lines(cut)
    assert fixed[0].startswith("2026-09-17 13:40:02 [rank2]: RuntimeError: Detected mismatch between collectives on "
                               "ranks. Rank 2 is running")
    kinds = {e.kind for e in parse_text("\n".join(cut) + "\n").events}
    assert "torch.collective_mismatch" in kinds, kinds


@pytest.mark.parametrize("mark, logical", [
    ("> ", ["node-0042-abcdef:91:123 [0] transport/net_ib.cc:881 NCCL WARN NET/IB : Got completion from peer "
            "10.0.0.2<49577> with error 12, opcode 1, len 0, vendor err 129", ""]),
    # (rests that read as no rest alone, `Completed ...`: the width is told by the lengths with the marks)
    ("> ", ["[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request "
            "0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: "
            "{ buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }",
            "[1,13]<stderr>:libfabric:35:1668017255::efa:cq:rxr_cq_write_tx_error():243<warn> "
            "rxr_cq_write_tx_error: err: 20, prov_err: Not a directory (20)"]),
    ("    ", ["THCudaCheck FAIL file=/opt/conda-bld/pytorch_1493676237139/work/torch/lib/THC/generic/THCStorage.cu "
              "line=66 error=2 : out of memory", "Traceback (most recent call last):",
              '  File "main.py", line 222, in <module>', "    train()",
              "RuntimeError: cuda runtime error (2) : out of memory at "
              "/opt/conda-bld/pytorch_1493676237139/work/torch/lib/THC/generic/THCStorage.cu:66"]),
])
def test_a_quoted_or_indented_paste_wrapped_after_it_was_marked_reads_whole(mark, logical):
    # the marks were added first (a quote, a code block's indentation) and the mail or the page wrapped the
    # lines after: the rests carry no mark, and the width the cut fell at counts the mark
    marked = [(mark + t).rstrip() for t in logical]
    lines = [m[i:i + 80] for m in marked for i in range(0, max(1, len(m)), 80)]
    assert any(t[:1] not in "> " for t in lines if t)  # (rests without the mark)
    read = lambda text: [(e.kind, e.template, e.fields.get("message"), e.fields.get("args"))  # noqa: E731
                         for e in parse_text(text + "\n").events]
    whole = read("\n".join(logical))
    assert read("\n".join(lines)) == whole and whole[0][0] in ("nccl.warn", "cuda.oom")


def test_a_wraps_rest_ending_in_rays_repeat_note_is_still_a_rest():
    # Ray's deduplication note at a line's end (``[repeated 15x across cluster]``) starts nothing: the rest
    # of a WARN a terminal cut at 80 columns reads with it
    logical = ["(RayTrainWorker pid=954, ip=10.1.2.3) train-worker-ray-p5-7-abcdefg:954:3133 [6] nccl_net_ofi_create_plugin:1067 "
               "NCCL WARN NET/OFI aws-ofi-nccl initialization failed [repeated 15x across cluster]",
               "(RayTrainWorker pid=954, ip=10.1.2.3) train-worker-ray-p5-7-abcdefg:954:3133 [6] NCCL INFO NET/IB : No device "
               "found. [repeated 15x across cluster]"]
    lines = [t[i:i + 80] for t in logical for i in range(0, len(t), 80)]
    assert lines[1].endswith("initialization f") and lines[2].startswith("ailed [repeated")
    fixed, _ = repair_lines(lines)
    assert fixed[0] == logical[0]
    warns = [e for e in parse_text("\n".join(lines) + "\n").events if "NCCL WARN" in e.text]
    assert warns and "initialization failed" in warns[0].text


def test_colour_codes_that_lost_their_escape_byte_are_removed():
    # a page or a log viewer drops the escape byte and keeps the rest of each code; the message between
    # them reads as printed, and a Ray worker's prefix is again the envelope it is
    lines = ["[36m(RayWorkerWrapper pid=5463, ip=10.0.0.2)[0m Traceback (most recent call last):",
             "[36m(RayWorkerWrapper pid=5463, ip=10.0.0.2)[0m   File \"/w/train.py\", line 3, in <module>",
             "[1;31mtorch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
             "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5[0m",
             "[31mncclUnhandledCudaError: Call to CUDA function failed.[0m", "[31mLast error:[0m",
             "[31mCuda failure 'out of memory'[0m"]
    fixed, _ = repair_lines(lines)
    assert fixed[0] == "(RayWorkerWrapper pid=5463, ip=10.0.0.2) Traceback (most recent call last):"
    assert fixed[3] == "ncclUnhandledCudaError: Call to CUDA function failed." and fixed[5] == "Cuda failure 'out of memory'"
    plain = [t.replace("[36m", "").replace("[1;31m", "").replace("[31m", "").replace("[0m", "") for t in lines]
    assert _kinds(parse_text("\n".join(lines) + "\n")) == _kinds(parse_text("\n".join(plain) + "\n"))
    # without a reset in the source a bracketed code-like text is the program's own
    kept = ["timeout [30m] reached on rank 1", "RuntimeError: step [5m] failed"]
    assert repair_lines(kept) is None or repair_lines(kept)[0] == kept
    # a duration in brackets stays even where the source has colour residue
    fixed, _ = repair_lines(["[31mRuntimeError: boom[0m", "retry in [30m]"])
    assert fixed == ["RuntimeError: boom", "retry in [30m]"]


def test_a_double_spaced_record_reads_as_written_with_its_lines_where_they_stand():
    # a copy from a web console or a notebook's output puts a blank line after every line
    body = ["Traceback (most recent call last):", '  File "/w/train.py", line 40, in main', "    dist.all_reduce(t)"] + TORCH_NCCL
    plain = parse_text("\n".join(body) + "\n")
    spaced = parse_text("\n\n".join(body) + "\n")
    assert [e.kind for e in spaced.events] == [e.kind for e in plain.events] and len(plain.events) > 1
    assert [e.line for e in spaced.events] == [2 * e.line - 1 for e in plain.events]  # each line where it stands
    assert spaced.stats.not_understood == 0


def test_undouble_takes_only_the_blanks_a_double_spacing_added():
    from logdoc.blocks import undouble

    assert undouble("a\n\nb\n\nc") == "a\nb\nc"
    assert undouble("a\n\nb\n\n\n\nc\n\nd") == "a\nb\n\nc\nd"  # the program's own blank line kept
    assert undouble("a\nb\n\nc") is None  # two lines next to each other: not double spaced
    assert undouble("a\n\nb\n\n\nc") is None  # an even gap
    assert undouble("a\n\nb") is None  # one gap says nothing


def test_an_editors_links_around_file_names_and_addresses_read_as_their_text():
    # NVIDIA/nccl#1710: a copy from a rich-text editor keeps the links it made of `net_ib.cc` (.cc is a
    # top-level domain) and of addresses; the NCCL header did not parse, and no host was known
    lines = ["node023:10214:10303 [0] transport/[net_ib.cc:1909](http://net_ib.cc:1909/) NCCL WARN NET/IB : Got "
             "completion from peer [10.1.3.201](http://10.1.3.201/)<33057> with status=9 opcode=0 len=0 vendor err 138 "
             "(Send) localGid ::ffff:[10.206.1.23](http://10.206.1.23/) remoteGids::ffff:[10.206.1.11](http://10.206.1.11/)",
             "node023:10214:10303 [0] NCCL INFO [proxy.cc:698](http://proxy.cc:698/) -> 6"]
    fixed, _ = repair_lines(lines)
    assert fixed[0].startswith("node023:10214:10303 [0] transport/net_ib.cc:1909 NCCL WARN NET/IB : Got completion "
                               "from peer 10.1.3.201<33057> with status=9")
    assert fixed[0].endswith("localGid ::ffff:10.206.1.23 remoteGids::ffff:10.206.1.11")
    assert fixed[1] == "node023:10214:10303 [0] NCCL INFO proxy.cc:698 -> 6"
    res = parse_text("\n".join(lines) + "\n")
    assert [(e.kind, e.host, e.pid) for e in res.events][0] == ("nccl.warn", "node023", 10214)
    # a link to somewhere else is the writer's, and stays
    assert repair_lines(["see [the docs](https://docs.nvidia.com/x) for NCCL_IB_TIMEOUT"]) is None
    assert repair_lines(["[init.cc:88](https://github.com/NVIDIA/nccl/blob/master/src/init.cc#L88)"]) is None


# ------------------------------------------------------------------------------------------------
# control characters a syslog daemon wrote out as text (rsyslog's `#011`, `#012`)

SYSLOG_TB = ('Mar  3 10:12:01 node7 python3[4321]: ERROR:root:training failed#012Traceback (most recent call last):#012'
             '  File "/opt/train.py", line 40, in <module>#012    dist.init_process_group("nccl")#012'
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1216, in '
             '_store_based_barrier#012    raise DistStoreError(#012torch.distributed.DistStoreError: Timed out after '
             '1801 seconds waiting for clients. 1/2 clients joined.')


def test_a_traceback_logged_as_one_syslog_message_is_read_as_its_lines():
    res = parse_text(SYSLOG_TB + "\n", "messages")
    _check_counts(res)
    got = [e for e in res.events if e.kind == "store.clients_joined"]
    assert got and got[0].line == 1 and got[0].host == "node7" and got[0].pid == 4321  # (was: not understood)


def test_syslog_escapes_undone_and_lookalikes_left():
    out, _paste = repair_lines(["Mar  3 10:12:01 node7 python3[4321]: a#011tab#015"])
    assert out == ["Mar  3 10:12:01 node7 python3[4321]: a\ttab"]
    assert repair_lines(["see issue #0123 and #01 and #022"]) is None
    _out, paste = repair_lines(["x: a#011b#0120 c"])  # (one sure escape: the line is escaped throughout)
    assert paste.pieces[1] == ["x: a\tb", "0 c"]


# ------------------------------------------------------------------------------------------------
# an editor's links, cut by a hard wrap

def test_a_link_that_a_wrap_cut_is_joined_then_read_as_its_text():
    line = ("gpu7:12:34 [0] misc/[ibvwrap.cc:284](http://ibvwrap.cc:284/) NCCL WARN Call to ibv_modify_qp failed "
            "with error Connection timed out")
    out, paste = repair_lines([line[:80], line[80:]])  # (the wrap measured the line with its link)
    assert out == ["gpu7:12:34 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection "
                   "timed out", ""] and paste.joined == {2}


# ------------------------------------------------------------------------------------------------
# a log console's events copied as text: each event's time on a line of its own

CONSOLE = """2024-12-04T05:31:40.101Z
Traceback (most recent call last):
2024-12-04T05:31:40.101Z
  File "/opt/ml/code/train.py", line 88, in <module>
2024-12-04T05:31:40.101Z
    dist.barrier()
2024-12-04T05:31:40.101Z
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
2024-12-04T05:31:40.102Z
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. 
2024-12-04T05:31:40.102Z
Last error:
2024-12-04T05:31:40.102Z
NET/OFI Failed to initialize sendrecv protocol"""


def test_console_time_lines_end_no_record():
    res = parse_text(CONSOLE + "\n", "console.txt")
    _check_counts(res)
    err = [e for e in res.events if e.kind == "torch.nccl_error"]
    assert err and err[0].line == 2 and err[0].time == "2024-12-04T05:31:40.101Z"
    # the WARN that `Last error:` carries is read inside the exception's record (before: the time lines cut it off)
    assert [e.fields.get("nested_kind") for e in res.events if e.kind == "nccl.warn"] == ["torch.nccl_error"]


def test_time_lines_and_near_misses():
    out, paste = repair_lines(["2024-12-04T05:31:40.101Z", "a", " 2024-12-04 05:31:41,5 ", "b"])
    assert out == ["", "a", "", "b"] and paste.joined == {1, 3} and paste.ids[2]["time"] == "2024-12-04T05:31:40.101Z"
    # one time line only, or times that start a message, are no console's copy
    assert repair_lines(["2024-12-04T05:31:40.101Z", "a", "b", "c"]) is None
    assert repair_lines(["2024-12-04T05:31:40.101Z a", "2024-12-04T05:31:41.101Z b"]) is None


# ------------------------------------------------------------------------------------------------
# a terminal's rows, each padded with blanks to its width, copied as one line (deepseek-ai/DeepEP#106)

PADDED = [
    "[rank3]: torch.distributed.DistBackendError: NCCL error: remote process exited or there was a network error, "
    "NCCL version 2.20.5",
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    "Last error:",
    "NET/IB : Got completion from peer 172.21.17.89<38536> with error 12, opcode 48, len 32710, vendor err 129",
]


def _padded(rows: list[str], width: int) -> str:
    return "".join(r[k:k + width].ljust(width) for r in rows for k in range(0, len(r), width)).rstrip()


@pytest.mark.parametrize("width", [80, 120, 158, 211])
def test_a_terminals_padded_rows_are_read_as_its_lines(width):
    out, paste = repair_lines([_padded(PADDED, width)])
    assert paste.pieces[1] == PADDED
    res = parse_text(_padded(PADDED, width) + "\n", "screen.txt")
    warn = [e for e in res.events if e.kind == "nccl.warn"]
    assert warn and warn[0].fields.get("nested_kind") == "torch.nccl_error"  # (before: one line, its WARN unread)


def test_a_screen_line_of_one_padded_row_takes_the_width_its_other_lines_showed():
    """One terminal, one width: a line of the same copy with one padded row only (two rows: the padding run alone
    does not say the width) is split at the width that its other lines showed."""
    head = _padded(PADDED, 120)
    tail = "  Rank  3 Pid   1688 on    fastmoe device  3 [0xaf] GeForce RTX 2080 Ti"
    line = _padded([tail, "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'"], 120)
    out, paste = repair_lines([head, line])
    assert paste.pieces[2] == [tail, "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'"]
    alone = repair_lines([line])
    assert alone is None or not alone[1].pieces  # (alone, the width is not known)
    # a line's own run of blanks near its start (pytest's `E       ` before a long line) is no row at that width
    pytest_line = "E       " + "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:889] " * 2
    out, paste = repair_lines([head, pytest_line])
    assert 2 not in paste.pieces


def test_a_screen_that_starts_with_an_indented_or_an_empty_row():
    from logdoc.paste.wrap import padded_rows

    frame = ["      torch._C._cuda_setDevice(device)", "  RuntimeError: CUDA error: invalid device ordinal",
             "  For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
    # (the first row's indentation is no row's padding; rows indented alike may read as a copy that starts two columns on)
    assert [r.strip() for r in padded_rows(_padded(frame, 120))] == [r.strip() for r in frame]
    assert padded_rows(" " * 120 + _padded(PADDED, 120)) == PADDED  # (an empty first row)


def test_padding_that_is_no_terminals_rows():
    from logdoc.paste.wrap import padded_rows

    bar = "Running tokenizer on dataset:   9%|" + "\u2588" * 7 + " " * 80 + "| 280000/2969526 [29:55<4:48:08, 155.57 it/s]"
    assert padded_rows(bar + "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout") is None
    channel = "gpu1:12:34 [0] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7   8   9  10  11  12  13  14  15"
    assert padded_rows(channel + " " + channel) is None


def test_an_editors_link_a_cut_left_open_at_the_lines_end_reads_as_its_text():
    # a viewer cut the line at 100 columns inside the link's target (`misc/[shmutils.cc:72](http://shm`): the
    # text in brackets is whole, and what is left of the target is the start of the link's own
    cut = "gpu-node-17:1234:5678 [3] misc/[shmutils.cc:72](http://shm"
    assert repair_lines([cut])[0] == ["gpu-node-17:1234:5678 [3] misc/shmutils.cc:72"]
    assert not as_written([cut])
    for left, text in (("misc/[shmutils.cc:72](", "misc/shmutils.cc:72"), ("misc/[shmutils.cc:72](htt", "misc/shmutils.cc:72"),
                       ("peer [10.1.3.201](http://10.1.3.201/", "peer 10.1.3.201")):
        assert repair_lines(["gpu-node-17:1234:5678 [3] " + left])[0] == ["gpu-node-17:1234:5678 [3] " + text]
        assert unlinked(left) == text
    # a link to somewhere else, cut or whole, stays
    assert repair_lines(["see the [docs](http://example.com/nccl"]) is None


def _linked_and_wrapped(text: str, width: int = 80) -> list[str]:
    """``text`` with an editor's links around its file names and addresses, hard-wrapped at ``width``."""
    linked = re.sub(r"(?<![\w@.:-])(\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z_]\w*\.(?:cc|py))(?::\d+)?(?![\w.-]*\w)",
                    lambda m: f"[{m[0]}](http://{m[0]}/)", text)
    return [linked[i:i + width] for i in range(0, len(linked), width)]


@pytest.mark.parametrize("text", [
    # the wrap cut inside the link's target, and once more before it (inside `NCCL`: a prefilter word)
    "trainer-0-w-7h2kq:91:123 [0] transport/net_ib.cc:881 NCCL WARN NET/IB : Got completion from peer 10.4.127.143<49577> "
    "with error 12, opcode 1, len 0, vendor err 129",
    # inside the link's text; the line after is the enforce's own
    "RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84]\n  ifa != nullptr. Unable to find address for: ^lo",
    "gloo::EnforceNotMet: [enforce fail at fbcode/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 1944 vs 4",
])
def test_a_line_cut_inside_an_editors_link_is_joined_with_the_links_rest(text):
    lines = [x for t in text.split("\n") for x in (_linked_and_wrapped(t) if len(t) > 50 else [t])]
    out, paste = repair_lines(lines)
    assert [t for t in out if t] == text.split("\n")
    assert len(out) == len(lines) and paste.joined


def test_an_nccl_header_a_wrap_left_alone_on_its_line_takes_the_message_after_it():
    # the cut fell on the blank after `NCCL WARN` (the links made the line longer); the message alone reads too
    lines = _linked_and_wrapped("node-0046:78367:78492 [0] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'")
    assert lines[0].endswith("NCCL WARN") and lines[1].startswith(" Cuda")
    out, _ = repair_lines(lines)
    assert out[0] == "node-0046:78367:78492 [0] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'"


def test_a_wrap_cut_on_the_blank_before_a_bracketed_address_is_joined():
    lines = _linked_and_wrapped("[/opt/srcs/gloo-x/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused")
    assert lines[1].startswith(" [[127.0.1.1]")
    out, _ = repair_lines(lines)
    assert out[0] == "[/opt/srcs/gloo-x/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused"


@pytest.mark.parametrize("damage", ["html", "colour text"])
def test_a_wrap_is_measured_with_the_characters_an_entity_or_a_colour_code_took(damage):
    # a page scraped as text keeps `&#x27;`; a copy that lost the escape byte keeps `[31m`: the wrap cut the
    # line with them, so its piece is shorter than the width once they are read as what they were
    import html

    text = ["node-14:2134736:2285781 [0] NCCL INFO NET/Plugin : Plugin load returned 2 : libnccl-net.so: cannot open",
            "node-14:2134736:2285781 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0 with more words",
            "node-14:2134736:2285781 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory' while allocating"]
    shown = [html.escape(t, quote=True) for t in text] if damage == "html" else text[:2] + ["[31m" + text[2] + "[0m"]
    lines = [t[i:i + 80] for t in shown for i in range(0, len(t), 80)]
    out, _ = repair_lines(lines)
    assert [t for t in out if t][-1] == text[-1]
