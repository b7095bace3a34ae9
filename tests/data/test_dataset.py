import numpy as np
import pytest

from ultr_core.data.dataset import LTRDataset, RankingData, concat_ranges
from ultr_core.data.preprocessing import normalize, query_minmax
from ultr_core.data.synthetic import make_identifiability_data, make_synthetic_ltr, position_blocks


def small():
    X = np.array([[1, 2], [3, 4], [5, 6], [0, 0], [2, 2]], np.float32)
    return RankingData(X, [7, 7, 7, 9, 9], [0, 1, 2, 0, 1])


def test_offsets_and_padding():
    d = small()
    assert d.n_queries == 2 and list(d.offsets) == [0, 3, 5]
    assert list(d.query_ids) == [7, 9] and list(d.list_sizes) == [3, 2]
    M, mask = d.padded(d.labels, fill=-1)
    assert M.tolist() == [[0, 1, 2], [0, 1, -1]]
    assert mask.tolist() == [[True, True, True], [True, True, False]]


def test_rejects_bad_arrays():
    with pytest.raises(ValueError, match="contiguous"):
        RankingData(np.zeros((3, 1)), [1, 2, 1], [0, 0, 0])
    with pytest.raises(ValueError, match="NaN"):
        RankingData(np.array([[np.nan]]), [1], [0])
    with pytest.raises(ValueError, match="non-negative"):
        RankingData(np.zeros((1, 1)), [1], [-1])
    with pytest.raises(ValueError, match="one entry per"):
        RankingData(np.zeros((2, 1)), [1], [0, 0])


def test_concat_ranges_matches_loop():
    starts, ends = np.array([5, 0, 9]), np.array([8, 2, 9])
    expect = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
    assert concat_ranges(starts, ends).tolist() == expect.tolist()


def test_subset_queries():
    d = small().subset_queries(np.array([1]))
    assert d.n_queries == 1 and d.labels.tolist() == [0, 1]


def test_query_minmax_by_hand():
    Z = query_minmax(small())
    assert np.allclose(Z[:3], [[0, 0], [0.5, 0.5], [1, 1]])
    assert np.allclose(Z[3:], [[0, 0], [1, 1]])


def test_normalize_uses_train_statistics(synthetic):
    n = normalize(synthetic, "minmax")
    assert n.train.features.min() == 0 and n.train.features.max() == pytest.approx(1)
    z = normalize(synthetic, "zscore")
    assert np.allclose(z.train.features.mean(axis=0), 0, atol=1e-4)
    with pytest.raises(ValueError, match="unknown normalisation"):
        normalize(synthetic, "bogus")


def test_synthetic_generator_is_seeded_and_graded():
    a, b = make_synthetic_ltr(seed=3), make_synthetic_ltr(seed=3)
    assert np.array_equal(a.train.features, b.train.features)
    assert not np.array_equal(a.train.features, make_synthetic_ltr(seed=4).train.features)
    assert set(np.unique(a.train.labels)) == {0, 1, 2, 3, 4}
    assert (a.train.n_queries, a.valid.n_queries, a.test.n_queries) == (300, 100, 100)
    # the hidden function is non-linear but learnable: a linear fit explains some but not all
    X, y = a.train.features, a.train.labels
    coef, *_ = np.linalg.lstsq(np.c_[X, np.ones(len(X))], y, rcond=None)
    r2 = 1 - np.var(y - np.c_[X, np.ones(len(X))] @ coef) / np.var(y)
    assert 0.05 < r2 < 0.9


def test_position_blocks():
    assert [b.tolist() for b in position_blocks(2)] == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
    assert sum(len(b) for b in position_blocks(4)) == 10
    with pytest.raises(ValueError):
        position_blocks(11)


def test_identifiability_data_shape():
    d = make_identifiability_data(n_components=2, seed=1)
    assert d.n_queries == 1150 and d.n_rows == 11500 and d.n_features == 0
    assert len(np.unique(d.doc_ids)) == 10_000          # every document is used
    pos = np.tile(np.arange(1, 11), 1150)
    first = np.isin(d.doc_ids, d.doc_ids[pos <= 5])
    second = np.isin(d.doc_ids, d.doc_ids[pos > 5])
    assert not np.any(first & second)                   # blocks never share a document


def test_ltrdataset_checks_widths():
    d = small()
    with pytest.raises(ValueError, match="different feature counts"):
        LTRDataset("x", d, d, d.with_features(np.zeros((5, 3), np.float32)))


def test_errors_survive_pickling():
    import pickle

    from ultr_core.errors import ConfigError, DataFormatError
    e = pickle.loads(pickle.dumps(DataFormatError("f.txt", "bad token", 3)))
    assert (e.source, e.problem, e.line, str(e)) == ("f.txt", "bad token", 3, "f.txt, line 3: bad token")
    c = pickle.loads(pickle.dumps(ConfigError("topk", "needs a cut-off")))
    assert (c.field, str(c)) == ("topk", "topk: needs a cut-off")
