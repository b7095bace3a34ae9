import numpy as np
import pytest

from ultr_core.data.loaders import (
    load_lightgbm_split,
    load_mq2008_fold,
    load_svmlight,
    load_ultra,
    load_yahoo_sample,
    save_ultra,
)
from ultr_core.data.synthetic import make_synthetic_ltr
from ultr_core.errors import ConfigError, DataFormatError


# ----------------------------------------------------------------- real files
@pytest.mark.slow
def test_mq2008_all_folds(data_dir):
    seen = set()
    for fold in range(1, 6):
        d = load_mq2008_fold(data_dir / "mq2008", fold)
        assert d.n_features == 46 and d.max_label == 2
        total = sum(s.n_queries for s in d.splits())
        assert total == 784                                   # the readme's 784 queries
        assert not set(d.train.query_ids) & set(d.test.query_ids)
        seen.add(tuple(sorted(d.test.query_ids[:3])))
    assert len(seen) == 5                                     # every fold has its own test part
    d = load_mq2008_fold(data_dir / "mq2008", 1)
    assert d.train.doc_ids[0] == "GX008-86-4444840"
    assert d.train.features[0, 0] == pytest.approx(0.007477)


def test_yahoo_sample(data_dir):
    d = load_yahoo_sample(data_dir / "yahoo_sample")
    assert d.train.n_queries + d.valid.n_queries + d.test.n_queries == 251
    assert d.max_label == 4
    sizes = [int(x) for x in (data_dir / "yahoo_sample" / "rank.test.query").read_text().split()]
    assert d.test.list_sizes.tolist() == sizes
    assert d.train.features[:, 9].max() <= 1


def test_mq2008_part_roundtrips_through_ultra(tmp_path, data_dir):
    part = load_svmlight(data_dir / "mq2008" / "S5.txt", 46)
    from ultr_core.data.dataset import LTRDataset
    ds = LTRDataset("s5", part, part, part)
    save_ultra(ds, tmp_path / "u")
    back = load_ultra(tmp_path / "u")
    assert np.allclose(back.test.features, part.features, atol=1e-5)
    assert back.test.labels.tolist() == part.labels.tolist()
    assert back.test.doc_ids.tolist() == part.doc_ids.tolist()


def test_synthetic_roundtrips_through_ultra(tmp_path):
    ds = make_synthetic_ltr(n_queries=20, seed=1)
    save_ultra(ds, tmp_path)
    back = load_ultra(tmp_path)
    for a, b in zip(ds.splits(), back.splits()):
        assert np.allclose(a.features, b.features, rtol=1e-5, atol=1e-6)
        assert a.labels.tolist() == b.labels.tolist()
        assert a.list_sizes.tolist() == b.list_sizes.tolist()


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("text, problem, line", [
    ("1 qid:1 1:0.5\n0 qid:1 1:0.2 junk\n", "bad token 'junk'", 2),
    ("1 qid:1 1:0.5\n0 1:0.2\n", "missing 'qid:'", 2),
    ("1 qid:1 1:abc\n", "non-numeric value 'abc'", 1),
    ("x qid:1 1:0.5\n", "label 'x' is not a number", 1),
    ("1 qid:q 1:0.5\n", "bad query id", 1),
    ("1 qid:1 1:nan\n", "not finite", 1),
    ("1 qid:1 0:0.5\n", "below the first allowed id", 1),
    ("\n\n", "empty file", None),
    ("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n", "not contiguous", None),
])
def test_svmlight_errors_name_file_line_and_problem(tmp_path, text, problem, line):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    with pytest.raises(DataFormatError) as e:
        load_svmlight(f)
    assert problem in str(e.value) and "bad.txt" in str(e.value)
    assert e.value.line == line


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match="file not found"):
        load_svmlight(tmp_path / "nope.txt")


def test_lightgbm_group_file_errors(tmp_path):
    f = tmp_path / "r.train"
    f.write_text("1 1:0.5\n0 1:0.1\n2 1:0.3\n")
    (tmp_path / "r.train.query").write_text("2\n2\n")
    with pytest.raises(DataFormatError, match="add up to 4 rows but r.train has 3"):
        load_lightgbm_split(f)
    (tmp_path / "r.train.query").write_text("2\nx\n")
    with pytest.raises(DataFormatError, match=r"line 2: group size 'x'"):
        load_lightgbm_split(f)
    (tmp_path / "r.train.query").write_text("1\n2\n")
    d = load_lightgbm_split(f)
    assert d.list_sizes.tolist() == [1, 2]


