"""Editorial relevance judgements as an input beside a click log (issue #47): (query, document, grade) rows from a
TREC/LETOR qrels file (``qid 0 docid grade``) or a CSV/TSV table with a header — one :class:`JudgementFormat`
record each in :data:`JUDGEMENT_FORMATS`, sniffed from the first line.  Every row that is not kept is counted and
named by its line numbers (never its content): unreadable rows, grades outside the stated range, duplicates
(identical, or with another grade: the first is kept).

>>> j = read_judgements(b"q1 0 a 2\\nq1 0 b 0\\nq1 0 a 2\\nq2 0 c 9\\n", name="qrels.txt")
>>> j.format, len(j.frame), j.counts["duplicates"], j.counts["out_of_range"]
('qrels', 2, 1, 1)
>>> j.notes[0]
'1 row with a grade outside 0–5 left out (line 4)'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from ultr_core.errors import DataFormatError
from ultr_core.logs.ids import ID_TRIM

__all__ = ["JudgementFormat", "JUDGEMENT_FORMATS", "Judgements", "read_judgements", "GRADE_RANGE", "parse_grades",
           "MAX_GRADE", "QUERY_NAMES", "DOC_NAMES", "GRADE_NAMES", "line_list"]

#: the grades accepted unless a range is given (LETOR 0–2 / 0–4, Yandex 0–5)
GRADE_RANGE = (0.0, 5.0)
#: the largest grade a range may name: the gain 2^g − 1 of nDCG and DCG overflows a float far above it
MAX_GRADE = 30.0
_RANGE = __import__("re").compile(r"\s*(-?\d+(?:\.\d+)?)\s*(?:-|:|\.\.)\s*(-?\d+(?:\.\d+)?)\s*")


def parse_grades(text: str, option: str = "--grades") -> tuple[float, float]:
    """A grade range ``LOW-HIGH`` (or ``LOW:HIGH``, ``LOW..HIGH``; a negative end is written with its sign, e.g.
    ``-2:3`` or ``-2-3``): finite numbers, LOW ≤ HIGH ≤ :data:`MAX_GRADE`; else a :class:`ConfigError` naming
    ``option``.

    >>> parse_grades("0-4"), parse_grades("-2-3"), parse_grades("-2:3")
    ((0.0, 4.0), (-2.0, 3.0), (-2.0, 3.0))
    """
    from ultr_core.errors import ConfigError
    m = _RANGE.fullmatch(str(text))
    if m is None:
        raise ConfigError(option, "write the range as LOW-HIGH with two numbers, e.g. 0-4 (or -2:3 for a negative "
                                  "low end)")
    low, high = float(m.group(1)), float(m.group(2))
    if low > high:
        raise ConfigError(option, f"the low end {low:g} is above the high end {high:g}")
    if high > MAX_GRADE:
        raise ConfigError(option, f"grades above {MAX_GRADE:g} overflow the gain 2^g − 1; rescale the judgements")
    return low, high


#: header names a table's columns may carry (lower case)
QUERY_NAMES = ("query_id", "qid", "query", "queryid")
DOC_NAMES = ("doc_id", "docid", "doc", "document", "url", "urlid", "url_id")
GRADE_NAMES = ("grade", "label", "relevance", "rel", "judgement", "judgment")


def _table(text: str, name: str = "judgements") -> pd.DataFrame:
    """A CSV/TSV table with a header; a row with more or fewer fields than the header (or a quote left open) is
    counted by its line in ``attrs["bad_lines"]``, never refused as a whole file."""
    f, bad = _text_table(text, name)
    cols = {c.strip().lower(): c for c in f.columns}
    pick = [next((cols[n] for n in names if n in cols), None) for names in (QUERY_NAMES, DOC_NAMES, GRADE_NAMES)]
    if None in pick:
        missing = ["query", "document", "grade"][pick.index(None)]
        raise DataFormatError(name, f"the header names no {missing} column (accepted: "
                                    f"{', '.join((QUERY_NAMES, DOC_NAMES, GRADE_NAMES)[pick.index(None)])})")
    out = f[pick + ["line"]].set_axis(["query_id", "doc_id", "grade", "line"], axis=1)
    out = out.assign(query_id=out["query_id"].str.strip(ID_TRIM), doc_id=out["doc_id"].str.strip(ID_TRIM))
    out.attrs["bad_lines"] = bad
    return out


def _text_table(text: str, name: str) -> tuple[pd.DataFrame, list]:
    """A header table read by pyarrow (every field text, blank lines skipped): the frame with a ``line`` column
    (1-based file lines) and the lines of ragged rows (more or fewer fields than the header)."""
    import csv

    import pyarrow as pa
    import pyarrow.csv as pcsv
    first = text.split("\n", 1)[0]
    sep = "\t" if "\t" in first else ","
    header = next(csv.reader([first], delimiter=sep))
    if len(set(header)) < len(header):
        raise DataFormatError(name, "the header names a column twice")
    bad = []

    def ragged(row):
        bad.append(row.number)                    # the file line (the skipped header counts)
        return "skip"
    ro = pcsv.ReadOptions(use_threads=False, block_size=1 << 24, column_names=header, skip_rows=1)
    po = pcsv.ParseOptions(delimiter=sep, invalid_row_handler=ragged, ignore_empty_lines=False)
    co = pcsv.ConvertOptions(column_types={c: pa.string() for c in header}, strings_can_be_null=False)
    try:
        table = pcsv.read_csv(pa.BufferReader(text.encode()), read_options=ro, parse_options=po, convert_options=co)
    except pa.ArrowInvalid:
        raise DataFormatError(name, "not a CSV/TSV table with one header row") from None
    lines = np.arange(2, 2 + table.num_rows + len(bad), dtype=np.int64)
    lines = lines[~np.isin(lines, np.asarray(bad, np.int64))][:table.num_rows]
    frame = table.to_pandas().assign(line=lines)
    blank = (frame[header].apply(lambda c: c.str.strip()) == "").all(axis=1)     # a blank line: no row at all
    return frame[~blank.to_numpy()].reset_index(drop=True), bad


def _qrels(text: str, name: str = "judgements") -> pd.DataFrame:
    """``query 0 document grade`` per line, split by pyarrow (no Python loop per line); ``#`` comment lines and a
    header line (a first line whose grade is no number) are skipped, other lines without four fields counted."""
    import pyarrow as pa
    import pyarrow.compute as pc
    lines = pc.utf8_trim_whitespace(pa.array(text.split("\n")))
    fields = pc.utf8_split_whitespace(lines)
    n = pc.list_value_length(fields).to_numpy(zero_copy_only=False)
    blank = pc.equal(lines, "").to_numpy(zero_copy_only=False)
    comment = pc.starts_with(lines, "#").to_numpy(zero_copy_only=False)
    good = (n == 4) & ~comment & ~blank
    first = np.flatnonzero(~blank & ~comment)
    if len(first) and good[first[0]] and not _number(fields[int(first[0])].as_py()[3]):
        good[first[0]], comment[first[0]] = False, True          # a header line, e.g. ``qid iter docno rel``
    keep = pc.filter(fields, pa.array(good))
    frame = pd.DataFrame({"query_id": pc.list_element(keep, 0).to_pandas(),
                          "doc_id": pc.list_element(keep, 2).to_pandas(),
                          "grade": pc.list_element(keep, 3).to_pandas(), "line": np.flatnonzero(good) + 1})
    frame.attrs["bad_lines"] = (np.flatnonzero(~good & ~blank & ~comment) + 1).tolist()
    return frame


def _sniff_qrels(first: str) -> bool:
    f = first.split()
    if first.lstrip().startswith("#"):
        return True                                  # a commented qrels file (tables start with their header)
    return len(f) == 4 and (_number(f[3]) or ("," not in first and "\t" not in first.strip()))


def _number(s: str) -> bool:
    try:
        return np.isfinite(float(s))
    except ValueError:
        return False


@dataclass(frozen=True)
class JudgementFormat:
    """One judgements format: ``name``, ``label``, ``help`` (one sentence for the pages), ``sniff`` (first line →
    bool; None: the fallback) and ``parse`` (text → frame of query_id, doc_id, grade as text, line)."""

    name: str
    label: str
    help: str
    parse: Callable
    sniff: Callable | None = None


JUDGEMENT_FORMATS = (
    JudgementFormat("qrels", "TREC / LETOR qrels", "whitespace-separated `query 0 document grade`, one per line",
                    _qrels, _sniff_qrels),
    JudgementFormat("table", "CSV / TSV with a header", "columns for the query (query_id, qid, query), the document "
                    "(doc_id, docid, url) and the grade (grade, label, relevance)", _table),
)


@dataclass(frozen=True)
class Judgements:
    """The judgements kept (``frame``: query_id, doc_id as text, grade float, one row per pair), the format read,
    the counts of every row left out and one sentence per kind (``notes``)."""

    frame: pd.DataFrame
    format: str
    rows: int
    counts: dict
    notes: tuple


def line_list(lines) -> str:
    lines = list(lines)
    shown = ", ".join(str(x) for x in lines[:5]) + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")
    return f"line{'s' if len(lines) > 1 else ''} {shown}"


def _count_note(n: int, what: str, lines) -> str | None:
    return f"{n} row{'s' if n != 1 else ''} {what} ({line_list(lines)})" if n else None


def _encoding(data: bytes) -> str:
    """What an undecodable side file is, from its first bytes."""
    head = bytes(data[:4])
    if head[:2] == b"\x1f\x8b":
        return "gzip-compressed: unpack it and give the text"
    if head[:4] == b"PK\x03\x04":
        return "a zip archive: unpack it and give the text"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16 text: save it as UTF-8"
    return "not UTF-8 text"


def read_text(data: bytes, name: str, what: str) -> str:
    """A side file's UTF-8 text (BOM and CRLF undone, blank ends stripped); refused when undecodable or empty."""
    try:
        text = data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    except UnicodeDecodeError:
        raise DataFormatError(name, f"the {what} file is {_encoding(data)}") from None
    if not text.strip():
        raise DataFormatError(name, f"the {what} file is empty")
    return text


