"""File names the readers show: any name a folder can hold, shown as text a table, an HTML page
and a terminal can take (a name that is not UTF-8, a name holding a terminal escape sequence or
a bidirectional control)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import plasmate_nb as pnb
from plasmate_nb.trace import TraceLog
from plasmate_nb.trace.compact import file_label

HOSTILE = os.fsdecode(b"run\xff\x1b]0;pwned\x07\x1b[2J.json")  # not UTF-8, and terminal escapes
SHOWN = "run\\xff\\x1b]0;pwned\\x07\\x1b[2J.json"


def _folder(tmp_path: Path) -> Path:
    (tmp_path / HOSTILE).write_text(json.dumps(TraceLog(True).export(str(uuid.uuid4()))))
    return tmp_path


def test_the_label_of_a_name_is_text_with_its_controls_escaped() -> None:
    assert file_label(HOSTILE) == SHOWN
    assert file_label(Path("a/b.json")) == "a/b.json"
    names = [
        os.fsdecode(b"run\xff.json"),
        os.fsdecode(b"run\xfe.json"),
        "run\ufffd.json",
        "x\x85.json",
        "x\x05.json",
    ]
    assert len({file_label(name) for name in names}) == len(names)  # different names, different labels


def test_a_name_cannot_turn_the_line_around() -> None:
    """U+202E makes a terminal show the rest of the line backwards ("evil\u202enosj.exe" reads as
    "evilexe.json"); every bidirectional control is shown as its escape."""
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    shown = file_label("run" + controls + ".json")
    assert shown == "run" + "".join(f"\\u{ord(c):04x}" for c in controls) + ".json"
    assert file_label("مسار/αβγ.json") == "مسار/αβγ.json"  # right-to-left text itself is kept


def test_a_file_that_is_not_an_export_under_such_a_name_is_a_named_problem(tmp_path: Path) -> None:
    (tmp_path / HOSTILE).write_bytes(b'{"schema": "\xff"}')  # not UTF-8: found while reading
    (tmp_path / "ok.json").write_text(json.dumps(TraceLog(True).export(str(uuid.uuid4()))))
    problems = pnb.fleet(tmp_path).problems
    assert list(problems["file"]) == [SHOWN]
    assert problems["error"].iloc[0] == "not UTF-8 text (byte 12)" and "\x1b" not in problems.to_string()
    # pnb.audit and load_trace say it in the same words.
    assert pnb.audit(tmp_path / HOSTILE).findings["message"].tolist() == ["not UTF-8 text (byte 12)"]
    with pytest.raises(pnb.TraceFormatError, match=re.escape(": not UTF-8 text (byte 12)")):
        pnb.load_trace(tmp_path / HOSTILE)


def test_every_reader_takes_and_shows_such_a_name(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert list(pnb.fleet(folder).runs["file"]) == [SHOWN]
    report = pnb.audit(folder)
    assert (report.documents, report.unreadable) == (1, 0)
    (folder / HOSTILE).write_text("{")  # now unreadable: named in the findings
    report = pnb.audit(folder)
    assert list(report.findings["source"]) == [f"{folder}/{SHOWN}"]
    assert SHOWN in report._repr_html_().replace("<wbr>", "")  # whole, with places to break


def test_the_cli_prints_no_control_character_of_a_name(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / HOSTILE).write_text("{")
    done = subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "audit", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert SHOWN in done.stdout and "\x1b" not in done.stdout + done.stderr


def test_a_relative_path_that_starts_like_json_is_a_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("[run 1].json").write_text(json.dumps(TraceLog(True).export(str(uuid.uuid4()))))
    assert pnb.load_trace("[run 1].json").payload["events"] == []
    assert pnb.audit("[run 1].json").documents == 1
    Path("[batch 1]").mkdir()
    Path("[batch 1]/a.json").write_text(Path("[run 1].json").read_text())
    assert pnb.audit("[batch 1]").documents == 1  # a folder is a path too
    with pytest.raises(pnb.TraceFormatError, match=r"in JSON text: an array of 2 items"):
        pnb.load_trace("[1, 2]")  # no such file: JSON text, as before


def test_a_link_to_nothing_in_a_folder_is_counted_unreadable(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "gone.json").symlink_to(folder / "missing.json")
    report = pnb.audit(folder)
    assert (report.documents, report.unreadable) == (1, 1)
    assert list(report.findings["source"]) == [f"{folder}/gone.json"]
