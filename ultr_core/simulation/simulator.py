"""The click simulator: sessions drawn from a dataset, a logging ranker and a click model, as one
vectorised numpy pass per call (conventions in :mod:`ultr_core.simulation`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.errors import ConfigError
from ultr_core.logs.clicklog import ClickLog
from ultr_core.simulation.clickmodel import (
    EYE_TRACKING,
    MAX_LOG_ROWS,
    ClickModelConfig,
    binary_rule,
    position_observation,
    relevance_probability,
)
from ultr_core.simulation.policy import (
    coupling_direction,
    crux_features,
    expected_exposure,
    fit_logging_ranker,
)

__all__ = ["ClickSimulator", "shuffle_within_blocks", "hidden_relevant"]


@dataclass
class ClickSimulator:
    """Simulates click logs on a dataset (sklearn style: construct, :meth:`fit`, :meth:`simulate`).

    ``fit`` trains the logging ranker and, when needed, finds the crux features and draws
    the coupling / context weights; ``simulate`` draws sessions.  Both are seeded.
    """

    config: ClickModelConfig = field(default_factory=ClickModelConfig)
    seed: int = 0

    def fit(self, dataset: LTRDataset) -> "ClickSimulator":
        cfg = self.config
        rng = np.random.default_rng([self.seed, 1])
        self.max_label_ = max(dataset.max_label, 1)
        if cfg.logging == "svm":
            if dataset.n_features == 0:
                raise ConfigError("logging", "the data has no features: use logging='given'")
            self.ranker_weights_ = fit_logging_ranker(dataset.train, cfg.logging_fraction, rng)
        else:
            self.ranker_weights_ = None
        if cfg.coupling > 0:
            if dataset.n_features == 0:
                raise ConfigError("coupling", "individual-level observation needs document features")
            whole = cfg.crux_scaling == "official"
            self.crux_, self.crux_lo_, self.crux_span_ = crux_features(dataset if whole else dataset.train,
                                                                       seed=self.seed)
            u = coupling_direction(len(self.crux_), rng if cfg.coupling_seed is None else cfg.coupling_seed)
            self.coupling_w_ = cfg.coupling * u
        if cfg.n_contexts > 0:
            self.context_z_ = rng.normal(0, 0.35, size=(cfg.n_contexts, 10))
            self.context_w_ = rng.uniform(-1, 1, size=10)
        return self

    # ---------------------------------------------------------------- helpers
    def logged_order(self, data: RankingData) -> tuple[np.ndarray, np.ndarray]:
        """(n_queries, L) matrix of split rows in logged order and its validity mask."""
        if self.ranker_weights_ is None:
            scores = -np.arange(data.n_rows, dtype=np.float64)       # keep the given order
        else:
            scores = data.features.astype(np.float64) @ self.ranker_weights_
        S, mask = data.padded(scores, fill=-np.inf)
        rows, _ = data.padded(np.arange(data.n_rows))
        order = np.argsort(-S, axis=1, kind="stable")
        rows = np.take_along_axis(rows, order, axis=1)
        mask = np.take_along_axis(mask, order, axis=1)
        if self.config.max_list is not None:
            rows, mask = rows[:, :self.config.max_list], mask[:, :self.config.max_list]
        return rows, mask

    @staticmethod
    def document_ids(data: RankingData) -> np.ndarray:
        """Document identity of each split row: integer ``doc_ids`` when the split has them,
        else the row number (see the ClickLog schema)."""
        if data.doc_ids is not None and np.issubdtype(np.asarray(data.doc_ids).dtype, np.integer):
            return np.asarray(data.doc_ids, np.int64)
        return np.arange(data.n_rows, dtype=np.int64)

    def coupling_term(self, data: RankingData) -> np.ndarray:
        """wᵀx′ for every row of ``data`` (0 without coupling)."""
        if self.config.coupling <= 0:
            return np.zeros(data.n_rows)
        Xc = np.clip((data.features[:, self.crux_] - self.crux_lo_) / self.crux_span_, 0, 1)
        if self.config.crux_scaling == "official":
            Xc = 2 * Xc - 1                       # [−1, 1], as normalize_feature.py stores them
        return Xc @ self.coupling_w_

    def exponent_spread(self, data: RankingData) -> dict:
        """How strongly observation depends on the document: mean, std and 5–95 % range of the
        coupling exponent ``1 + wᵀx′`` over the rows of ``data`` (all 1 without coupling).

        At η_c = 0.6 the official scaling gives a std of ≈ 0.74 on the Yahoo! sample; the legacy
        [0, 1] scaling gave 0.15 on the synthetic default."""
        e = 1.0 + self.coupling_term(data)
        if len(e) == 0:
            return {"mean": None, "std": None, "p5": None, "p95": None}
        p5, p95 = np.percentile(e, [5, 95])
        return {"mean": float(e.mean()), "std": float(e.std()), "p5": float(p5), "p95": float(p95)}

    def context_term(self) -> np.ndarray:
        """wᵀz per context id."""
        return self.context_z_ @ self.context_w_

    def observation_curve(self, n_positions: int) -> np.ndarray:
        c = self.config
        return position_observation(n_positions, eta=c.eta, convention=c.convention, topk=c.topk)

    def examination_shown(self, log, n_positions: int) -> tuple[np.ndarray, str]:
        """The examination curve a CTR chart draws beside ``log`` (which this simulator drew) and its name: PBM's
        o_p, or under another user model the log's mean examination per position (it depends on the clicks
        above, so the model has no one curve)."""
        if MODEL_BY_KEY[self.config.user_model].position_only:
            return self.observation_curve(n_positions), "o_p"
        return np.asarray(log.true_observation_curve())[:n_positions], "mean examination"

    def true_ctr(self, log, ctr: pd.DataFrame) -> pd.DataFrame:
        """``ctr`` (:meth:`ClickLog.ctr_by_position`) with ``expected_ctr`` = the users' true click probability per
        position: o·r under the examination hypothesis, o·(ε⁻ + (ε⁺ − ε⁻)·r) under trust bias (the user model's
        ``examined_click``)."""
        if "expected_ctr" not in ctr:
            return ctr
        f = log.shown()
        pos = f["position"].to_numpy(np.int64)
        cls = MODEL_BY_KEY[self.config.user_model].cls
        p = f["true_observation"].to_numpy(np.float64) * cls.examined_click(
            f["true_relevance"].to_numpy(np.float64), self.config.continuation_curve(int(pos.max())), pos)
        means = pd.Series(p).groupby(pos).mean()
        return ctr.assign(expected_ctr=ctr["position"].map(means).to_numpy())

    def exposure(self, data: RankingData, curve: np.ndarray) -> np.ndarray:
        """Per row of ``data``: the expectation of ``curve`` at the position the logging policy shows the row
        (:func:`~ultr_core.simulation.policy.expected_exposure`; 0 for a row the policy never shows)."""
        if not hasattr(self, "max_label_"):
            raise RuntimeError("call fit(dataset) before exposure()")
        c = self.config
        rows, mask = self.logged_order(data)
        curve = np.asarray(curve, np.float64)
        if c.topk is not None:
            curve = curve[:c.topk]
        g = expected_exposure(curve, mask.sum(axis=1), shuffle=c.shuffle, n_blocks=c.shuffle_blocks,
                              intervention=c.intervention, topk=c.topk)
        out = np.zeros(data.n_rows)
        out[rows[mask]] = g[:, :rows.shape[1]][mask]
        return out

    # ---------------------------------------------------------------- simulate
    def draw_sessions(self, data: RankingData, qs: np.ndarray, rng: np.random.Generator,
                      *, rows_q: np.ndarray | None = None, mask_q: np.ndarray | None = None,
                      contexts_q: np.ndarray | None = None) -> dict:
        """Sessions on the queries ``qs`` (positions in ``data``) as (S, L) arrays: ``rows`` (split
        rows in logged order), ``mask`` (a candidate), ``shown``, ``clicks`` (bool), ``obs`` (true
        observation), ``rel`` (true relevance probability) and ``context`` when contexts are on.
        One vectorised draw; :meth:`simulate` and online training (:meth:`online_sampler`) share it."""
        cfg = self.config
        if rows_q is None:
            rows_q, mask_q = self.logged_order(data)
        L = rows_q.shape[1]
        positions = np.arange(1, L + 1)
        rows, mask = rows_q[qs], mask_q[qs]
        if cfg.intervention:                 # LBD §6.3 / Tian et al.: swap position 1 with a random k
            n_shown = mask.sum(axis=1) if cfg.topk is None else np.minimum(mask.sum(axis=1), cfg.topk)
            k = (rng.random(len(qs)) * np.maximum(n_shown, 1)).astype(np.int64)       # 0-based, 0 = no swap
            s_idx = np.arange(len(qs))
            rows = rows.copy()
            rows[s_idx, 0], rows[s_idx, k] = rows[s_idx, k], rows[s_idx, 0].copy()
        if cfg.shuffle > 0:                  # randomised sessions (consumes the generator only when on)
            rows = shuffle_within_blocks(rows, mask, rng, share=cfg.shuffle, n_blocks=cfg.shuffle_blocks)
        lin = self.coupling_term(data)[rows] if cfg.coupling > 0 else 0.0
        out = {}
        if contexts_q is not None:
            out["context"] = contexts_q[qs]
            lin = lin + self.context_term()[out["context"]]
        if cfg.coupling > 0 or contexts_q is not None:
            expo = cfg.eta * np.maximum(lin + 1.0, 0.0)
            base = EYE_TRACKING[np.minimum(positions, 10) - 1] if cfg.convention == "eye_tracking" else 1.0 / positions
            obs = base[None, :] ** expo
            if cfg.topk is not None:
                obs = obs * (positions <= cfg.topk)[None, :]
        else:
            obs = np.broadcast_to(self.observation_curve(L)[None, :], rows.shape)
        rel = relevance_probability(data.labels, self.max_label_, cfg.noise,
                                    binary=binary_rule(cfg.relevance))[np.maximum(rows, 0)]
        shown = mask & ((positions <= cfg.topk)[None, :] if cfg.topk is not None else True)
        shown = np.broadcast_to(shown, rows.shape)
        clicks, obs = MODEL_BY_KEY[cfg.user_model].sampler(rel, shown, obs, gamma=cfg.continuation_curve(L), rng=rng)
        out.update(rows=rows, mask=mask, shown=shown, clicks=clicks,
                   obs=obs, rel=rel)
        return out

    def online_sampler(self, data: RankingData, seed: int = 0):
        """Online click simulation (ULTRA's ``ClickSimulationFeed``): a function ``draw(n)`` that
        picks ``n`` queries uniformly and samples fresh clicks for them on every call, with its own
        seeded generator.  Contexts, when on, are fixed per (query, position) for the sampler."""
        if not hasattr(self, "max_label_"):
            raise RuntimeError("call fit(dataset) before online_sampler()")
        rng = np.random.default_rng([int(seed), 4])
        rows_q, mask_q = self.logged_order(data)
        ctx = (rng.integers(0, self.config.n_contexts, size=rows_q.shape) if self.config.n_contexts else None)

        def draw(n: int) -> dict:
            qs = rng.integers(0, len(rows_q), size=int(n))
            return self.draw_sessions(data, qs, rng, rows_q=rows_q, mask_q=mask_q, contexts_q=ctx)
        return draw

    def simulate(self, data: RankingData, n_sessions: int, *, seed: int | None = None,
                 split: str = "train") -> ClickLog:
        """Draw ``n_sessions`` sessions on ``data``; queries uniformly, clicks ~ Bernoulli(r·o)."""
        if not hasattr(self, "max_label_"):
            raise RuntimeError("call fit(dataset) before simulate()")
        if int(n_sessions) != n_sessions or n_sessions < 1:
            raise ConfigError("n_sessions", f"must be a positive integer, got {n_sessions}")
        if data.n_queries == 0:
            raise ConfigError("data", "the split has no queries")
        cfg = self.config
        rng = np.random.default_rng([self.seed if seed is None else seed, 2])
        rows_q, mask_q = self.logged_order(data)
        Q, L = rows_q.shape
        if int(n_sessions) * L > MAX_LOG_ROWS:
            raise ConfigError("n_sessions", f"{int(n_sessions):,} sessions × {L} documents = "
                                            f"{int(n_sessions) * L:,} log rows (≈ "
                                            f"{int(n_sessions) * L * 50 / 2**30:.1f} "
                                            f"GiB) exceed the limit of {MAX_LOG_ROWS:,} rows")
        contexts_q = rng.integers(0, cfg.n_contexts, size=(Q, L)) if cfg.n_contexts else None
        qs = rng.integers(0, Q, size=int(n_sessions))
        d = self.draw_sessions(data, qs, rng, rows_q=rows_q, mask_q=mask_q, contexts_q=contexts_q)
        rows, mask, shown, clicks, obs, rel = (d[k] for k in ("rows", "mask", "shown", "clicks", "obs", "rel"))
        positions = np.arange(1, L + 1)
        ctx = d.get("context")
        keep = mask.ravel()
        sess = np.repeat(np.arange(len(qs), dtype=np.int64), L)[keep]
        frame = {
            "session_id": sess,
            "query_id": np.repeat(data.query_ids[qs], L)[keep],
            "doc_id": self.document_ids(data)[rows.ravel()[keep]],
            "row": rows.ravel()[keep].astype(np.int64),
            "position": np.tile(positions.astype(np.int16), len(qs))[keep],
            "shown": shown.ravel()[keep],
            "click": clicks.ravel()[keep].astype(np.int8),
        }
        if contexts_q is not None:
            frame["context"] = ctx.ravel()[keep].astype(np.int32)
        frame["label"] = data.labels[rows.ravel()[keep]].astype(np.int8)
        frame["true_relevance"] = rel.ravel()[keep].astype(np.float32)
        frame["true_observation"] = np.asarray(obs, dtype=np.float32).ravel()[keep]
        meta = {"click_model": cfg.to_dict(), "seed": self.seed if seed is None else seed,
                "split": split, "n_sessions": int(n_sessions), "max_label": self.max_label_}
        if cfg.coupling > 0:
            meta["coupling_exponent"] = {k: round(v, 4) for k, v in self.exponent_spread(data).items()}
        if cfg.n_contexts:
            meta["context_vectors"] = np.round(self.context_z_, 6).tolist()
        return ClickLog._trusted(pd.DataFrame(frame), meta)


def shuffle_within_blocks(rows: np.ndarray, mask: np.ndarray, rng: np.random.Generator, *, share: float,
                          n_blocks: int = 1) -> np.ndarray:
    """``rows`` (sessions × positions, candidates first as ``mask`` says) with a share ``share`` of
    the sessions put in a uniformly random order *within* ``n_blocks`` contiguous blocks of each
    list's candidates (``numpy.array_split`` sizes: 10 candidates in 2 blocks → positions 1–5 and
    6–10).  Other sessions keep their order.  A document is then seen at several positions of its
    block but never in another block, so positions form ``n_blocks`` components of the
    identifiability graph (Identifiability Matters, §3; App. C.1 builds its K-component data the
    same way).

    >>> rows = np.tile(np.arange(6), (3, 1)); mask = np.ones_like(rows, bool)
    >>> out = shuffle_within_blocks(rows, mask, np.random.default_rng(0), share=1.0, n_blocks=2)
    >>> bool((np.sort(out[:, :3], axis=1) == [0, 1, 2]).all() and (np.sort(out[:, 3:], axis=1) == [3, 4, 5]).all())
    True
    """
    S, L = rows.shape
    pick = rng.random(S) < share
    n = mask.sum(axis=1, keepdims=True)
    pos = np.arange(L)[None, :]
    block = (pos * n_blocks) // np.maximum(n, 1)                  # array_split's block of each position
    key = np.where(pick[:, None], block + rng.random((S, L)), pos.astype(np.float64))
    key = np.where(mask, key, np.inf)                             # padding stays at the end
    return np.take_along_axis(rows, np.argsort(key, axis=1, kind="stable"), axis=1)


def hidden_relevant(log: ClickLog, threshold: int = 1) -> dict:
    """How many relevant (label ≥ threshold) candidates the top-k cut hides, counted over
    distinct (query, document) pairs of the log."""
    df = log.frame
    if "label" not in df:
        return {"relevant": None, "hidden": None, "share_hidden": None}
    pairs = df.drop_duplicates(["query_id", "doc_id"])
    rel = pairs["label"] >= threshold
    hidden = int((rel & ~pairs["shown"]).sum())
    total = int(rel.sum())
    return {"relevant": total, "hidden": hidden, "share_hidden": hidden / total if total else 0.0}
