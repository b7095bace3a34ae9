"""A repair evaluated on the user's own log, with no true relevance: held-out click likelihood.

*Identifiability Matters* (Chen et al., ICML 2024) §4.2 repairs a disconnected identifiability graph by **node
merging**: bias factors that share an observation parameter join their components.  On a simulated log the repair
is scored against the true relevance (:func:`~ultr_core.identifiability.reports.compare_repairs`); on a real log
there is none, so this module asks what the log *can* answer:

* **can the clicks test the merge?**  The click model ``P(click) = r(d)·o(t)`` (PBM over the graph's documents and
  bias factors, eq. 1) is fitted by EM on the first ``split`` of the sessions in the file's order (PyClick's
  ``Example.py`` split, as the click-model comparison) — once as logged (one ``o`` per factor) and once after the
  merge plan (merged factors share one ``o``) — and scored on the remaining sessions: the mean log-likelihood per
  impression, its perplexity ``exp(−mean ln P)`` and the paired difference with a 90 % interval over held-out
  sessions.  Ties that only join components (K − 1 ties for K components) fix the components' relative scales and
  **nothing else**: every prediction, hence the likelihood, is unchanged (up to the prior and the bound r, o ≤ 1,
  which can stop a whole component from rescaling: then the merged fit moves the tied examinations instead) — the
  clicks cannot tell a right merge from a wrong one.  Only ties inside a component (``testable_ties``) are tested by the
  held-out clicks.
* **what does it change?**  Before the repair each component's relevance has its own free scale; after it, one
  scale.  The document table gives both estimates with the component, and ``flips`` says how much of the order
  across components the untestable assumption decides: the share of (largest component, other component)
  document pairs whose order reverses if the tied examinations differ by ×2 or ×½ from what the merge assumes.

Node *intervention* cannot be evaluated on a logged file — it needs new clicks on swapped lists, which only new
traffic gives.  Test rows whose document or factor never occurs in the training sessions are not scored and are
counted.

>>> import pandas as pd
>>> from ultr_core.logs.clicklog import ClickLog
>>> log = ClickLog(pd.DataFrame({"session_id": [0, 0, 1, 1, 2, 2, 3, 3], "query_id": 0,
...                              "doc_id": [1, 2, 2, 1, 1, 2, 2, 1], "position": [1, 2] * 4, "shown": True,
...                              "click": [1, 0, 1, 0, 1, 0, 0, 0]}))
>>> session_split(log, 0.75)[1].frame["session_id"].unique().tolist()
[3]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError, counted
from ultr_core.identifiability.embedding import fit_counts
from ultr_core.identifiability.graph import _distinct_pairs
from ultr_core.logs.clicklog import ClickLog
from ultr_core.logs.coding import lookup_codes

__all__ = ["cross_component_flips", "HeldOutRepair", "heldout_repair", "session_split", "paired_difference",
           "merge_verdict", "STRATEGIES"]

#: the two fits compared: the log as it is and after the analysis's merge plan
STRATEGIES = {"none": "as logged", "merge": "after node merging"}
#: predicted click probabilities are kept inside [CLIP, 1 − CLIP] when scored (PyClick caps at 1 − 1e-6)
CLIP = 1e-6
#: EM stops when no parameter moves by more than this, or after MAX_ITER iterations
TOL, MAX_ITER = 1e-6, 2000
#: every r and o starts from PyClick's prior: 1 pseudo-success in 2 pseudo-trials (so a document seen a few times
#: without a click is not predicted never to be clicked)
PRIOR = (1.0, 2.0)
#: scale errors of the merged examinations whose effect on the order across components is reported
FLIP_FACTORS = (0.5, 2.0)


@dataclass
class HeldOutRepair:
    """The comparison: one row per strategy, the documents' relevance before/after, the observation per factor."""
    table: pd.DataFrame          #: strategy, components, parameters, train/held-out log-likelihood, perplexity
    difference: tuple            #: held-out log-likelihood per impression, merged − as logged: (mean, low, high)
    testable_ties: int           #: ties inside a component — the only ones held-out clicks can test
    flips: dict                  #: factor → share of cross-component document pairs reversed by that scale error
    documents: pd.DataFrame      #: document key columns, component, impressions, r̂ as logged, r̂ after merging
    observation: pd.DataFrame    #: factor label, component, ô as logged, ô after merging
    train_sessions: int
    test_sessions: int
    scored_rows: int             #: held-out shown rows scored (document and factor seen in training)
    unscored_rows: int           #: held-out shown rows whose document or factor training never saw


