"""``fit(log, dataset, config, on_step, stop)`` for every algorithm, and ``evaluate``.

Click-model learners (:mod:`.learners`) train through the shared loop (:mod:`.loop`); the
selection-bias methods (:mod:`.topk_selection`) are dispatched to :func:`.topk_selection.fit_selection`.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import threading

import numpy as np
import torch

from ultr_core.algorithms.affine import estimated_affine
from ultr_core.algorithms.batches import Batch, TrainContext
from ultr_core.algorithms.config import TrainConfig
from ultr_core.algorithms.data import session_data
from ultr_core.algorithms.loop import FitResult, train_loop
from ultr_core.algorithms.registry import LEARNERS
from ultr_core.algorithms.specs import SPECS_BY_KEY
from ultr_core.algorithms.topk_selection import fit_selection
from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.errors import ConfigError
from ultr_core.evaluation.metrics import mcc, ranking_metrics, spearman_within_query
from ultr_core.logs.clicklog import ClickLog
from ultr_core.simulation.clickmodel import binary_threshold, relevance_probability

__all__ = ["fit", "FitResult", "evaluate", "train_loop"]


@contextlib.contextmanager
def _torch_threads(n: int):
    """Cap torch's intra-op threads during a fit and restore the previous value afterwards."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _batch(rows, candidate, shown, clicks, X_all, labels, width, use_candidates, tau=None):
    """A training batch from (B, L) session arrays, cut to ``width`` positions; with a ``tau``
    table (split row × position) the batch carries ``tau`` (B, L) for HTE-style weighting."""
    rows = rows[:, :width]
    safe = np.maximum(rows, 0)
    mask = np.require((candidate if use_candidates else shown)[:, :width], requirements=["C", "W"])
    b = Batch(X_all[torch.from_numpy(safe)], torch.from_numpy(np.require(clicks[:, :width], np.float32, ["C", "W"])),
              torch.from_numpy(mask), rows=torch.from_numpy(np.ascontiguousarray(rows)))
    if labels is not None:
        b.labels = torch.from_numpy(labels[safe].astype(np.float32))
    if tau is not None:
        cols = np.minimum(np.arange(rows.shape[1]), tau.shape[1] - 1)
        b.tau = torch.from_numpy(tau[safe, cols[None, :]].astype(np.float32))
    return b


def log_click_model(log: ClickLog, what: str = "this method"):
    """The :class:`ClickModelConfig` that produced ``log`` (from its metadata)."""
    from ultr_core.simulation.clickmodel import ClickModelConfig
    meta = log.meta
    if "click_model" not in meta or "seed" not in meta:
        raise ConfigError("log", f"{what} needs a simulated log (its click model is in the log's metadata)")
    return ClickModelConfig.from_meta(meta["click_model"])


def log_simulator(log: ClickLog, dataset: LTRDataset, what: str = "this method"):
    """The fitted :class:`ClickSimulator` that produced ``log`` (rebuilt from its metadata)."""
    from ultr_core.simulation.simulator import ClickSimulator
    return ClickSimulator(log_click_model(log, what), seed=int(log.meta["seed"])).fit(dataset)


def _tau_table(kind: str, log: ClickLog, dataset: LTRDataset, split: RankingData, n_positions: int,
               seed: int) -> np.ndarray:
    from ultr_core.algorithms.hte import estimate_tau, oracle_tau
    sim = log_simulator(log, dataset, "HTE")
    if kind == "true":
        return oracle_tau(sim, split, n_positions)
    return estimate_tau(sim, split, n_positions, n_sessions=log.n_sessions, seed=seed)


#: estimated propensities by (split content, click model, positions, seed): a deterministic ≈ 0.3 s
#: simulation that every method of a comparison needs for the same log and seed (a few dozen floats each)
_PROPENSITY_CACHE: "collections.OrderedDict[tuple, np.ndarray]" = collections.OrderedDict()
_PROPENSITY_CACHE_SIZE = 64


def _estimated_propensity(log: ClickLog, dataset: LTRDataset, split: RankingData, data, seed: int) -> np.ndarray:
    """The log's propensities as the official CLD code estimates them (result randomisation, 10⁶
    sessions: :func:`~ultr_core.simulation.randomisation.randomised_propensity`), computed once per
    process for the same split content, click model, number of positions and seed (read-only)."""
    from ultr_core.simulation.randomisation import randomised_propensity
    cm = log_click_model(log, "estimated propensities")
    digest = hashlib.blake2b(np.ascontiguousarray(split.labels).tobytes(), digest_size=16)
    digest.update(np.ascontiguousarray(split.offsets).tobytes())
    key = (digest.hexdigest(), int(dataset.max_label), repr(cm), int(data.n_positions), int(seed))
    hit = _PROPENSITY_CACHE.get(key)
    if hit is None:
        hit = randomised_propensity(split.labels, split.offsets, dataset.max_label, click=cm,
                                    n_positions=data.n_positions,
                                    rng=np.random.default_rng([seed, 7]))
        hit.setflags(write=False)
        _PROPENSITY_CACHE[key] = hit
        while len(_PROPENSITY_CACHE) > _PROPENSITY_CACHE_SIZE:
            _PROPENSITY_CACHE.popitem(last=False)
    return hit


