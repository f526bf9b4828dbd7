"""Reading: every oddity is handled and counted, nothing raises."""
from __future__ import annotations

import gzip
import io

import pytest

from logdoc.read.source import InputError, ReadStats, Source, expand, read_lines


def lines_of(data: bytes, name="x.log"):
    stats = ReadStats()
    src = Source(name, stream=io.BytesIO(data))
    return [t for _, t in read_lines(src, stats)], stats


def test_line_ends_and_residue():
    got, stats = lines_of(b"a\r\nb\nprogress 10%\rprogress 90%\rdone\nlast")
    assert got == ["a", "b", "done", "last"]
    assert stats.lines == 4


def test_cr_cr_lf_line_ends_keep_their_lines():
    # CRLF text written again through a text-mode writer (Windows): every line ends in CR CR LF; the CRs end
    # the line, they are no progress bar's updates before an empty text
    got, _ = lines_of(b"Traceback (most recent call last):\r\r\nRuntimeError: boom\r\r\n10%\r90%\r\r\n")
    assert got == ["Traceback (most recent call last):", "RuntimeError: boom", "90%"]


def test_lone_cr_file():
    got, _ = lines_of(b"one\rtwo\rthree")
    assert got == ["one", "two", "three"]


def test_invalid_utf8_and_ansi():
    got, _ = lines_of(b"\x1b[31mred\x1b[0m \xff\xfe ok\n")
    assert got == ["red \ufffd\ufffd ok"]


def test_long_line_is_cut_and_counted():
    big = b"x" * (3 << 20)
    got, stats = lines_of(big + b"\nnext\n")
    assert len(got[0]) == 1 << 20
    assert got[1] == "next"
    assert stats.cut_lines == 1


def test_gzip_by_content(tmp_path):
    p = tmp_path / "rank0.log.gz"
    p.write_bytes(gzip.compress(b"hello\nworld\n"))
    stats = ReadStats()
    assert [t for _, t in read_lines(Source(str(p), path=str(p)), stats)] == ["hello", "world"]


def test_truncated_gzip_keeps_what_was_read(tmp_path):
    p = tmp_path / "bad.gz"
    import random
    rnd = random.Random(7)
    body = b"".join(b"line %d %x\n" % (i, rnd.getrandbits(64)) for i in range(20000))
    p.write_bytes(gzip.compress(body)[:3000])
    stats = ReadStats()
    got = [t for _, t in read_lines(Source(str(p), path=str(p)), stats)]
    assert stats.warnings or stats.skipped_files
    assert got and all(t.startswith("line ") for t in got[:-1])


def test_binary_is_skipped(tmp_path):
    p = tmp_path / "core"
    p.write_bytes(b"\x7fELF" + b"\x00" * 5000)
    stats = ReadStats()
    assert list(read_lines(Source(str(p), path=str(p)), stats)) == []
    assert stats.skipped_files == [(str(p), "binary file")]


UTF16_TEXT = ("NCCL version 2.21.5+cuda12.4\r\ngpu-node-1:812:812 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\r\n"
              "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO) \u2014 r\u00e9seau\r\n")