def session_split(log: ClickLog, split: float = 0.75) -> tuple[ClickLog, ClickLog]:
    """The first ``split`` of the sessions in the file's order (first appearance) and the rest."""
    if not 0 < split < 1:
        raise ConfigError("split", f"split {split!r} is outside (0, 1): the share of sessions that train")
    sid = log.frame["session_id"].to_numpy()
    order = pd.unique(sid)
    n_train = int(np.floor(split * len(order)))
    if n_train == 0 or n_train == len(order):
        raise ConfigError("split", f"{len(order):,} session(s) cannot be split {split:g} / {1 - split:g}: "
                                   "both parts need a session")
    train = np.isin(sid, order[:n_train])
    return (ClickLog._trusted(log.frame[train], log.meta), ClickLog._trusted(log.frame[~train], log.meta))


def _codes(frame: pd.DataFrame, graph) -> tuple[np.ndarray, np.ndarray]:
    """(document code, factor code) of every shown row in the graph's own codes (−1 where unknown)."""
    doc = lookup_codes(frame, graph.document_keys) if graph.document_keys is not None else \
        frame["doc_id"].to_numpy(np.int64)
    return doc, graph.codes_of(frame)


def _counts(doc: np.ndarray, grp: np.ndarray, clicks: np.ndarray, n_docs: int, n_groups: int):
    """Distinct (document, group) cells with impressions and clicks."""
    d, g, inv = _distinct_pairs(doc.astype(np.int64), grp.astype(np.int64), n_docs, n_groups)
    return d, g, np.bincount(inv, minlength=len(d)).astype(np.float64), np.bincount(inv, clicks, len(d))


