"""A Python traceback as IPython / Jupyter prints it (logdoc/paste/ipython.py) is read as Python's."""
from __future__ import annotations

from logdoc.paste import as_written, repair_lines
from logdoc.pipeline import parse_text

EXC = ("DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda "
       "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5")

# IPython 8.6 and later (Cell In[N], File path:line, in fn(args)), the default theme's arrows
IPY8 = ["-" * 75,
        "DistBackendError                          Traceback (most recent call last)",
        "Cell In[3], line 5",
        "      3 import torch.distributed as dist",
        "      4 dist.init_process_group('nccl')",
        "----> 5 dist.barrier()",
        "",
        "File /opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py:79, in "
        "_exception_logger.<locals>.wrapper(*args, **kwargs)",
        "     76 @functools.wraps(func)",
        "     77 def wrapper(*args, **kwargs):",
        "     78     try:",
        "---> 79         return func(*args, **kwargs)",
        "     80     except Exception as error:",
        "",
        "File /opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py:3696, in barrier(group, "
        "async_op, device_ids)",
        "   3694     work = default_pg.barrier(opts=opts)",
        "   (...)",
        "-> 3696     work = group.barrier(opts=opts)",
        "",
        EXC,
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "Last error:",
        "Cuda failure 'out of memory'"]

# IPython 8.0 to 8.5 (Input In [N], in <cell line: N>()) and 7.x (<ipython-input-...> in <module>, path in fn(args),
# the line number on the arrow line only); a theme's Unicode arrow
IPY8_0 = ["Input In [3], in <cell line: 5>()", "      4 x = 1", "----> 5 dist.barrier()"]
IPY7 = ["<ipython-input-4-6d4f3c1a2b3c> in <module>", "      1 x = 1", "----> 2 dist.barrier()", "",
        "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py in barrier(group, async_op)",
        "   2521         work = default_pg.barrier(opts=opts)",
        "\u2500\u2500\u25b6 2523         work = group.barrier(opts=opts)"]


def _tb(events):
    return [e for e in events if e.fields and e.fields.get("traceback")]


def test_an_ipython_traceback_is_read_as_pythons():
    fixed, paste = repair_lines(IPY8)
    assert len(fixed) == len(IPY8)
    assert fixed[1] == "Traceback (most recent call last):"
    assert fixed[2] == '  File "Cell In[3]", line 5, in <module>' and fixed[5] == "    dist.barrier()"
    assert fixed[7] == ('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", line 79, in '
                        "_exception_logger.<locals>.wrapper")
    assert fixed[11] == "    return func(*args, **kwargs)"
    assert fixed[14].endswith('distributed_c10d.py", line 3696, in barrier') and fixed[17] == "    work = group.barrier(opts=opts)"
    assert fixed[19] == EXC  # the exception line as printed
    # the rule, the numbered context lines, the gap and the blank lines are no lines of Python's traceback
    assert paste.joined == {1, 4, 5, 7, 9, 10, 11, 13, 14, 16, 17, 19}
    evs = parse_text("\n".join(IPY8) + "\n").events
    tb = _tb(evs)
    assert tb and tb[0].kind == "torch.nccl_error" and tb[0].fields["frames"] == 3
    assert tb[0].fields["last_frame"].endswith("distributed_c10d.py:3696 in barrier")
    assert tb[0].line == 2 and tb[0].end_line == len(IPY8)


def test_the_older_forms_and_a_unicode_arrow():
    lines = IPY8[:2] + IPY8_0 + [""] + IPY7 + ["", EXC]
    fixed, _ = repair_lines(lines)
    assert fixed[2] == '  File "Input In [3]", line 5, in <cell line: 5>' and fixed[4] == "    dist.barrier()"
    assert fixed[6] == '  File "<ipython-input-4-6d4f3c1a2b3c>", line 2, in <module>'
    assert fixed[10].endswith('distributed_c10d.py", line 2523, in barrier')  # (its number from the arrow line)
    assert fixed[12] == "    work = group.barrier(opts=opts)"
    tb = _tb(parse_text("\n".join(lines) + "\n").events)
    assert tb and tb[0].fields["frames"] == 3


def test_the_screen_sends_an_ipython_traceback_to_the_repair():
    assert not as_written(IPY8)
    # Python's own head (with its colon) and a sentence that quotes the words are no IPython head
    plain = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>', "    f()", "ValueError: x"]
    assert repair_lines(plain) is None
    words = ["the log said Traceback (most recent call last) and then", "nothing more"]
    assert repair_lines(words) is None


def test_an_ipython_head_without_frames_is_left_alone():
    lines = ["KeyError                                  Traceback (most recent call last)", "KeyError: 'x'"]
    assert repair_lines(lines) is None