@pytest.mark.parametrize("encoding, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                           ("utf-16-le", b""), ("utf-16-be", b"")])
def test_utf16_text_is_read_as_text(tmp_path, encoding, bom):
    # Windows PowerShell 5's `>` writes UTF-16LE with its byte order mark: half its bytes are NULs,
    # which the binary rule would skip; with a mark or without, it is read as the text it is
    p = tmp_path / "train.log"
    p.write_bytes(bom + UTF16_TEXT.encode(encoding) * 3)
    stats = ReadStats()
    got = [t for _, t in read_lines(Source(str(p), path=str(p)), stats)]
    assert got == UTF16_TEXT.replace("\r\n", "\n").split("\n")[:-1] * 3
    assert not stats.skipped_files
    got2, _ = lines_of(bom + UTF16_TEXT.encode(encoding))  # a stream reads it alike
    assert got2 == got[:3]


def test_a_byte_order_mark_before_text_that_is_no_utf16_is_not_read_as_utf16():
    # FF FE before UTF-8 text with no NUL: invalid bytes, not a UTF-16 mark
    got, _ = lines_of(b"\xff\xfe NCCL WARN NET/Socket : socket progress error\nRuntimeError: boom\n")
    assert got == ["\ufffd\ufffd NCCL WARN NET/Socket : socket progress error", "RuntimeError: boom"]


@pytest.mark.parametrize("suffix", ["bz2", "xz"])
def test_bzip2_and_xz_are_read(tmp_path, suffix):
    import bz2
    import lzma

    pack = bz2.compress if suffix == "bz2" else lzma.compress
    body = b"".join(b"line %d\n" % i for i in range(3000))
    p = tmp_path / f"rank0.log.{suffix}"
    p.write_bytes(pack(body[:9000]) + pack(body[9000:]))  # two streams, as cat or pbzip2 make them
    stats = ReadStats()
    got = [t for _, t in read_lines(Source(str(p), path=str(p)), stats)]
    assert got == body.decode().split("\n")[:-1]
    assert not stats.skipped_files and not stats.warnings
    p.write_bytes(pack(body)[:-40])  # cut before its end: what was read is kept, and said
    stats = ReadStats()
    got = [t for _, t in read_lines(Source(str(p), path=str(p)), stats)]
    if suffix == "xz":
        assert got and stats.warnings and "stopped reading" in stats.warnings[0]
    else:  # (bzip2 gives a block's text only at its end: this one block gives none, a corrupt file)
        assert not got and stats.skipped_files[0][1].startswith("corrupt bzip2 (Compressed file ended")
    p.write_bytes(pack(body)[:12] + b"\x00not a stream" * 20)
    stats = ReadStats()
    assert list(read_lines(Source(str(p), path=str(p)), stats)) == []
    assert stats.skipped_files and stats.skipped_files[0][1].startswith(("corrupt bzip2", "corrupt xz"))


@pytest.mark.parametrize("head, why", [(b"\x28\xb5\x2f\xfd\x24\x00", "zstd-compressed"),
                                       (b"PK\x03\x04\x14\x00", "a zip archive"),
                                       (b"7z\xbc\xaf\x27\x1c\x00\x04", "a 7z archive"),
                                       (b"\x04\x22\x4d\x18\x64\x40", "lz4-compressed"),
                                       (b"logs/rank0.log".ljust(257, b"\x00") + b"ustar\x0000", "a tar archive")])
def test_packed_formats_not_read_say_what_to_do(tmp_path, head, why):
    # never read as text (garbage lines and "no known failure"): skipped, with what to run instead
    p = tmp_path / "logs.bin"
    p.write_bytes(head + bytes(range(256)) * 8)
    stats = ReadStats()
    assert list(read_lines(Source(str(p), path=str(p)), stats)) == []
    assert stats.skipped_files[0][1].startswith(why)
    g = tmp_path / "logs.bin.gz"  # the same inside gzip (a .tar.gz)
    g.write_bytes(gzip.compress(p.read_bytes()))
    stats = ReadStats()
    assert list(read_lines(Source(str(g), path=str(g)), stats)) == []
    assert stats.skipped_files[0][1].startswith(why)


def test_a_hole_at_the_start_is_skipped_and_text_between_holes_says_what_to_do(tmp_path):
    p = tmp_path / "train.log"
    p.write_bytes(b"\x00" * 300_000 + b"NCCL WARN after the hole\nline two\n")
    stats = ReadStats()
    assert [t for _, t in read_lines(Source(str(p), path=str(p)), stats)] == ["NCCL WARN after the hole", "line two"]
    assert stats.warnings == [f"{p}: 300,000 NUL bytes at the start skipped (a log truncated while its writer "
                              "held it open, as logrotate's copytruncate leaves it)"]
    p.write_bytes(b"NCCL INFO Bootstrap : Using eth0\n" + b"\x00" * 9000 + b"more\n")  # a hole after text
    stats = ReadStats()
    assert list(read_lines(Source(str(p), path=str(p)), stats)) == []
    assert stats.skipped_files[0][1].startswith("binary file: runs of NUL bytes around text")


def test_expand_folders_globs_and_errors(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "rank0.log").write_text("x\n")
    (tmp_path / "a" / "rank1.log").write_text("y\n")
    assert [s.name for s in expand([str(tmp_path / "a")])] == [str(tmp_path / "a" / "rank0.log"), str(tmp_path / "a" / "rank1.log")]
    assert len(expand([str(tmp_path / "a" / "rank*.log")])) == 2
    with pytest.raises(InputError, match="no such file"):
        expand([str(tmp_path / "missing.log")])
    with pytest.raises(InputError, match="no file matches"):
        expand([str(tmp_path / "*.nothing")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no files in folder"):
        expand([str(tmp_path / "empty")])  # a folder named on the command line that holds nothing to read


def test_symlink_loop_in_folder(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "loop").symlink_to(tmp_path / "d")
    (tmp_path / "d" / "f.log").write_text("x\n")
    names = [s.name for s in expand([str(tmp_path / "d")])]
    assert names == [str(tmp_path / "d" / "f.log")]
