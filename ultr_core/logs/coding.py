"""Coding of bias factors and documents: value tuples of one or more columns → integer codes.

Convention (stated once, used by every IG construction):

* Each column is factorised on its own (sorted values); the codes of several columns are
  combined **pairwise, re-factorising after every column**, so the combined key never
  exceeds ``n_rows × levels`` and cannot overflow ``int64`` (an earlier mixed-radix product
  over all columns did, past 2⁶³, and silently produced garbage labels).
* A **missing value** (NaN, None, empty cell read as NaN) is its own explicit level,
  ``(missing)`` in labels, sorted after every real value of its column.  It is never merged
  with another value, so the result does not depend on the order of the columns.
* Codes follow the lexicographic order of the value tuples, and the returned key table
  decodes every code back to the real values (taken from the first row with that code).

>>> import pandas as pd
>>> codes, keys = factor_codes(pd.DataFrame({"p": [2, 1, 2], "v": ["b", None, "b"]}), ["p", "v"])
>>> codes.tolist()
[1, 0, 1]
>>> keys["p"].tolist(), keys["v"].isna().tolist()
([1, 2], [True, False])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError

__all__ = ["factor_codes", "group_codes", "lookup_codes", "MISSING", "format_value", "tuple_labels"]

#: how a missing value of a bias or document column is shown
MISSING = "(missing)"
_LIMIT = 2 ** 62


def _column_codes(values) -> tuple[np.ndarray, int]:
    """Sorted codes of one column, missing values as the last level."""
    codes, uniq = pd.factorize(values, sort=True, use_na_sentinel=True)
    codes = np.asarray(codes, np.int64)
    n = len(uniq)
    miss = codes < 0
    if miss.any():
        codes[miss] = n
        n += 1
    return codes, n


def _order_codes(values) -> tuple[np.ndarray, int]:
    """Order-preserving codes of one column: an integer column's offsets from its minimum when their range fits
    (no hashing; the final compression below makes them dense), else :func:`_column_codes`."""
    values = np.asarray(values)
    if np.issubdtype(values.dtype, np.integer) and len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo + 1 < _LIMIT and hi < 2 ** 63:
            return values.astype(np.int64) - lo, hi - lo + 1
    return _column_codes(values)


def _dense(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense sorted codes of an order-preserving int64 key and the first row of each code.  A key that never
    decreases (a table read in key order, as the log readers' count tables are) is coded by its changes in one
    pass; any other by a sorted hash factorisation."""
    if len(key) and (key[1:] >= key[:-1]).all():
        new = np.empty(len(key), bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        return np.cumsum(new, dtype=np.int64) - 1, np.flatnonzero(new)
    codes, _ = pd.factorize(key, sort=True)
    codes = np.asarray(codes, np.int64)
    return codes, pd.Series(codes).drop_duplicates().sort_values().index.to_numpy()


def factor_codes(frame: pd.DataFrame, cols) -> tuple[np.ndarray, pd.DataFrame]:
    """Integer code of each row's value tuple in ``cols`` and the distinct tuples (one row
    per code, in code order; missing values stay missing).  See the module docstring."""
    cols = [cols] if isinstance(cols, str) else list(cols)
    if not cols:
        raise ConfigError("columns", "at least one column is needed to code factors or documents")
    if not len(frame):
        return np.zeros(0, np.int64), frame[cols].iloc[:0].reset_index(drop=True)
    key, n_levels = _order_codes(frame[cols[0]].to_numpy())
    for c in cols[1:]:
        codes, n = _order_codes(frame[c].to_numpy())
        if n_levels * n >= _LIMIT:          # make the key so far dense first
            key = _dense(key)[0]
            n_levels = int(key.max()) + 1
        if n_levels * n >= _LIMIT:          # then the column
            codes, n = _column_codes(frame[c].to_numpy())
        if n_levels * n >= _LIMIT:          # cannot happen below 2³¹ rows
            raise ConfigError("columns", f"{n_levels:,} × {n:,} factor levels exceed the 2⁶² code range")
        key, n_levels = key * n + codes, n_levels * n
    key, first = _dense(key)
    return key, frame[cols].iloc[first].reset_index(drop=True)


def group_codes(frame: pd.DataFrame, cols) -> tuple[np.ndarray, int]:
    """Dense codes of the value tuples in ``cols`` in first-seen order, and their number: the groups of
    :func:`factor_codes` (the same partition, missing values their own level) without sorting them or keeping
    their values — for a count of groups."""
    cols = [cols] if isinstance(cols, str) else list(cols)
    key = None
    for c in cols:
        codes, _ = pd.factorize(frame[c].to_numpy(), use_na_sentinel=False)
        codes = np.asarray(codes, np.int64)
        key = codes if key is None else pd.factorize(key * (int(codes.max(initial=0)) + 1) + codes)[0]
    if key is None or not len(key):
        return np.zeros(0, np.int64), 0
    return np.asarray(key, np.int64), int(key.max(initial=-1)) + 1


def lookup_codes(frame: pd.DataFrame, keys: pd.DataFrame) -> np.ndarray:
    """Row index in ``keys`` of every row's value tuple of ``frame`` (over ``keys``' columns);
    −1 where absent.  Missing values match a missing key, as in :func:`factor_codes`."""
    cols = list(keys.columns)
    table = keys.reset_index(drop=True).assign(_code=np.arange(len(keys)))
    merged = frame[cols].reset_index(drop=True).merge(table, on=cols, how="left", sort=False)
    return merged["_code"].fillna(-1).to_numpy(np.int64)


def format_value(v) -> str:
    """A factor value as text: ``(missing)`` for NaN/None, integers without ``.0``, numpy
    scalars without their type repr."""
    if v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT:
        return MISSING
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _texts(col: pd.Series) -> list[str]:
    """:func:`format_value` of every value of one column; an integer column (which holds no missing value) in one
    vectorised conversion."""
    if isinstance(col.dtype, np.dtype) and np.issubdtype(col.dtype, np.integer):
        return col.to_numpy().astype(str).tolist()
    return [format_value(v) for v in col.tolist()]


def tuple_labels(keys: pd.DataFrame) -> list[str]:
    """``col=value`` labels of a key table (one column) or ``(a=…, b=…)`` (several)."""
    cols = list(keys.columns)
    vals = [_texts(keys[c]) for c in cols]
    if len(cols) == 1:
        return [f"{cols[0]}={v}" for v in vals[0]]
    parts = [[f"{c}={x}" for x in v] for c, v in zip(cols, vals)]
    return ["(" + ", ".join(t) + ")" for t in zip(*parts)]
