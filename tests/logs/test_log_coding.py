"""Coding of bias factors and documents (:mod:`ultr_core.logs.coding`): every fast path gives the codes of a plain
sort of the value tuples."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ultr_core.logs.coding import factor_codes, group_codes


def _reference_codes(df: pd.DataFrame, cols: list) -> np.ndarray:
    """Codes by sorting the distinct value tuples in Python (missing last in each column): the convention of
    :mod:`ultr_core.logs.coding`, computed independently of its fast paths."""
    def sort_key(t):
        return tuple((1, 0) if pd.isna(v) else (0, v) for v in t)
    tuples = list(df[cols].itertuples(index=False, name=None))
    order = {t: i for i, t in enumerate(sorted(set(tuples), key=sort_key))}
    return np.array([order[t] for t in tuples], np.int64)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.uint64, np.float64])
@pytest.mark.parametrize("presorted", [True, False])
def test_codes_follow_tuple_order_on_every_path(dtype, presorted):
    # integer columns take the offset path, sorted tables the one-pass path; int8's extremes would overflow a
    # subtraction in int8; uint64 near 2⁶⁴ cannot be offset in int64 and takes the hash path
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    lo, hi = (info.min, info.max) if info else (-5, 5)
    pool = np.array([lo, hi, 0, 1, 2], dtype=dtype) if info else rng.normal(size=5)
    df = pd.DataFrame({"a": rng.choice(pool, 400), "b": rng.choice(pool, 400), "c": rng.integers(0, 3, 400)})
    if presorted:
        df = df.sort_values(["a", "b", "c"], kind="stable").reset_index(drop=True)
    codes, keys = factor_codes(df, ["a", "b", "c"])
    assert (codes == _reference_codes(df, ["a", "b", "c"])).all()
    pd.testing.assert_frame_equal(keys.iloc[codes].reset_index(drop=True), df[["a", "b", "c"]])


@pytest.mark.parametrize("cols", [["a"], ["a", "b"], ["b", "a", "c"]])
def test_group_codes_partition_rows_as_factor_codes_do(cols):
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.integers(0, 4, 300), "b": rng.choice(["x", "y", None], 300),
                       "c": rng.choice([1.5, np.nan], 300)})
    codes, n = group_codes(df, cols)
    sorted_codes, keys = factor_codes(df, cols)
    assert n == len(keys) and codes.min() == 0 and codes.max() == n - 1
    assert (pd.factorize(codes)[0] == pd.factorize(sorted_codes)[0]).all()      # the same groups
