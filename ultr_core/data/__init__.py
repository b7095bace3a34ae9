"""Ranking data: the arrays every other package reads (first layer above :mod:`ultr_core.errors`).

* :mod:`.dataset` — :class:`RankingData` (queries × candidates × features, graded labels) and
  :class:`LTRDataset` (train / valid / test);
* :mod:`.loaders` — LETOR / SVMlight (MQ2008), LightGBM (the Yahoo! sample) and ULTRA folders;
* :mod:`.synthetic` — the built-in synthetic LETOR set and the identifiability papers' layouts;
* :mod:`.preprocessing` — per-query and global feature normalisation;
* :mod:`.roots`, :mod:`.sources` — where datasets live and :func:`load_dataset` by spec string;
* :mod:`.archives` — ULTRA folders uploaded as zip / tar archives, unpacked with a size limit.

>>> from ultr_core.data import load_dataset
>>> ds = load_dataset("synthetic:40:6")
>>> ds.train.n_queries, int(ds.train.list_sizes.max())
(24, 6)
"""
from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.data.loaders import load_mq2008_fold, load_svmlight, load_ultra, load_yahoo_sample, read_svmlight
from ultr_core.data.roots import available_datasets, dataset_spec
from ultr_core.data.sources import load_dataset
from ultr_core.data.synthetic import make_identifiability_data, make_paper_identifiability_data, make_synthetic_ltr

__all__ = ["LTRDataset", "RankingData", "load_dataset", "available_datasets", "dataset_spec", "read_svmlight",
           "load_svmlight", "load_mq2008_fold", "load_yahoo_sample", "load_ultra", "make_synthetic_ltr",
           "make_identifiability_data", "make_paper_identifiability_data"]
