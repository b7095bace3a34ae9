"""ULTR rankers beside click models on one log with features (issue #47, item 2): every ULTR method trained on the
log's training sessions, every click model fitted on the same sessions, and both scored side by side — held-out
click log-likelihood and perplexity (a ranker through a logistic link, :class:`~ultr_core.clickmodels.scored.
ScoredPBM`) next to agreement with the judges (Spearman, Kendall, nDCG@10 with 90 % intervals over queries) and the
one verdict rule of :func:`~ultr_core.clickmodels.judgement_agreement.judge_verdict`.

The log is a simulated log on a data set with features (its ``row`` column points at the split's feature rows); the
judges are the data set's own editorial labels of the log's pairs (the ``label`` column, e.g. MQ2008's 0–2), or a
judgements file.  The split is the click models' (the first ``split`` of the sessions by id train); a ranker never
sees a test session.
"""
from __future__ import annotations

import io
import time
from typing import TYPE_CHECKING

import numpy as np

from ultr_core.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["rankers_beside_click_models", "rankers_job", "label_judgements", "training_log", "DEFAULT_RANKERS"]

#: the rankers of a comparison without a choice: the naive baseline, position-based IPS and DLA (the estimated
#: propensity, the jointly learned one) — each a record of :data:`~ultr_core.algorithms.specs.ALGORITHM_SPECS`
DEFAULT_RANKERS = ("naive", "ips", "dla")


def label_judgements(frame: pd.DataFrame, name: str = "log"):
    """The log's own editorial labels (``label`` column) of its shown pairs as judgements, read as a qrels file
    is."""
    from ultr_core.logs.judgements import read_judgements
    if "label" not in frame:
        raise ConfigError("judgements", f"{name} has no label column: give a judgements file")
    shown = frame[frame["shown"].astype(bool)] if "shown" in frame else frame      # the pairs click models see
    pairs = shown.groupby(["query_id", "doc_id"], sort=True)["label"].first().reset_index()
    buf = io.StringIO()
    pairs.rename(columns={"label": "grade"}).to_csv(buf, index=False)
    top = int(pairs["label"].max())
    return read_judgements(buf.getvalue().encode(), name=f"{name} labels", grades=(0, max(top, 1)))


def training_log(log, split: float):
    """The log's training sessions (the first ``split`` of its session ids), as the click models split it."""
    from ultr_core.logs.clicklog import ClickLog
    ids = np.unique(log.frame["session_id"].to_numpy())
    cut = int(len(ids) * split)
    if not 0 < cut < len(ids):
        raise ConfigError("split", f"{split} of {len(ids)} sessions leaves no training or no test session")
    return ClickLog(log.frame[log.frame["session_id"].isin(ids[:cut])], dict(log.meta))


def _ranker_scores(result, split_data, frame: pd.DataFrame):
    """score(pair_keys) → the fitted ranker's score of each pair's feature row."""
    pred = np.asarray(result.predict(split_data.features, split_data.offsets), np.float64)
    row = frame.groupby(["query_id", "doc_id"], sort=True)["row"].first()

    def score(pair_keys: pd.DataFrame) -> np.ndarray:
        import pandas as pd
        idx = pd.MultiIndex.from_frame(pair_keys[["query_id", "doc_id"]])
        return pred[row.reindex(idx).to_numpy(np.int64)]
    return score


def rankers_beside_click_models(ds, log, *, algorithms=DEFAULT_RANKERS, models=None, split: float = 0.75,
                                seed: int = 0, base=None, judgements=None,
                                include_prior: bool = False, on_ranker=None, stop=None):
    """:func:`~ultr_core.clickmodels.compare.compare_click_models` of ``models`` on ``log`` with ``algorithms``
    (keys of :data:`~ultr_core.algorithms.config.ALGORITHMS`) trained on its training sessions and ``ds``' features
    (``base``: the TrainConfig whose algorithm and seed are set per ranker), judged by ``judgements`` or the log's
    labels.  A ranker's ``seconds`` are its training and its link's fit.  ``on_ranker(done, total, label)`` after
    each ranker; ``stop`` (an Event) set ends the training early, the rankers done so far judged."""
    from ultr_core.algorithms import ALGORITHMS, TrainConfig, fit
    from ultr_core.clickmodels.compare import compare_click_models
    if "row" not in log.frame:
        raise ConfigError("log", "rankers need the log's feature rows (a `row` column: a log simulated on a data "
                                 "set with features)")
    bad = [a for a in algorithms if a not in ALGORITHMS]
    if bad:
        raise ConfigError("algorithms", f"unknown algorithm {bad[0][:20]!r}; choose from {', '.join(ALGORITHMS)}")
    train_log, split_data = training_log(log, split), ds.split(log.meta.get("split", "train"))
    rankers, seconds = {}, {}
    for i, key in enumerate(algorithms):
        t0 = time.perf_counter()
        result = fit(train_log, ds, (base or TrainConfig()).with_(algorithm=key, seed=seed))
        seconds[key] = time.perf_counter() - t0
        rankers[key] = (f"{ALGORITHMS[key]} (ranker)", _ranker_scores(result, split_data, log.frame))
        if stop is not None and stop.is_set():
            break
        if on_ranker is not None:
            on_ranker(i + 1, len(algorithms), ALGORITHMS[key])
    judged = judgements if judgements is not None else label_judgements(log.frame)
    out = compare_click_models(log.frame, "log", models=models, split=split, judgements=judged,
                               include_prior=include_prior, seed=seed, rankers=rankers)
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    # a ranker's seconds: its training and its link's fit; its colour: the algorithm table's
    return out.with_(rankers={key: m.with_(seconds=round(m.seconds + seconds[key], 3), colour=SPECS_BY_KEY[key].colour,
                                           kind="ranker") for key, m in out.rankers.items()})


def rankers_job(ds, log, algorithms, *, train: dict | None = None, report=None, stop=None):
    """:func:`rankers_beside_click_models` of every click model as a job of the app's pool (the Train page; ``train``:
    TrainConfig fields every ranker shares, its ``seed`` the comparison's): a ``{"done", "total", "model"}`` record
    after each ranker."""
    from ultr_core.algorithms import TrainConfig
    base = TrainConfig(**(train or {}))
    return rankers_beside_click_models(ds, log, algorithms=tuple(algorithms), seed=base.seed, base=base, stop=stop,
                                       on_ranker=lambda d, n, m: report and report({"done": d, "total": n,
                                                                                    "model": m}))