def _ultra(tmp_path, feature="d0 0:1 1:2\nd1 0:3\n", init="q1 0 1\n", labels="q1 1 0\n", fs=2):
    import json
    (tmp_path / "settings.json").write_text(json.dumps({"feature_size": fs}))
    for split in ("train", "valid", "test"):
        (tmp_path / split).mkdir(exist_ok=True)
        (tmp_path / split / f"{split}.feature").write_text(feature)
        (tmp_path / split / f"{split}.init_list").write_text(init)
        (tmp_path / split / f"{split}.labels").write_text(labels)
    return tmp_path


def test_ultra_reads_minimal_directory(tmp_path):
    d = load_ultra(_ultra(tmp_path, init="q1 1 0 -1\n", labels="q1 0 1\n"))
    assert d.train.features.tolist() == [[3, 0], [1, 2]]      # logged order, -1 padding dropped
    assert d.train.doc_ids.tolist() == ["d1", "d0"]


@pytest.mark.parametrize("kw, problem", [
    (dict(labels="q1 1\n"), "has 1 labels but 2 documents"),
    (dict(labels="q2 1 0\n"), "query 'q2' where"),
    (dict(init="q1 0 5\n"), "document index 5 out of range"),
    (dict(init="q1 0 x\n"), "document index 'x' is not an integer"),
    (dict(feature="d0 0:1 7:2\n"), "feature id 7 ≥ feature_size 2"),
    (dict(feature=""), "empty file"),
    (dict(labels="q1 1 0\nq2 1\n"), "2 queries but"),
])
def test_ultra_inconsistent_files(tmp_path, kw, problem):
    with pytest.raises(DataFormatError, match=problem):
        load_ultra(_ultra(tmp_path, **kw))


def test_ultra_settings_errors(tmp_path):
    with pytest.raises(DataFormatError, match="settings.json"):
        load_ultra(tmp_path)
    (tmp_path / "settings.json").write_text("{not json")
    with pytest.raises(DataFormatError, match="not valid JSON"):
        load_ultra(tmp_path)
    (tmp_path / "settings.json").write_text('{"feature_size": "x"}')
    with pytest.raises(DataFormatError, match="feature_size"):
        load_ultra(tmp_path)


def test_svmlight_upload_in_memory(data_dir):
    from ultr_core.data.loaders import load_svmlight_upload
    raw = (data_dir / "mq2008" / "S1.txt").read_bytes()
    ds = load_svmlight_upload("S1.txt", raw)
    assert sum(s.n_queries for s in ds.splits()) == load_svmlight(data_dir / "mq2008" / "S1.txt").n_queries
    with pytest.raises(DataFormatError, match="up.txt, line 1: bad token"):
        load_svmlight_upload("up.txt", b"1 qid:1 junk\n")
    with pytest.raises(DataFormatError, match="need at least 3"):
        load_svmlight_upload("up.txt", b"1 qid:1 1:0.5\n0 qid:2 1:0.1\n")


def test_a_data_root_name_loads_the_same_dataset_as_its_path(data_dir):
    """``yahoo_sample`` / ``mq2008`` (what presets and links carry) resolve through the data roots."""
    from ultr_core.data.sources import load_dataset
    by_name, by_path = load_dataset("yahoo_sample"), load_dataset(f"yahoo:{data_dir / 'yahoo_sample'}")
    assert by_name.train.n_queries == by_path.train.n_queries > 100
    np.testing.assert_array_equal(by_name.test.features, by_path.test.features)
    mq = load_dataset("mq2008")
    np.testing.assert_array_equal(mq.valid.labels, load_mq2008_fold(data_dir / "mq2008", 1).valid.labels)
    with pytest.raises(ConfigError, match="yahoo_sample"):       # an unknown name lists the names on offer
        load_dataset("yahoo_sampel")
