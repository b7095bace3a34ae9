import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from ultr_core.evaluation.metrics import arp, average_precision, click_mse, mcc, ndcg, observation_curve_error


def test_ndcg_by_hand():
    # labels [2,0,1], scores put them in order [0,1,2]: DCG = 1/log2(3) + 3/log2(4)
    scores, labels, off = np.array([.1, .3, .2]), np.array([2, 0, 1]), np.array([0, 3])
    dcg = 1 / np.log2(3) + 3 / 2
    idcg = 3 + 1 / np.log2(3)
    assert ndcg(scores, labels, off, k=3) == pytest.approx(dcg / idcg)
    assert ndcg(scores, labels, off, k=1) == pytest.approx(0.0)
    assert average_precision(scores, labels, off) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert arp(scores, labels, off) == pytest.approx(2.5)


def test_queries_without_relevant_documents_are_excluded():
    scores = np.array([.9, .1, .5, .4])
    labels = np.array([1, 0, 0, 0])
    off = np.array([0, 2, 4])
    q = ndcg(scores, labels, off, k=10, per_query=True)
    assert q[0] == 1.0 and np.isnan(q[1])
    assert ndcg(scores, labels, off) == 1.0
    assert np.isnan(ndcg(scores[2:], labels[2:], np.array([0, 2])))


def test_ndcg_matches_scikit_learn():
    rng = np.random.default_rng(0)
    Q, L = 200, 12
    labels = rng.integers(0, 5, size=(Q, L))
    scores = rng.normal(size=(Q, L))
    keep = labels.max(axis=1) > 0
    off = np.arange(0, Q * L + 1, L)
    for k in (1, 3, 5, 10):
        ours = ndcg(scores.ravel(), labels.ravel(), off, k=k, per_query=True)
        ref = [ndcg_score([2.0 ** labels[i] - 1], [scores[i]], k=k) for i in range(Q) if keep[i]]
        assert np.allclose(ours[keep], ref)


def test_ragged_lists_match_per_query_loop():
    rng = np.random.default_rng(1)
    sizes = rng.integers(1, 9, size=50)
    off = np.concatenate([[0], np.cumsum(sizes)])
    labels = rng.integers(0, 3, size=off[-1])
    scores = rng.normal(size=off[-1])
    per = average_precision(scores, labels, off, per_query=True)
    for i in range(50):
        y = labels[off[i]:off[i + 1]][np.argsort(-scores[off[i]:off[i + 1]])] >= 1
        if y.sum() == 0:
            assert np.isnan(per[i])
        else:
            prec = np.cumsum(y) / np.arange(1, len(y) + 1)
            assert per[i] == pytest.approx(prec[y].mean())


def test_mcc_and_errors():
    assert mcc([1, 2, 3], [2, 4, 6]) == pytest.approx(1)
    assert mcc([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    assert np.isnan(mcc([1, 1, 1], [1, 2, 3]))
    assert click_mse([0.5, 0.5], [0.0, 1.0]) == pytest.approx(0.25)
    assert observation_curve_error([2, 1], [1, 0.5]) == 0
    assert observation_curve_error([1, 0.6], [1, 0.5]) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        ndcg(np.array([np.nan]), np.array([1]), np.array([0, 1]))


def test_interval_bars_start_at_zero_and_intervals_stay_in_the_metrics_range():
    import pandas as pd

    from ultr_core.app.figures import clip_interval, interval_bar_figure, metric_range
    summ = pd.DataFrame({"algorithm": ["DLA", "Naive"], "ndcg@10": [0.93, 0.944],
                         "ndcg@10_lo": [0.90, 0.91], "ndcg@10_hi": [0.96, 1.02]})
    fig = interval_bar_figure(summ, "algorithm", "ndcg@10", title="t")
    lo, hi = fig.layout.yaxis.range
    assert lo == 0 and 1.0 < hi < 1.2                     # bars from 0: a 0.014 gap is not magnified
    bar = fig.data[0]
    assert bar.y[1] + bar.error_y.array[1] == pytest.approx(1.0)      # 1.02 clipped to nDCG's bound
    assert metric_range("mcc") == (-1.0, 1.0) and metric_range("arp") is None
    np.testing.assert_allclose(clip_interval("mcc", [-1.3, 0.2], [0.5, 1.1]), [[-1.0, 0.2], [0.5, 1.0]])


def test_a_sweep_of_one_value_is_drawn_as_bars_from_zero():
    """Compare with one swept value: bars with intervals (axis from 0), not faint lone points;
    two values: lines with bands."""
    import pandas as pd

    from ultr_core.app.figures import sweep_figure
    one = pd.DataFrame({"algorithm": ["CLD", "IPS"], "click.topk": [3, 3], "ndcg@3": [0.86, 0.87],
                        "ndcg@3_lo": [0.85, 0.86], "ndcg@3_hi": [0.87, 0.88]})
    fig = sweep_figure(one, "click.topk", "ndcg@3")
    assert [t.type for t in fig.data] == ["bar"] and fig.layout.yaxis.range[0] == 0
    assert "= 3" in fig.layout.title.text
    two = pd.concat([one, one.assign(**{"click.topk": 5})])
    assert {t.type for t in sweep_figure(two, "click.topk", "ndcg@3").data} == {"scatter"}
    # a count renamed for display (the studies' "cut-off k") keeps its integer ticks; a real-valued sweep does not
    renamed = two.rename(columns={"click.topk": "cut-off k"})
    assert list(sweep_figure(renamed, "cut-off k", "ndcg@3").layout.xaxis.tickvals) == [3, 5]
    real = two.assign(**{"click.topk": two["click.topk"] / 10}).rename(columns={"click.topk": "η"})
    assert sweep_figure(real, "η", "ndcg@3").layout.xaxis.tickvals is None


def test_spearman_within_query_depends_only_on_the_order_inside_queries():
    from scipy.stats import spearmanr

    from ultr_core.evaluation.metrics import spearman_within_query
    rng = np.random.default_rng(0)
    offsets = np.arange(0, 101, 10)
    r = rng.uniform(0.1, 1.0, 100)
    scores = np.log(r) * 3 + np.repeat(rng.normal(0, 5, 10), 10)   # a perfect ranker: log scale, shifted per query
    assert spearman_within_query(scores, r, offsets) == pytest.approx(1.0)
    assert mcc(scores, r) < 0.5                                     # the pooled Pearson calls it poor
    # one query: the ordinary Spearman (scipy, ties averaged)
    s1, r1 = rng.normal(size=12), rng.integers(0, 3, 12).astype(float)
    assert spearman_within_query(s1, r1, [0, 12]) == pytest.approx(spearmanr(s1, r1).statistic)