def read_judgements(data: bytes, *, name: str = "judgements", fmt: str | None = None,
                    grades: tuple = GRADE_RANGE) -> Judgements:
    """The judgements in ``data`` (text), in ``fmt`` or sniffed; ``grades`` = (low, high), inclusive."""
    text = read_text(data, name, "judgements")
    spec = next((f for f in JUDGEMENT_FORMATS if f.name == fmt), None) if fmt else next(
        (f for f in JUDGEMENT_FORMATS if f.sniff is None or f.sniff(text.split("\n", 1)[0])), None)
    if spec is None:
        raise DataFormatError(name, f"unknown judgements format {str(fmt)[:20]!r}; choose from "
                                    f"{', '.join(f.name for f in JUDGEMENT_FORMATS)}")
    f = spec.parse(text, name)
    bad_lines = list(f.attrs.get("bad_lines", []))
    g = pd.to_numeric(f["grade"], errors="coerce")
    unreadable = ~np.isfinite(g.to_numpy(np.float64)) | (f["query_id"].str.strip() == "") | (f["doc_id"].str.strip()
                                                                                              == "")
    bad_lines += f.loc[unreadable, "line"].tolist()
    f = f[~unreadable].assign(grade=g[~unreadable].astype(np.float64))
    outside = (f["grade"] < grades[0]) | (f["grade"] > grades[1])
    out_lines = f.loc[outside, "line"].tolist()
    f = f[~outside]
    pair = pd.factorize(f["query_id"].astype(str) + "\x1f" + f["doc_id"].astype(str))[0]     # one code per pair
    _, first_row = np.unique(pair, return_index=True)
    dup = pd.Series(np.ones(len(f), bool), index=f.index)
    dup.iloc[first_row] = False
    grade = f["grade"].to_numpy()
    conflict = dup & (grade != grade[first_row[pair]])
    kept = f[~dup].drop(columns="line").reset_index(drop=True)
    if kept.empty:
        raise DataFormatError(name, "no judgement is left: every row was unreadable or outside the grade range")
    counts = {"unreadable": len(bad_lines), "out_of_range": len(out_lines), "duplicates": int(dup.sum()),
              "conflicting_duplicates": int(conflict.sum())}
    notes = [_count_note(len(bad_lines), "unreadable (not query, document, grade)", sorted(bad_lines)),
             _count_note(len(out_lines), f"with a grade outside {grades[0]:g}–{grades[1]:g} left out", out_lines),
             _count_note(int(dup.sum()), "repeating a (query, document) pair left out, the first kept"
                         + (f" ({int(conflict.sum())} with another grade)" if conflict.any() else ""),
                         f.loc[dup, "line"].tolist())]
    return Judgements(kept, spec.name, int(len(kept)), counts, tuple(n for n in notes if n))
