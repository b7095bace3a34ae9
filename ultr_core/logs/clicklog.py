"""The one click-log table type.

A :class:`ClickLog` is a pandas DataFrame with one row per (session, displayed or
candidate document) and a documented schema, plus a small metadata dict (how it was
made).  Simulated logs and user logs share it; every algorithm and the
identifiability toolkit read it.

Schema (:data:`SCHEMA`; required columns first):

==================  =========  ==============================================================
column              dtype      meaning
==================  =========  ==============================================================
session_id          int64      one impression of a ranked list
query_id            int64      the query of the session
doc_id              int64      the document's identity: for simulated logs the split's integer
                               ``doc_ids`` when it has them (one-hot data: a document recurs
                               across queries), else the split row (each query–document
                               feature vector is its own document)
row                 int64      optional, simulated logs: row of the dataset split the log was
                               simulated on (features are ``split.features[row]``)
position            int16      1-based rank in the logged list
shown               bool       displayed (False for candidates below a top-k cut-off)
click               int8       0/1; always 0 when ``shown`` is False
context             int32      optional context type (contextual PBM); bias factor with position
label               int8       optional true graded label (evaluation only)
true_relevance      float32    optional true relevance probability r (evaluation only)
true_observation    float32    optional true observation probability o (evaluation only)
==================  =========  ==============================================================

Logs are saved and loaded as Parquet (metadata kept in the file's key-value metadata)
or CSV (metadata lost).  Nothing is ever unpickled.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError, DataFormatError, show

__all__ = ["ClickLog", "SCHEMA", "REQUIRED", "RANGES", "MAX_POSITION", "SHOWN_TEXT", "NO_CLICKS", "not_decimal",
           "check_roles",
           "check_mapping"]

SCHEMA = {
    "session_id": "int64", "query_id": "int64", "doc_id": "int64", "row": "int64", "position": "int16",
    "shown": "bool", "click": "int8", "context": "int32", "label": "int8",
    "true_relevance": "float32", "true_observation": "float32",
}
REQUIRED = ("session_id", "query_id", "doc_id", "position", "shown", "click")
#: allowed values of the columns that are narrowed on the way in (checked **before** the cast, so
#: click = 257 or position = 65537 can never wrap into a valid-looking 1; labels follow the LETOR rule)
MAX_POSITION = 10_000
#: the one rule for a ``shown`` flag in every reader (pandas, DuckDB, Dask): 0/1 or true/false, nothing else
SHOWN_TEXT = {"0": 0, "1": 1, "true": 1, "false": 0}
#: the one message for a log whose training sessions hold no click: the click-model comparison and the held-out
#: repair say it alike, on every page and on the CLI (no result without data, issue #49)
NO_CLICKS = ("the log has no clicks in its training sessions: no click model and no repair can be judged by its "
             "clicks (no result without data)")


def not_decimal(values: pd.Series) -> pd.Series:
    """Where a position is not written in decimal digits (``0x2``, ``2.0``, ``1e0``): the rule every reader
    applies (DuckDB's is the same regular expression on the trimmed text)."""
    return values.notna() & ~values.astype(str).str.fullmatch(r"\s*[0-9]+\s*")
RANGES = {"position": (1, MAX_POSITION), "click": (0, 1), "context": (0, 2 ** 31 - 1), "label": (0, 31)}
_META_KEY = b"ultr_core.meta"
#: values a Parquet click log read from a local path may hold (a simulated log of 60 M rows × 12 columns)
MAX_FILE_CELLS = 720_000_000


def _check_range(values: pd.Series, col: str, source: str) -> None:
    """Refuse values a narrowing cast to :data:`SCHEMA`'s dtype would wrap (e.g. click 257 → 1, label
    200 → −56), naming the column, the first bad row and the allowed range.

    >>> _check_range(pd.Series([1, 0, 257]), "click", "log.csv")
    Traceback (most recent call last):
    ...
    ultr_core.errors.DataFormatError: log.csv: column 'click' must hold values from 0 to 1 (row 2: 257)
    """
    kind = SCHEMA[col]
    if not kind.startswith("int") or not len(values):
        return
    lo, hi = RANGES.get(col, (np.iinfo(kind).min, np.iinfo(kind).max))
    v = values.to_numpy()
    bad = (v < lo) | (v > hi)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        rule = " (positions are 1-based)" if col == "position" and v[i] < 1 else ""
        raise DataFormatError(source, f"column {col!r} must hold values from {lo:,} to {hi:,}{rule} "
                                      f"(row {i}: {show(v[i])})")


#: what a column cannot be: a bias factor is not the outcome, the query or the document; a document is not
#: the outcome, the position or the session (they would make every verdict trivially "identifiable")
NOT_A_BIAS = ("click", "shown", "query_id", "doc_id", "session_id")
NOT_A_DOCUMENT = ("click", "shown", "position", "session_id")


def check_roles(bias, doc_columns=None) -> None:
    """Refuse a bias-factor or document column that is the click, query, document, position or session column.

    >>> check_roles(["position"], ["f1"])
    >>> check_roles(["click"])
    Traceback (most recent call last):
    ...
    ultr_core.errors.ConfigError: bias: 'click' cannot be a bias factor (it is the click, query, document or session
    column); use position or a display column such as a context
    """
    twice = [b for b in dict.fromkeys(bias) if list(bias).count(b) > 1]
    if twice:
        raise ConfigError("bias", f"{twice[0]!r} is named twice; name each bias-factor column once")
    bad = [b for b in bias if b in NOT_A_BIAS]
    if bad:
        raise ConfigError("bias", f"{bad[0]!r} cannot be a bias factor (it is the click, query, document or session "
                                  "column); use position or a display column such as a context")
    bad = [c for c in doc_columns or () if c in NOT_A_DOCUMENT]
    if bad:
        raise ConfigError("doc_columns", f"{bad[0]!r} cannot identify a document (it is the click, shown, position "
                                         "or session column); use the columns that describe the document")
    both = [c for c in doc_columns or () if c in bias]
    if both:
        raise ConfigError("doc_columns", f"{both[0]!r} is a bias factor and a document column at once; choose one")


def check_mapping(columns: dict) -> None:
    """Refuse a mapping that sends two file columns onto one schema column (the second would silently win)."""
    seen = {}
    for src, tgt in columns.items():
        if tgt in seen:
            raise ConfigError("columns", f"{seen[tgt]!r} and {src!r} are both mapped to {tgt!r}; map one column "
                                         "to each name")
        seen[tgt] = src


@dataclass(frozen=True)
class ClickLog:
    """A validated click log (see the module docstring for the schema)."""

    frame: pd.DataFrame
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "frame", self._validated(self.frame, "click log"))

    @staticmethod
    def _validated(df: pd.DataFrame, source: str) -> pd.DataFrame:
        if not isinstance(df, pd.DataFrame):
            raise DataFormatError(source, f"expected a pandas DataFrame, got {type(df).__name__}")
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            raise DataFormatError(source, f"missing column(s) {', '.join(missing)}; a click log needs "
                                          f"{', '.join(REQUIRED)}")
        out = {}
        for col in df.columns:
            if col not in SCHEMA:
                out[col] = df[col]
                continue
            s = df[col]
            kind = SCHEMA[col]
            if (kind != "bool" and pd.api.types.is_integer_dtype(s.dtype) and kind.startswith("int")) or \
                    (kind == "bool" and pd.api.types.is_bool_dtype(s.dtype)) or \
                    (kind.startswith("float") and pd.api.types.is_float_dtype(s.dtype) and not s.isna().any()):
                _check_range(s, col, source)
                out[col] = s.astype(kind)     # the right kind and in range: a lossless cast
                continue
            if s.isna().any():
                raise DataFormatError(source, f"column {col!r} has missing values "
                                              f"(first at row {int(np.flatnonzero(s.isna().to_numpy())[0])})")
            if kind == "bool":               # one rule with the out-of-core reader: 0/1 or true/false
                vals = pd.to_numeric(s, errors="coerce") if pd.api.types.is_numeric_dtype(s.dtype) else \
                    s.astype(str).str.strip().str.lower().map(SHOWN_TEXT)
                if vals.isna().any() or not vals.isin([0, 1]).all():
                    raise DataFormatError(source, f"column {col!r} must hold 0/1 or true/false")
                out[col] = vals.astype(bool)
                continue
            vals = pd.to_numeric(s, errors="coerce")
            if vals.isna().any():
                bad = int(np.flatnonzero(vals.isna().to_numpy())[0])
                raise DataFormatError(source, f"column {col!r} is not numeric (row {bad}: {s.iloc[bad]!r})")
            if kind.startswith("int") and not np.all(np.mod(vals.to_numpy(dtype=float), 1) == 0):
                raise DataFormatError(source, f"column {col!r} must hold whole numbers")
            _check_range(vals, col, source)
            out[col] = vals.astype(kind)
        frame = pd.DataFrame(out)
        if len(frame):
            if (frame["position"] < 1).any():
                raise DataFormatError(source, "positions are 1-based: found a position below 1")
            if not frame["click"].isin([0, 1]).all():
                raise DataFormatError(source, "column 'click' must hold 0 or 1")
            if (frame["click"].astype(bool) & ~frame["shown"]).any():
                raise DataFormatError(source, "a row is clicked but not shown")
        return frame.reset_index(drop=True)

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.frame)

    @property
    def n_sessions(self) -> int:
        return int(self.frame["session_id"].nunique())

    @property
    def bias_columns(self) -> list[str]:
        """The default bias factor: position, and context when the log has contexts."""
        return ["context", "position"] if "context" in self.frame else ["position"]

    @property
    def has_truth(self) -> bool:
        return {"true_relevance", "true_observation"} <= set(self.frame.columns)

    def shown(self) -> pd.DataFrame:
        return self.frame[self.frame["shown"]]

    def ctr_by_position(self) -> pd.DataFrame:
        """Click-through rate per position over shown rows, with its binomial standard error
        and, when the truth is known, the mean true click probability r·o."""
        df = self.shown()
        g = df.groupby("position")
        out = pd.DataFrame({"impressions": g.size(), "clicks": g["click"].sum()})
        out["ctr"] = out["clicks"] / out["impressions"]
        out["se"] = np.sqrt(out["ctr"] * (1 - out["ctr"]) / out["impressions"])
        if self.has_truth:
            p = df["true_relevance"].to_numpy(np.float64) * df["true_observation"].to_numpy(np.float64)
            out["expected_ctr"] = pd.Series(p, index=df.index).groupby(df["position"]).mean()
        return out.reset_index()

    def true_observation_curve(self) -> np.ndarray | None:
        """Mean true observation probability per position over shown rows (None without truth)."""
        if "true_observation" not in self.frame:
            return None
        df = self.shown()
        return df.groupby("position")["true_observation"].mean().to_numpy()

    def resample_sessions(self, seed: int) -> "ClickLog":
        """A bootstrap replicate: as many sessions as the log has, drawn with replacement (whole
        sessions, rows in their order), renumbered 0, 1, …  Seeds that are promised to vary a
        result vary the data this way.

        >>> import pandas as pd
        >>> log = ClickLog(pd.DataFrame({"session_id": [5, 5, 9], "query_id": [1, 1, 2], "doc_id": [1, 2, 3],
        ...                              "position": [1, 2, 1], "shown": True, "click": [1, 0, 0]}))
        >>> b = log.resample_sessions(seed=1)
        >>> b.n_sessions, sorted(b.frame.groupby("session_id").size().tolist()) in ([1, 2], [2, 2], [1, 1])
        (2, True)
        """
        f = self.frame
        sid = f["session_id"].to_numpy()
        order = np.argsort(sid, kind="stable")
        s = sid[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        lens = np.diff(np.r_[starts, len(s)])
        pick = np.random.default_rng(seed).integers(0, len(starts), len(starts))
        n = lens[pick]
        offset = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        rows = order[np.repeat(starts[pick], n) + offset]
        out = f.iloc[rows].reset_index(drop=True)
        out["session_id"] = np.repeat(np.arange(len(pick), dtype=f["session_id"].dtype), n)
        return ClickLog._trusted(out, self.meta)

    def file_doc_ids(self, doc_ids) -> np.ndarray:
        """The file's own document ids of the internal ``doc_ids`` where the log keeps them (an uploaded log's
        ``doc_key``), else ``doc_ids`` as they are.

        >>> log = ClickLog(pd.DataFrame({"session_id": [0, 0], "query_id": 0, "doc_id": [3, 4], "position": [1, 2],
        ...                              "shown": True, "click": [1, 0], "doc_key": ["a", "b"]}))
        >>> log.file_doc_ids([4, 3]).tolist()
        ['b', 'a']
        """
        if "doc_key" not in self.frame:
            return np.asarray(doc_ids)
        key = self.frame.drop_duplicates("doc_id").set_index("doc_id")["doc_key"]
        return key.reindex(doc_ids).to_numpy()

    def sample(self, n: int = 50, seed: int = 0) -> pd.DataFrame:
        n = min(n, len(self.frame))
        return self.frame.sample(n=n, random_state=seed).sort_values(["session_id", "position"])

    # ------------------------------------------------------------------ I/O
    def to_parquet(self, path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.Table.from_pandas(self.frame, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[_META_KEY] = json.dumps(self.meta, default=str).encode()
        pq.write_table(table.replace_schema_metadata(meta), path)

    def to_parquet_bytes(self) -> bytes:
        import io
        buf = io.BytesIO()
        self.to_parquet(buf)
        return buf.getvalue()

    def to_csv(self, path=None):
        return self.frame.to_csv(path, index=False)

    @classmethod
    def from_parquet(cls, path) -> "ClickLog":
        from ultr_core.logs.bounds import read_parquet_bounded
        table = read_parquet_bounded(path, str(path), max_cells=MAX_FILE_CELLS)   # a local file: any size,
        # but its dictionaries are still sized before decoding
        raw = (table.schema.metadata or {}).get(_META_KEY)
        meta = json.loads(raw) if raw else {}
        return cls._from_frame(table.to_pandas(), meta, str(path))

    @classmethod
    def from_csv(cls, path, sep: str = ",") -> "ClickLog":
        try:
            df = pd.read_csv(path, sep=sep)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise DataFormatError(str(path), f"not a readable CSV file ({e})") from None
        return cls._from_frame(df, {}, str(path))

    @classmethod
    def _from_frame(cls, df, meta, source):
        """Validate ``df`` naming ``source`` in errors (instead of the generic name)."""
        return cls._trusted(cls._validated(df, source), meta)

    @classmethod
    def _trusted(cls, frame: pd.DataFrame, meta: dict) -> "ClickLog":
        """Wrap a frame built by this library with the schema's dtypes (no re-validation)."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "frame", frame)
        object.__setattr__(obj, "meta", dict(meta))
        return obj

    @classmethod
    def load(cls, path) -> "ClickLog":
        path = Path(path)
        if path.suffix.lower() in (".parquet", ".pq"):
            return cls.from_parquet(path)
        if path.suffix.lower() in (".csv", ".tsv", ".txt"):
            return cls.from_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",")
        raise DataFormatError(str(path), "unknown file type: use .parquet, .csv or .tsv")

    def __repr__(self) -> str:
        return f"ClickLog(rows={len(self.frame)}, sessions={self.n_sessions}, clicks={int(self.frame['click'].sum())})"
