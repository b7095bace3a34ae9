"""Click simulation (SPEC §2), vectorised numpy, seeded.

Conventions (both papers' η are kept apart):

* **position-bias severity η** — the exponent of the position-based examination.
  ``convention="eye_tracking"`` (ULTRA / LBD / identifiability papers):
  ``o_p = v_p^η`` with the eye-tracking base ``v`` (:data:`EYE_TRACKING`, positions past 10
  reuse 0.06).  ``convention="reciprocal"`` (CLD, eq. 14): ``o_p = (1/p)^η``.
* **coupling level η_c** (LBD §6.1) — individual-level observation
  ``o_p(x) = v_p^{η·max(wᵀx′ + 1, 0)}``, ``x′`` the 10 crux features (top-10 ExtraTrees
  importances).  With η = 1 this is exactly the paper's formula.  As in the official code
  (``libsvm_tools/normalize_feature.py``, ``ultra/utils/click_models.py``) the crux features are
  min–max scaled to **[−1, 1]** with the minimum and maximum over train + valid + test, the
  ExtraTrees are fitted on the whole labelled dataset (paper §6.1), and one direction
  ``u ~ U[−1, 1]^10`` (rescaled so its extremes are exactly ±1, as the official
  ``config/click_yahoo_0.1.json`` weights are ±η at their extremes) is drawn once per sweep
  (``coupling_seed``) and scaled: ``w = η_c·u``.  ``coupling_seed=None`` draws ``u`` per
  simulation seed; ``crux_scaling="train01"`` is the former [0, 1]-on-train scaling, under
  which η_c is about half the paper's η.  η_c is comparable with the paper's η only under the
  official scaling.
* **contexts** (identifiability paper, App. C.2) — every (query, position) gets a context id
  out of ``n_contexts``, fixed for the simulation; context vectors ``z ~ N(0, 0.35²)^10``,
  ``w ~ U[−1, 1]^10``; ``o(ctx, p) = v_p^{η·max(wᵀz + 1, 0)}``.  When coupling and contexts are
  both on, the two linear terms add inside one ``max(· + 1, 0)``.
* **relevance** ``r(y) = ε + (1 − ε)(2^y − 1)/(2^{y_max} − 1)`` with click noise ε and the
  dataset's maximum label ``y_max`` (``relevance="graded"``), or **binarised** as CLD §6 does
  (``relevance="binary"``): ``r = 1`` for grades ``y ≥ ⌈¾·y_max⌉`` (3–4 of 0–4; 2 of 0–2) and
  ``r = ε`` below — a click needs examination and relevance, irrelevant documents are clicked
  with the noise probability.  MAP is then measured on the same binarisation.
* **top-k** — of the candidates the logging ranker orders only the first k are shown;
  the rest stay in the log with ``shown = False``, ``click = 0`` and ``true_observation = 0``.
* **logging ranker** — a linear pairwise (Ranking-SVM style) ranker fitted on 1 % of the
  labelled training queries (at least one query with two different labels), or the
  order given in the data (``logging="given"``, e.g. ULTRA init lists, the fully synthetic data).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from .clicklog import ClickLog
from .dataset import LTRDataset, RankingData
from .errors import ConfigError

__all__ = ["ClickModelConfig", "ClickSimulator", "EYE_TRACKING", "relevance_probability", "binary_threshold",
           "position_observation", "fit_logging_ranker", "crux_features", "coupling_direction",
           "shuffle_within_blocks"]

#: eye-tracking examination probabilities of positions 1..10 (Joachims et al. 2005)
EYE_TRACKING = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.2, 0.11, 0.1, 0.08, 0.06])
N_CRUX = 10
#: most context types a simulation may use (each has a 10-dim vector)
MAX_CONTEXTS = 1_000_000
#: most log rows (sessions × list length) one simulation may build: ≈ 50 bytes a row in memory
MAX_LOG_ROWS = 60_000_000


@dataclass(frozen=True)
class ClickModelConfig:
    """How clicks are generated.  All fields are validated; see the module docstring."""

    eta: float = 1.0                 #: position-bias severity η
    convention: str = "eye_tracking"  #: "eye_tracking" (v_p^η) or "reciprocal" ((1/p)^η, CLD)
    noise: float = 0.1               #: click noise ε
    topk: int | None = None          #: show only the first k candidates (None: all)
    coupling: float = 0.0            #: coupling level η_c (LBD individual-level observation)
    n_contexts: int = 0              #: contextual PBM with this many context types (0: off)
    logging: str = "svm"             #: "svm" (1 % labelled queries) or "given" (data order)
    logging_fraction: float = 0.01   #: share of training queries the logging ranker sees
    max_list: int | None = None      #: keep at most this many candidates per query (None: all)
    crux_scaling: str = "official"   #: "official" ([−1, 1] over all splits) or "train01" (legacy)
    intervention: bool = False       #: swap position 1 with a uniformly random shown position k per session (HTE)
    coupling_seed: int | None = 0    #: seed of the coupling direction u (None: the simulation seed)
    shuffle: float = 0.0             #: share of sessions shown in a random order (exploration); 0: always the logged order
    shuffle_blocks: int = 1          #: shuffle only within this many contiguous blocks of each list (K blocks → K IG components)
    relevance: str = "graded"        #: "graded" r(y) or "binary" (CLD §6: grades ≥ ¾·y_max relevant, others clicked with ε)

    def __post_init__(self):
        if not (np.isfinite(self.eta) and 0 <= self.eta <= 10):
            raise ConfigError("eta", f"position-bias severity must be in [0, 10], got {self.eta}")
        if self.convention not in ("eye_tracking", "reciprocal"):
            raise ConfigError("convention", f"must be 'eye_tracking' or 'reciprocal', got {self.convention!r}")
        if not 0 <= self.noise < 1:
            raise ConfigError("noise", f"click noise ε must be in [0, 1), got {self.noise}")
        if self.topk is not None and (int(self.topk) != self.topk or self.topk < 1):
            raise ConfigError("topk", f"top-k must be a positive integer or None, got {self.topk}")
        if not 0 <= self.coupling <= 5:
            raise ConfigError("coupling", f"coupling level η_c must be in [0, 5], got {self.coupling}")
        if int(self.n_contexts) != self.n_contexts or not 0 <= self.n_contexts <= MAX_CONTEXTS:
            raise ConfigError("n_contexts", f"must be a whole number from 0 to {MAX_CONTEXTS:,}, got "
                                            f"{self.n_contexts:,}")
        if self.logging not in ("svm", "given"):
            raise ConfigError("logging", f"must be 'svm' or 'given', got {self.logging!r}")
        if not 0 < self.logging_fraction <= 1:
            raise ConfigError("logging_fraction", f"must be in (0, 1], got {self.logging_fraction}")
        if self.crux_scaling not in ("official", "train01"):
            raise ConfigError("crux_scaling", f"must be 'official' or 'train01', got {self.crux_scaling!r}")
        if self.coupling_seed is not None and (int(self.coupling_seed) != self.coupling_seed
                                               or not 0 <= self.coupling_seed < 2**32):
            raise ConfigError("coupling_seed", f"must be a non-negative integer or None, got {self.coupling_seed}")
        if not (np.isfinite(self.shuffle) and 0 <= self.shuffle <= 1):
            raise ConfigError("shuffle", f"the share of shuffled sessions must be in [0, 1], got {self.shuffle}")
        if int(self.shuffle_blocks) != self.shuffle_blocks or not 1 <= self.shuffle_blocks <= 100:
            raise ConfigError("shuffle_blocks", f"must be a whole number from 1 to 100, got {self.shuffle_blocks}")
        if self.relevance not in ("graded", "binary"):
            raise ConfigError("relevance", f"must be 'graded' or 'binary', got {self.relevance!r}")
        if self.max_list is not None and self.max_list < 1:
            raise ConfigError("max_list", f"must be positive or None, got {self.max_list}")

    def to_dict(self) -> dict:
        return asdict(self)


def binary_threshold(max_label: int) -> int:
    """The grade from which a binarised label is relevant: ⌈¾·y_max⌉ (CLD §6: 3 of 0–4).

    >>> [binary_threshold(m) for m in (1, 2, 4)]
    [1, 2, 3]
    """
    return max(int(np.ceil(0.75 * max(max_label, 1))), 1)


def relevance_probability(labels, max_label: int, noise: float, binary: bool = False) -> np.ndarray:
    """r(y) = ε + (1 − ε)(2^y − 1)/(2^y_max − 1); binarised: 1 for y ≥ :func:`binary_threshold`, else ε.

    >>> relevance_probability([0, 2, 4], 4, 0.1).round(3).tolist()
    [0.1, 0.28, 1.0]
    >>> relevance_probability([0, 2, 3, 4], 4, 0.1, binary=True).tolist()
    [0.1, 0.1, 1.0, 1.0]
    """
    y = np.asarray(labels, dtype=np.float64)
    if binary:
        return np.where(y >= binary_threshold(max_label), 1.0, noise)
    denom = (2.0 ** max(max_label, 1)) - 1
    return noise + (1 - noise) * (2.0 ** y - 1) / denom


def position_observation(n_positions: int, eta: float = 1.0, convention: str = "eye_tracking",
                         topk: int | None = None) -> np.ndarray:
    """The position-based examination curve o_1..o_n (0 past top-k)."""
    p = np.arange(1, n_positions + 1)
    if convention == "eye_tracking":
        o = EYE_TRACKING[np.minimum(p, len(EYE_TRACKING)) - 1] ** eta
    elif convention == "reciprocal":
        o = (1.0 / p) ** eta
    else:
        raise ConfigError("convention", f"unknown convention {convention!r}")
    if topk is not None:
        o = np.where(p <= topk, o, 0.0)
    return o


def fit_logging_ranker(train: RankingData, fraction: float = 0.01,
                       rng: np.random.Generator | None = None) -> np.ndarray:
    """Weights of a linear pairwise ranker fitted on ``fraction`` of the training queries.

    Ranking-SVM style: a linear SVM (scikit-learn ``LinearSVC``) on feature differences
    of document pairs with different labels.  Queries are added beyond the fraction
    until at least one informative pair exists.
    """
    from sklearn.svm import LinearSVC
    rng = rng if rng is not None else np.random.default_rng(0)
    order = rng.permutation(train.n_queries)
    want = max(1, int(round(fraction * train.n_queries)))
    diffs = []
    for i, qi in enumerate(order):
        s, e = train.offsets[qi], train.offsets[qi + 1]
        y, X = train.labels[s:e], train.features[s:e]
        a, b = np.nonzero(y[:, None] > y[None, :])
        if len(a):
            diffs.append(X[a] - X[b])
        if i + 1 >= want and diffs:
            break
    if not diffs:
        return np.zeros(train.n_features, dtype=np.float32)   # all labels equal: no signal
    D = np.concatenate(diffs)
    D = np.concatenate([D, -D])
    t = np.concatenate([np.ones(len(D) // 2), -np.ones(len(D) // 2)])
    svm = LinearSVC(C=1.0, fit_intercept=False, max_iter=5000, random_state=int(rng.integers(2**31)))
    svm.fit(D, t)
    return svm.coef_.ravel().astype(np.float32)


def crux_features(data: RankingData | LTRDataset, n: int = N_CRUX, seed: int = 0):
    """Indices of the ``n`` most important features of an ExtraTrees regressor fitted on
    min–max normalised features → labels, with the per-feature min and span used (LBD §6.1).

    Given an :class:`LTRDataset` the fit and the min/max use every split (the paper fits "in the
    total dataset", the official code scales over train + valid + test); given one split, that
    split only (the legacy ``train01`` scaling)."""
    from sklearn.ensemble import ExtraTreesRegressor
    if isinstance(data, LTRDataset):
        parts = list(data.splits())
        X = np.concatenate([p.features for p in parts])
        y = np.concatenate([p.labels for p in parts])
    else:
        X, y = data.features, data.labels
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1)
    model = ExtraTreesRegressor(n_estimators=50, min_samples_leaf=5, random_state=seed, n_jobs=1)
    model.fit((X - lo) / span, y)
    idx = np.argsort(-model.feature_importances_, kind="stable")[:min(n, X.shape[1])]
    return idx, lo[idx], span[idx]


def coupling_direction(n: int, seed: int | np.random.Generator) -> np.ndarray:
    """The coupling direction u: ``n`` draws from U[−1, 1] min–max rescaled so that its smallest
    entry is −1 and its largest +1 (the official click-model weights are ±η at their extremes).

    >>> u = coupling_direction(10, 0)
    >>> float(u.min()), float(u.max())
    (-1.0, 1.0)
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng([int(seed), 7])
    u = rng.uniform(-1, 1, size=n)
    if n >= 2 and u.max() > u.min():
        u = 2 * (u - u.min()) / (u.max() - u.min()) - 1
    return u


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
        return position_observation(n_positions, c.eta, c.convention, c.topk)

    # ---------------------------------------------------------------- simulate
    def draw_sessions(self, data: RankingData, qs: np.ndarray, rng: np.random.Generator,
                      rows_q: np.ndarray | None = None, mask_q: np.ndarray | None = None,
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
            rows = shuffle_within_blocks(rows, mask, rng, cfg.shuffle, cfg.shuffle_blocks)
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
                                    cfg.relevance == "binary")[np.maximum(rows, 0)]
        shown = mask & ((positions <= cfg.topk)[None, :] if cfg.topk is not None else True)
        clicks = (rng.random(rows.shape, dtype=np.float32) < rel * obs) & shown
        out.update(rows=rows, mask=mask, shown=np.broadcast_to(shown, rows.shape), clicks=clicks,
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
            return self.draw_sessions(data, qs, rng, rows_q, mask_q, ctx)
        return draw

    def simulate(self, data: RankingData, n_sessions: int, seed: int | None = None,
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
                                            f"{int(n_sessions) * L:,} log rows (≈ {int(n_sessions) * L * 50 / 2**30:.1f} "
                                            f"GiB) exceed the limit of {MAX_LOG_ROWS:,} rows")
        contexts_q = rng.integers(0, cfg.n_contexts, size=(Q, L)) if cfg.n_contexts else None
        qs = rng.integers(0, Q, size=int(n_sessions))
        d = self.draw_sessions(data, qs, rng, rows_q, mask_q, contexts_q)
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


def shuffle_within_blocks(rows: np.ndarray, mask: np.ndarray, rng: np.random.Generator, share: float,
                          n_blocks: int = 1) -> np.ndarray:
    """``rows`` (sessions × positions, candidates first as ``mask`` says) with a share ``share`` of
    the sessions put in a uniformly random order *within* ``n_blocks`` contiguous blocks of each
    list's candidates (``numpy.array_split`` sizes: 10 candidates in 2 blocks → positions 1–5 and
    6–10).  Other sessions keep their order.  A document is then seen at several positions of its
    block but never in another block, so positions form ``n_blocks`` components of the
    identifiability graph (Identifiability Matters, §3; App. C.1 builds its K-component data the
    same way).

    >>> rows = np.tile(np.arange(6), (3, 1)); mask = np.ones_like(rows, bool)
    >>> out = shuffle_within_blocks(rows, mask, np.random.default_rng(0), 1.0, 2)
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