def fit(log: ClickLog, dataset: LTRDataset, config: TrainConfig, *, on_step=None,
        stop: threading.Event | None = None) -> FitResult:
    """Train ``config.algorithm`` on ``log`` (simulated on a split of ``dataset``).

    Calls ``on_step(record)`` every ``config.eval_every`` steps with the step, the mean
    training losses since the last call, validation nDCG@10 and the current observation
    estimate; returns early (``stopped=True``) when ``stop`` is set.  Deterministic for a seed:
    torch's global RNG is forked and reseeded inside, and threads are capped to ``config.threads``.
    """
    split: RankingData = dataset.split(log.meta.get("split", "train"))
    if split.n_features == 0:
        raise ConfigError("dataset", "feature-based rankers need document features; use the embedding "
                                     "models of the Identifiability page for one-hot data")
    data = session_data(log)
    if data.rows.max() >= split.n_rows:
        raise ConfigError("log", "the log's rows do not belong to this dataset split")
    with torch.random.fork_rng(), _torch_threads(config.threads):
        torch.manual_seed(config.seed)
        rng = np.random.default_rng([config.seed, 3])
        context = TrainContext(true_propensity=data.true_propensity(), click_model=log.meta.get("click_model", {}),
                               convention=log.meta.get("click_model", {}).get("convention", "eye_tracking"),
                               generator=torch.Generator().manual_seed(config.seed), rng=rng, sessions=data)
        context.propensity = (_estimated_propensity(log, dataset, split, data, config.seed)
                              if config.propensity == "estimated" else context.true_propensity)
        context.exposure = lambda curve: log_simulator(log, dataset, "a policy-aware method").exposure(split, curve)
        context.affine = lambda: estimated_affine(log, dataset, split, data=data, seed=config.seed)
        if config.algorithm not in LEARNERS:
            agg = SPECS_BY_KEY[config.algorithm].aggregates           # RankAgg: the IPS ranker it aggregates
            ips = fit(log, dataset, config.with_(algorithm=agg), stop=stop) if agg else None
            return fit_selection(log, dataset, split, data=data, config=config, context=context, on_step=on_step,
                                 stop=stop,
                                 ips=ips)   # CLD, Heckman …
        learner = LEARNERS[config.algorithm](config, split.n_features, data.n_positions, context)
        pool = data.with_clicks() if learner.needs_clicks else np.arange(data.n_sessions)
        if len(pool) == 0:
            raise ConfigError("log", "no session has a click: nothing to learn from")
        wide = learner.uses_labels or learner.sees_candidates          # every logged candidate, shown or not
        width = data.rows.shape[1] if wide else data.n_positions
        X_all = torch.from_numpy(split.features)
        labels = split.labels if learner.uses_labels else None
        state = {"order": rng.permutation(pool), "cursor": 0}
        tau = (_tau_table(learner.tau_kind, log, dataset, split, data.n_positions, config.seed)
               if getattr(learner, "tau_kind", None) else None)

        def next_batch():
            if state["cursor"] + config.batch_size > len(state["order"]):
                state["order"], state["cursor"] = rng.permutation(pool), 0
            idx = state["order"][state["cursor"]:state["cursor"] + config.batch_size]
            state["cursor"] += config.batch_size
            return _batch(data.rows[idx], data.candidate[idx], data.shown[idx], data.clicks[idx],
                          X_all, labels, width, wide, tau)

        if config.clicks == "online":
            draw = log_simulator(log, dataset, "online clicks").online_sampler(split, config.seed)

            def next_batch():                   # noqa: F811 - fresh clicks every step
                d = draw(config.batch_size)
                return _batch(d["rows"], d["mask"], d["shown"], d["clicks"], X_all, labels, width, wide, tau)

        return train_loop(learner, config, next_batch, valid=dataset.valid, on_step=on_step, stop=stop)


def evaluate(result, data: RankingData, *, noise: float | None = 0.1, max_label: int | None = None,
             binary: bool | str = False) -> dict:
    """Test metrics of a fitted ranker: nDCG@1/3/5/10, MAP, ARP and, when ``noise`` is given,
    MCC = Pearson correlation of scores with the true relevance probability r(y) (``mcc``: defined for
    calibrated scores, e.g. the embedding models; not for listwise scores, fixed only up to a shift per
    query and on a log scale) and ``spearman_within_query`` (rank correlation inside queries: defined for
    any ranker).  With
    ``binary`` (a log simulated with binarised relevance) MAP and ARP count grades from
    :func:`~ultr_core.simulation.clickmodel.binary_threshold` as relevant and r(y) is the binarised one."""
    scores = result.predict(data.features, data.offsets)
    top = max_label or max(data.max_label, 1)
    out = ranking_metrics(scores, data, threshold=binary_threshold(top, binary) if binary else 1)
    if noise is not None:
        r = relevance_probability(data.labels, top, noise, binary=binary)
        out["mcc"] = mcc(scores, r)
        out["spearman_within_query"] = spearman_within_query(scores, r, data.offsets)
    return out