def _row_log_lik(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Bernoulli log-likelihood (natural log) of each click ``c`` under its probability ``p``."""
    p = np.clip(p, CLIP, 1 - CLIP)
    return c * np.log(p) + (1 - c) * np.log1p(-p)


def _log_lik(p: np.ndarray, c: np.ndarray) -> float:
    """Mean Bernoulli log-likelihood per impression."""
    return float(np.mean(_row_log_lik(p, c))) if len(c) else float("nan")


def paired_difference(session: np.ndarray, ll_a: np.ndarray, ll_b: np.ndarray, *, z: float = 1.6449):
    """Mean of ``ll_b − ll_a`` per row and its 90 % interval (``z``) with whole sessions as the unit: the ratio
    estimator Σ_s Δ_s / Σ_s n_s and its delta-method standard error.

    >>> d, lo, hi = paired_difference(np.array([0, 0, 1, 1]), np.zeros(4), np.array([1., 1., 0., 0.]))
    >>> d, round(lo, 3), round(hi, 3)          # sessions differ by 2 and 0 over 2 rows each
    (0.5, -0.322, 1.322)
    """
    codes, inv = np.unique(session, return_inverse=True)
    delta = np.bincount(inv, ll_b - ll_a)
    n = np.bincount(inv).astype(np.float64)
    mean = float(delta.sum() / n.sum())
    k = len(codes)
    if k < 2:
        return mean, float("nan"), float("nan")
    se = float(np.sqrt(k / (k - 1) * np.sum((delta - mean * n) ** 2)) / n.sum())
    return mean, mean - z * se, mean + z * se


def _held_out_rows(g, train: pd.DataFrame, test: pd.DataFrame):
    """Codes of the training rows and of the held-out rows that can be scored (document and factor seen in
    training), with the count of those that cannot."""
    d_tr, f_tr = _codes(train, g)
    d_te, f_te = _codes(test, g)
    seen_doc = np.bincount(d_tr, minlength=g.n_documents) > 0
    seen_fac = np.bincount(f_tr, minlength=g.n_factors) > 0
    ok = (d_te >= 0) & (f_te >= 0)
    ok[ok] = seen_doc[d_te[ok]] & seen_fac[f_te[ok]]
    clicks, sessions = test["click"].to_numpy(np.float64), test["session_id"].to_numpy()
    return ((d_tr, f_tr, train["click"].to_numpy(np.float64)), (d_te[ok], f_te[ok], clicks[ok], sessions[ok]),
            int((~ok).sum()))


def _fit_strategy(g, groups: np.ndarray, train_codes, test_codes, seed: int):
    """EM fit of r·o with ``groups`` (factor → observation parameter) on the training rows; the fit and the
    train / held-out log-likelihood per impression."""
    d_tr, f_tr, c_tr = train_codes
    d_te, f_te, c_te, _ = test_codes
    n_groups = int(groups.max()) + 1
    d, grp, n, c = _counts(d_tr, groups[f_tr], c_tr, g.n_documents, n_groups)
    fit = em_with_prior(d, grp, n, c=c, n_docs=g.n_documents, n_groups=n_groups, seed=seed)
    train_ll = _log_lik(fit.relevance[d_tr] * fit.observation[groups[f_tr]], c_tr)
    return fit, train_ll, _row_log_lik(fit.relevance[d_te] * fit.observation[groups[f_te]], c_te)


def em_with_prior(d, g, n, *, c, n_docs: int, n_groups: int, seed: int = 0):
    """EM for ``P(click) = r_d·o_g`` on (document, group, impressions, clicks) cells with :data:`PRIOR`'s pseudo
    counts on every parameter (PyClick's PBM update): the embedding models' EM
    (:func:`~ultr_core.identifiability.embedding.fit_counts`) from a uniform start in [0.1, 0.9] (``seed``),
    stopping at :data:`TOL` or :data:`MAX_ITER`.

    >>> f = em_with_prior(np.array([0]), np.array([0]), np.array([8.]), c=np.array([8.]), n_docs=1, n_groups=1)
    >>> float(f.relevance[0]), float(f.observation[0])     # 8 clicks in 8: (1 + 8) / (2 + 8) each, in one step
    (0.9, 0.9)
    """
    rng = np.random.default_rng(seed)
    start = rng.uniform(0.1, 0.9, n_docs), rng.uniform(0.1, 0.9, n_groups)
    return fit_counts(d, g, n, c=c, D=n_docs, G=n_groups, method="em", n_iter=MAX_ITER, tol=TOL, init=start,
                      prior=PRIOR)


def _document_table(g, log: ClickLog, train_codes, fits: dict) -> pd.DataFrame:
    """One row per document: its key (the file's own id where the log keeps one), component, training impressions
    and r̂ per strategy (empty where training never showed it)."""
    keys = g.document_keys.copy() if g.document_keys is not None else pd.DataFrame({"doc_id": np.arange(g.n_documents)})
    if list(keys.columns) == ["doc_id"] and "doc_key" in log.frame:
        keys = pd.DataFrame({"document": log.file_doc_ids(keys["doc_id"])})
    comp = np.zeros(g.n_documents, np.int64)
    comp[g.doc] = g.component[g.fac]
    shown = np.bincount(train_codes[0], minlength=g.n_documents)
    out = keys.assign(component=comp, train_impressions=shown)
    for name, fit in fits.items():
        out[f"relevance ({STRATEGIES[name]})"] = np.where(shown > 0, fit.relevance, np.nan)
    return out


def _observation_table(g, groups_by: dict, fits: dict, train_codes) -> pd.DataFrame:
    """One row per bias factor: its label, component, training impressions and ô per strategy."""
    shown = np.bincount(train_codes[1], minlength=g.n_factors)
    out = pd.DataFrame({"factor": g.factor_labels(), "component": g.component, "train_impressions": shown})
    for name, fit in fits.items():
        out[f"observation ({STRATEGIES[name]})"] = np.where(shown > 0, fit.observation[groups_by[name]], np.nan)
    return out


def heldout_repair(log: ClickLog, analysis, *, split: float = 0.75, seed: int = 0) -> HeldOutRepair:
    """Fit ``r·o`` by EM on the first ``split`` of ``log``'s sessions as logged and after ``analysis``'s merge plan
    (an :class:`~ultr_core.identifiability.reports.IdentifiabilityAnalysis` of this log), and score both on the
    remaining sessions (see the module docstring)."""
    if analysis.merge_plan is None:
        raise ConfigError("merge", "the analysis has no merge plan (build it with merge=True)")
    g = analysis.graph
    train, test = session_split(log, split)
    shown_tr, shown_te = train.frame[train.frame["shown"]], test.frame[test.frame["shown"]]
    train_codes, test_codes, unscored = _held_out_rows(g, shown_tr, shown_te)
    groups_by = {"none": np.arange(g.n_factors), "merge": analysis.merge_plan.factor_groups()}
    comps = {"none": g.n_components, "merge": analysis.merge_plan.merged_graph().n_components}
    if len(test_codes[2]) == 0:
        raise ConfigError("split", "no held-out row shows a document and a bias factor seen in training: "
                                   "nothing to score")
    if not shown_tr["click"].any():
        from ultr_core.logs.clicklog import NO_CLICKS
        raise ConfigError("log", NO_CLICKS)
    if np.unique(test_codes[3]).size < 2:
        raise ConfigError("split", f"only {np.unique(test_codes[3]).size} held-out session can be scored: an interval "
                                   "over sessions needs at least 2 — use a log with more sessions")
    fits, rows, lls = {}, [], {}
    for name, groups in groups_by.items():
        fits[name], train_ll, lls[name] = _fit_strategy(g, groups, train_codes, test_codes, seed)
        test_ll = float(lls[name].mean())
        rows.append({"strategy": STRATEGIES[name], "components": comps[name],
                     "observation parameters": int(np.unique(groups[train_codes[1]]).size),
                     "train log-likelihood": train_ll, "held-out log-likelihood": test_ll,
                     "held-out perplexity": float(np.exp(-test_ll)), "EM iterations": fits[name].iterations})
    diff = paired_difference(test_codes[3], lls["none"], lls["merge"])
    ties = (rows[0]["observation parameters"] - rows[1]["observation parameters"]) - (comps["none"] - comps["merge"])
    docs = _document_table(g, log, train_codes, fits)
    flips = {f: cross_component_flips(docs["relevance (after node merging)"].to_numpy(), docs["component"].to_numpy(),
                                      f) for f in FLIP_FACTORS}
    return HeldOutRepair(pd.DataFrame(rows), diff, max(int(ties), 0), flips, docs,
                         _observation_table(g, groups_by, fits, train_codes), train.n_sessions, test.n_sessions,
                         len(test_codes[2]), unscored)


def cross_component_flips(relevance: np.ndarray, component: np.ndarray, factor: float) -> float:
    """Share of (component 0, other component) document pairs whose order reverses when every document outside
    component 0 has its relevance multiplied by ``factor`` (documents without an estimate — NaN — left out).

    >>> # of the 4 pairs only 0.6 → 1.2 passes 0.9
    >>> cross_component_flips(np.array([0.9, 0.5, 0.6, 0.2]), np.array([0, 0, 1, 1]), 2.0)
    0.25
    """
    ok = ~np.isnan(relevance)
    a = np.sort(relevance[ok & (component == 0)])
    b = relevance[ok & (component != 0)]
    if len(a) == 0 or len(b) == 0:
        return 0.0
    lo, hi = np.minimum(b, b * factor), np.maximum(b, b * factor)
    between = np.searchsorted(a, hi, side="left") - np.searchsorted(a, lo, side="right")
    return float(between.sum() / (len(a) * len(b)))


def merge_verdict(h: HeldOutRepair) -> str:
    """What the held-out comparison says about the merge (plain text, no user strings)."""
    mean, lo, hi = h.difference
    span = f"{mean:+.4f} [{lo:+.4f}, {hi:+.4f}] per impression (merged − as logged, 90 % interval over sessions)"
    share = max(h.flips.values())
    decided = (f" What the merge decides: {share:.0%} of the document pairs across components reverse their order "
               f"if the tied examinations differ by ×2 or ×½ from what it assumes.")
    if h.testable_ties == 0:
        return ("The clicks cannot test this merge: its ties only join components, which fixes their relative "
                f"scales and leaves the predicted clicks unchanged (up to the prior and the bound r, o ≤ 1) — "
                f"held-out log-likelihood {span}." + decided +
                " Only new traffic (node intervention) can check it.")
    if hi < 0:
        return (f"The merge costs fit: held-out log-likelihood {span}; the clicks contradict "
                f"{counted(h.testable_ties, 'tie')} inside a component — prefer node intervention." + decided)
    return (f"The clicks do not contradict the {counted(h.testable_ties, 'tie')} they can test: held-out "
            f"log-likelihood {span}." + decided)
