"""Uncertainty helpers: t-intervals and seed-aligned paired tests, against hand computation and scipy."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ultr_core.evaluation.stats import mean_ci, paired_differences, paired_test


def test_mean_ci_by_hand():
    # values 1, 2, 3: mean 2, sd 1, 90 % t with 2 df = 2.919986 → half-width 2.919986 / sqrt(3)
    m, lo, hi = mean_ci([1.0, 2.0, 3.0, np.nan], level=0.9)
    assert m == 2.0
    assert hi - m == pytest.approx(2.919986 / np.sqrt(3), rel=1e-6)
    assert m - lo == pytest.approx(hi - m)
    assert np.isnan(mean_ci([4.0])[1]) and np.isnan(mean_ci([])[0])


def test_paired_differences_aligns_seeds_and_matches_scipy():
    rng = np.random.default_rng(0)
    seeds = np.arange(6)
    a, b, c = rng.normal(0.6, 0.05, 6), rng.normal(0.5, 0.05, 6), rng.normal(0.55, 0.05, 6)
    rows = [pd.DataFrame({"method": m, "seed": seeds, "ndcg@1": v, "eta": 1.0}) for m,
            v in (("A", a), ("B", b), ("C", c))]
    df = pd.concat(rows, ignore_index=True).sample(frac=1.0, random_state=1)     # rows shuffled
    df = df[~((df.method == "C") & (df.seed == 5))]                                # C lacks seed 5
    r = paired_differences(df, "A", ["B", "C"], by="eta", ref_label="ours").set_index("comparison")
    assert list(r.index) == ["ours − B", "ours − C"]
    assert r.loc["ours − B", "n"] == 6 and r.loc["ours − C", "n"] == 5
    assert r.loc["ours − B", "mean_diff"] == pytest.approx(float(np.mean(a - b)))
    assert r.loc["ours − B", "p"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert r.loc["ours − C", "p"] == pytest.approx(stats.ttest_rel(a[:5], c[:5]).pvalue)
    assert r.loc["ours − C", "eta"] == 1.0


def test_paired_differences_bad_input_is_named():
    df = pd.DataFrame({"method": ["A", "A", "B"], "seed": [0, 0, 0], "ndcg@1": [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match="two rows of one method and seed"):
        paired_differences(df, "A", ["B"])
    with pytest.raises(KeyError, match="'Z'"):
        paired_differences(df.iloc[1:], "A", ["Z"])
    assert paired_differences(df.iloc[2:], "A", ["B"]).empty                       # no reference: skipped
    assert np.isnan(paired_test([0.5, 0.6], [0.4, 0.5])["p"])                    # constant differences
