"""Click logs supplied by users, read into a :class:`~ultr_core.clicklog.ClickLog`.

Formats:

* **csv / tsv / parquet** — one row per displayed document.  Default columns
  ``query_id``, ``doc_id`` (or ``doc_columns``: feature columns that identify a document),
  ``position`` (1-based) and ``click`` (0/1); optional ``session_id`` (otherwise a new
  session starts where the query changes or the position does not increase) and ``shown``
  (default: all shown).  Any other column is kept and usable as a bias factor by name.
  ``columns`` maps the file's names onto these (``{"qid": "query_id", …}``).
* **ultra** — an ULTRA directory with click files is rare; we read its ``train`` split's
  ``init_list`` as displayed lists and, when present, ``train/train.clicks``
  (``qid c c …`` aligned with ``init_list``; one session per line).
* **yandex** — the Yandex relevance-prediction log used by click-model libraries
  (tab-separated; query rows ``SessionID TimePassed Q QueryID RegionID URL1 … URLn``,
  click rows ``SessionID TimePassed C URLID``).  Every Q row is one impression; a click
  belongs to the latest impression of its session that shows the URL.  A document is the
  pair (query, URL).

Readers return ``(log, notes)``: ``notes`` lists what was repaired (duplicates dropped,
clicks that matched no impression).  Unfixable problems raise
:class:`~ultr_core.errors.DataFormatError` naming the file, the line or column and the problem.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from .clicklog import ClickLog
from .errors import DataFormatError

__all__ = ["read_user_log", "infer_format", "peek_columns", "guess_mapping", "FORMATS", "MAX_ROWS",
           "TARGETS"]

#: the schema columns a user's columns can be mapped onto (session_id and shown are optional)
TARGETS = ("query_id", "doc_id", "position", "click", "session_id", "shown")
_ALIASES = {"query_id": ("query_id", "qid", "query", "queryid"), "doc_id": ("doc_id", "docid", "doc", "url",
                                                                             "document", "urlid"),
            "position": ("position", "pos", "rank"), "click": ("click", "clicked", "clicks"),
            "session_id": ("session_id", "session", "sessionid", "sid"), "shown": ("shown",)}

FORMATS = ("csv", "tsv", "parquet", "ultra", "yandex")
MAX_ROWS = 50_000_000


def infer_format(path) -> str:
    p = Path(str(path))
    if p.is_dir():
        return "ultra"
    ext = p.suffix.lower()
    return {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet",
            ".txt": "yandex", ".log": "yandex"}.get(ext, "csv")


def read_user_log(source, fmt: str | None = None, columns: dict | None = None,
                  doc_columns: list | None = None, name: str | None = None):
    """Read a user's click log.  ``source`` is a path or a bytes buffer (uploads); ``name``
    is used in messages (defaults to the path).  Returns ``(ClickLog, notes)``."""
    name = name or str(source)
    fmt = (fmt or infer_format(source if not isinstance(source, (bytes, io.IOBase)) else name)).lower()
    if fmt not in FORMATS:
        raise DataFormatError(name, f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    if fmt == "yandex":
        return _read_yandex(source, name)
    if fmt == "ultra":
        return _read_ultra_clicks(Path(source), name)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            table = pq.read_table(source)
            df = table.to_pandas()
            raw = (table.schema.metadata or {}).get(b"ultr_core.meta")
            if raw and all(c in df.columns for c in ("session_id", "query_id", "doc_id", "position",
                                                     "shown", "click")) and not columns:
                import json
                from .clicklog import ClickLog
                return ClickLog._from_frame(df, json.loads(raw), name), []   # a log this library wrote
        else:
            df = pd.read_csv(source, sep="\t" if fmt == "tsv" else ",")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, ValueError) as e:
        raise DataFormatError(name, f"cannot read as {fmt}: {str(e).splitlines()[0]}") from None
    return frame_to_log(df, name, columns, doc_columns)


def peek_columns(source, fmt: str, name: str = "upload") -> list[str]:
    """Column names of a CSV/TSV/Parquet source without reading it all."""
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return list(pq.read_schema(source).names)
        return list(pd.read_csv(source, sep="\t" if fmt == "tsv" else ",", nrows=5).columns)
    except Exception as e:        # any parser failure is reported as a format problem
        raise DataFormatError(name, f"cannot read as {fmt}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


def guess_mapping(columns: list[str]) -> dict:
    """Best guess of which file column is which schema column (by common names)."""
    low = {str(c).lower(): c for c in columns}
    out = {}
    for target, names in _ALIASES.items():
        for n in names:
            if n in low:
                out[target] = low[n]
                break
    return out


def frame_to_log(df: pd.DataFrame, name: str, columns: dict | None = None,
                 doc_columns: list | None = None):
    """Map a user table onto the ClickLog schema (see the module docstring)."""
    notes = []
    if columns:
        unknown = [c for c in columns if c not in df.columns]
        if unknown:
            raise DataFormatError(name, f"mapped column(s) {', '.join(map(str, unknown))} not in the file "
                                        f"(it has {', '.join(map(str, df.columns))})")
        df = df.rename(columns=columns)
    if len(df) == 0:
        raise DataFormatError(name, "the log is empty (no rows)")
    if len(df) > MAX_ROWS:
        raise DataFormatError(name, f"{len(df):,} rows exceed the limit of {MAX_ROWS:,}")
    need = ["query_id", "position", "click"] + ([] if doc_columns else ["doc_id"])
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise DataFormatError(name, f"missing column(s) {', '.join(missing)}; found "
                                    f"{', '.join(map(str, df.columns))} — map them to query_id, doc_id, "
                                    "position, click")
    for col in need + list(doc_columns or []):
        if col not in df.columns:
            raise DataFormatError(name, f"document column {col!r} not in the file")
        if df[col].isna().any():
            row = int(np.flatnonzero(df[col].isna().to_numpy())[0])
            raise DataFormatError(name, f"column {col!r} is empty at data row {row + 1}")
    pos = pd.to_numeric(df["position"], errors="coerce")
    if pos.isna().any() or (pos % 1 != 0).any():
        row = int(np.flatnonzero((pos.isna() | (pos % 1 != 0)).to_numpy())[0])
        raise DataFormatError(name, f"column 'position' must hold whole numbers (data row {row + 1}: "
                                    f"{df['position'].iloc[row]!r})")
    if (pos < 1).any():
        row = int(np.flatnonzero((pos < 1).to_numpy())[0])
        raise DataFormatError(name, f"positions are 1-based: {int(pos.iloc[row])} at data row {row + 1}")
    if pos.max() > 1000:
        raise DataFormatError(name, f"position {int(pos.max())} is out of range (at most 1000)")
    clk = pd.to_numeric(df["click"], errors="coerce")
    if clk.isna().any() or not clk.isin([0, 1]).all():
        row = int(np.flatnonzero((clk.isna() | ~clk.isin([0, 1])).to_numpy())[0])
        raise DataFormatError(name, f"column 'click' must hold 0 or 1 (data row {row + 1}: "
                                    f"{df['click'].iloc[row]!r})")
    out = df.copy()
    out["position"], out["click"] = pos.astype(np.int16), clk.astype(np.int8)
    out["query_key"] = out["query_id"].astype(str)
    out["query_id"] = pd.factorize(out["query_id"], sort=True)[0]
    if doc_columns:
        out["doc_id"] = out.groupby(list(doc_columns), sort=True, dropna=False).ngroup()
    else:
        out["doc_key"] = out["doc_id"].astype(str)
        out["doc_id"] = pd.factorize(out["doc_id"], sort=True)[0]
    if "session_id" not in out:
        new = (out["query_id"].diff().fillna(1) != 0) | (out["position"].diff().fillna(-1) <= 0)
        out["session_id"] = np.cumsum(new.to_numpy()) - 1
        notes.append("no session_id column: a new session starts where the query changes or the "
                     "position does not increase")
    else:
        out["session_id"] = pd.factorize(out["session_id"])[0]
    if "shown" not in out:
        out["shown"] = True
    dup = out.duplicated(["session_id", "position"], keep="first")
    if dup.any():
        notes.append(f"dropped {int(dup.sum()):,} duplicate row(s) (same session and position)")
        out = out[~dup]
    try:
        log = ClickLog._from_frame(out, {"source": name}, name)
    except DataFormatError:
        raise
    return log, notes


def _read_lines(source, name):
    try:
        if isinstance(source, io.IOBase):
            data = source.read()
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        else:
            text = Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataFormatError(name, "file not found") from None
    except UnicodeDecodeError as e:
        raise DataFormatError(name, f"not a UTF-8 text file (byte {e.start})") from None
    return text.splitlines()


def _read_yandex(source, name):
    impressions = []                  # (session, query, [urls])
    last_for = {}                     # (session, url) -> impression index
    clicks = set()
    orphan = 0
    for lineno, raw in enumerate(_read_lines(source, name), start=1):
        if not raw.strip():
            continue
        f = raw.rstrip("\n").split("\t")
        if len(f) < 3:
            raise DataFormatError(name, f"expected tab-separated fields, got {raw[:60]!r}", lineno)
        kind = f[2]
        if kind == "Q":
            if len(f) < 6:
                raise DataFormatError(name, "query row needs SessionID TimePassed Q QueryID RegionID URL…",
                                      lineno)
            idx = len(impressions)
            impressions.append((f[0], f[3], f[5:]))
            for u in f[5:]:
                last_for[(f[0], u)] = idx
        elif kind == "C":
            if len(f) != 4:
                raise DataFormatError(name, "click row needs SessionID TimePassed C URLID", lineno)
            idx = last_for.get((f[0], f[3]))
            if idx is None:
                orphan += 1
            else:
                clicks.add((idx, f[3]))
        else:
            raise DataFormatError(name, f"record type {kind!r} is neither Q nor C", lineno)
    if not impressions:
        raise DataFormatError(name, "the log is empty (no query rows)")
    sess = np.repeat(np.arange(len(impressions)), [len(u) for _, _, u in impressions])
    q = np.repeat([qq for _, qq, _ in impressions], [len(u) for _, _, u in impressions])
    urls = [u for _, _, us in impressions for u in us]
    pos = np.concatenate([np.arange(1, len(us) + 1) for _, _, us in impressions])
    clk = np.array([(i, u) in clicks for i, u in zip(sess, urls)], dtype=np.int8)
    df = pd.DataFrame({"session_id": sess, "query_id": q, "url": urls, "position": pos, "click": clk})
    notes = []
    if orphan:
        notes.append(f"ignored {orphan:,} click(s) on a URL no earlier impression of the session showed")
    df["doc_key"] = df["query_id"].astype(str) + "/" + df["url"].astype(str)
    log, more = frame_to_log(df.rename(columns={"url": "url_id"}), name, doc_columns=["query_id", "url_id"])
    return log, notes + [n for n in more if "session" not in n]


def _read_ultra_clicks(root: Path, name):
    from .loaders import _read_lines as read_lines
    init = root / "train" / "train.init_list"
    clk = root / "train" / "train.clicks"
    lines = read_lines(init)
    click_lines = read_lines(clk) if clk.exists() else None
    rows = []
    for i, raw in enumerate(lines):
        tok = raw.split()
        if not tok:
            continue
        idx = [t for t in tok[1:] if t != "-1"]
        if click_lines is not None:
            if i >= len(click_lines):
                raise DataFormatError(clk, f"has {len(click_lines)} lines but {init.name} has more", i + 1)
            c = click_lines[i].split()[1:]
            if len(c) < len(idx):
                raise DataFormatError(clk, f"{len(c)} clicks for {len(idx)} documents", i + 1)
        else:
            c = ["0"] * len(idx)
        for p, (d, cc) in enumerate(zip(idx, c), start=1):
            rows.append((i, tok[0], d, p, cc))
    df = pd.DataFrame(rows, columns=["session_id", "query_id", "doc_id", "position", "click"])
    log, notes = frame_to_log(df, name)
    if click_lines is None:
        notes.append("no train/train.clicks: all clicks are 0 (the graph does not need clicks)")
    return log, notes
