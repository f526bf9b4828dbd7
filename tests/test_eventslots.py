"""An Event in few slots (logdoc/eventslots.py): the same fields, equality, pickling and copies as a record of
eighteen fields, in less memory."""
from __future__ import annotations

import copy
import pickle
import sys

from logdoc.events import EVENT_FIELDS, Event


def _full() -> Event:
    return Event("torch.terminate", "FATAL", "rank3.log", 4, "terminate called", 9, 3, 1, 0, "h1", 77, "t0",
                 "torch:x", {"what": "boom"}, "envelope", 2, "VllmWorker", 5)


def test_every_field_reads_back_as_given():
    ev = _full()
    assert tuple(getattr(ev, k) for k in EVENT_FIELDS) == (
        "torch.terminate", "FATAL", "rank3.log", 4, "terminate called", 9, 3, 1, 0, "h1", 77, "t0", "torch:x",
        {"what": "boom"}, "envelope", 2, "VllmWorker", 5)
    plain = Event("nccl.env", "INFO", "f", 12, "x")
    assert (plain.end_line, plain.local_rank, plain.node_rank, plain.process, plain.attempt, plain.folds,
            plain.template, plain.fields) == (12, None, None, None, None, 0, None, {})


def test_rare_fields_written_and_reset():
    ev = Event("nccl.env", "INFO", "f", 12, "x")
    ev.folds += 2
    ev.attempt = 0
    ev.end_line = 14
    assert (ev.folds, ev.attempt, ev.end_line, ev.line) == (2, 0, 14, 12)
    ev.folds, ev.attempt, ev.end_line = 0, None, 12
    assert ev == Event("nccl.env", "INFO", "f", 12, "x")


def test_events_alike_share_their_class_and_rare_values():
    a = Event("nccl.env", "INFO", "f", 1, "x", folds=3)
    b = Event("nccl.env", "INFO", "g", 2, "y", folds=3)
    assert type(a) is type(b) and isinstance(a, Event)
    assert type(a) is not type(Event("nccl.env", "WARN", "f", 1, "x"))
    assert a._more is b._more


def test_pickled_and_copied_events_are_equal():
    ev = _full()
    for other in (pickle.loads(pickle.dumps(ev)), copy.copy(ev), copy.deepcopy(ev), Event.from_dict(ev.to_dict())):
        assert other == ev and type(other) is type(ev)
    assert ev != Event("torch.terminate", "FATAL", "rank3.log", 4, "terminate called")


def test_an_event_is_small():
    # 10 slots: a job of 10,000 ranks holds about 220,000 events
    assert sys.getsizeof(Event("nccl.env", "INFO", "f", 1, "x")) <= 112
