"""One call from a click log and a candidate ranking to its estimated value on the logged traffic (issue #47,
item 4): every estimator of :data:`~.estimators.ESTIMATORS` with a 90 % percentile interval from a bootstrap over
sessions (Poisson weights; PBM and the direct model refitted in each resample),
the log's own value, support, and whether the log identifies the position bias each estimate needs.

Identification (Identifiability Matters, Thm 1): the position bias θ̂_r/θ̂_j of a document shown at j and ranked r by
the candidate is known from the log only when r and j are connected in its identifiability graph (nodes: positions;
an edge where one document was shown at both).  A candidate slot is *identified* when its document's logged
positions and the slot's position share a component.  IPS, SNIPS and DM are refused unless every slot of the
candidate's top k is identified; DR unless every slot is identified or shown at its position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.clickmodels.judgement_agreement import MIN_EXAMINED, examined_impressions
from ultr_core.clickmodels.models import PBM
from ultr_core.clickmodels.prior import DEFAULT_PRIOR
from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.clickmodels.sessions import SessionArrays, SessionTable
from ultr_core.counterfactual import candidate as cand
from ultr_core.counterfactual.choices import DIRECT_MODELS, N_BOOT
from ultr_core.counterfactual.estimators import (
    DEFAULT_ESTIMATORS,
    ESTIMATOR_BY_KEY,
    FIT_MODELS,
    LEVEL,
    EstimatorResult,
    Fit,
    Setup,
    default_estimators,
    interval,
    logged_value,
)
from ultr_core.counterfactual.position_bias import fit_position_bias
from ultr_core.counterfactual.records import (
    CandidateSummary,
    LogPositionBias,
    PropensitySource,
    RankingReport,
    SlotSupport,
)
from ultr_core.errors import ConfigError, counted
from ultr_core.identifiability.graph import IdentifiabilityGraph

__all__ = ["evaluate_ranking", "value_candidate", "expected_seconds", "DIRECT_MODELS",
           "N_BOOT", "LEVEL"]

#: PBM's prior on attractiveness for propensities: PRIOR_STRENGTH pseudo-impressions at the log's mean
#: attractiveness (from a first fit with a negligible prior, NEGLIGIBLE) — PyClick's one in two pulls θ̂ down where
#: rarely clicked documents sit, and a pair a resample never shows would jump to ½
NEGLIGIBLE, PRIOR_STRENGTH = (0.01, 0.02), 0.1
#: seconds per bootstrap resample and (query, document) pair of the log, by estimator family, measured on this
#: project's 2-core machine at idle (benchmarks/bench_evaluate_cost.py: 500, 4,000 and 30,000 pairs; 2026-11-29)
SECONDS_PER_PAIR = {"default": 2.4e-5, "affine": 2.2e-5}


def expected_seconds(n_pairs: int, *, affine: bool, n_boot: int = N_BOOT) -> float:
    """About how long :func:`evaluate_ranking` takes on a log of ``n_pairs`` (query, document) pairs: the point fit
    and ``n_boot`` resamples, each refitting PBM (and, with ``affine``, the trust-bias model) — what a page says
    before it starts.

    >>> round(expected_seconds(30_000, affine=True)), round(expected_seconds(30_000, affine=False))
    (141, 74)
    """
    per = SECONDS_PER_PAIR["default"] + (SECONDS_PER_PAIR["affine"] if affine else 0.0)
    return 1.0 + (n_boot + 1) * (0.005 + per * n_pairs)
#: the share of the candidate's top-k slots (session-weighted) outside an estimator's support beyond which it is
#: refused (up to it, the estimate carries a note)
THIN_REFUSED = 0.05
#: the fewest impressions in the log (raw, any rank) of a document whose clicks IPS re-weights
MIN_IMPRESSIONS = 10


@dataclass(frozen=True)
class SupportRule:
    """What an estimator needs of each candidate slot (one record per support kind of
    :class:`~.estimators.OffPolicyEstimator`): ``slots`` the per-slot masks it needs (all of them), ``share`` the
    mask whose share is reported as its support, ``refuse_above`` the unsupported share beyond which it is refused,
    ``short`` what an unsupported slot lacks, ``text`` the rule as stated in the output."""

    slots: tuple
    share: str
    refuse_above: float
    short: str
    text: str

    def supported(self, slots: dict) -> np.ndarray:
        ok = np.ones_like(slots[self.slots[0]], bool)
        for name in self.slots:
            ok &= slots[name]
        return ok


#: the support rules, by support kind: IPS-type estimators re-weight the log's own clicks, so they need the document
#: shown (a positive propensity θ̂ at every rank it was shown, PBM's EM keeps θ̂ > 0) often enough; DR corrects only
#: where the candidate's document was shown at the candidate's position; DM needs its model's documents examined
#: often enough: where more than THIN_REFUSED of the slots hold prior-dominated documents its bootstrap interval
#: does not cover — on logs of 1,000 queries × 10 documents and 20,000 sessions it covered the truth in 7 of 10 logs
#: for the production order and 0 of 10 for the reversed one, its width (0.007) a quarter of the spread over logs
#: (0.009 sd), where IPS covered 10 of 10 (docs/counterfactual.md, "A sparser log") — so it is refused there
SUPPORT_RULES = {
    "any position": SupportRule(
        ("identified", "impressed"), "identified", THIN_REFUSED,
        "hold documents shown fewer than {n} times: their re-weighted clicks rest on a handful of impressions",
        "IPS-type: every top-{k} slot's document shown ≥ {n} times in the log (at ranks with a positive propensity) "
        "at positions its identifiability graph connects to the slot's; refused when more than {refuse:.0%} of the "
        "slots (session-weighted) fail"),
    "at its position": SupportRule(
        ("at_position",), "at_position", 1.0,
        "are never shown at the candidate's position: there {model_s} prediction is not corrected",
        "doubly robust: corrects each top-{k} slot where the log shows its document at its position (π̂₀ > 0); "
        "elsewhere {model} decides, which needs the slot identified"),
    "model": SupportRule(
        ("examined",), "examined", THIN_REFUSED,
        "hold prior-dominated documents (fewer than {m:g} examination-weighted impressions): the click model's "
        "prior decides much of their value, and the bootstrap cannot see how uncertain it is",
        "direct method: the click model predicts every top-{k} slot; refused when more than {refuse:.0%} of the "
        "slots (session-weighted) hold documents its prior decides (fewer than {m:g} examination-weighted "
        "impressions)"),
}
def _direct(key: str):
    if key not in DIRECT_MODELS:
        raise ConfigError("--model", f"the direct method needs a user model it can refit in every bootstrap resample: "
                                     f"choose one of {', '.join(DIRECT_MODELS)} (not the CTR models, which cannot "
                                     "value a re-ranking, nor the models fitted by gradient)")
    return MODEL_BY_KEY[key]


def _fit(t: SessionTable, w: np.ndarray, s: Setup, direct: str, mean_attr: float | None = None,
         affine=None) -> Fit:
    """PBM (on the cells' counts, :func:`~.position_bias.fit_position_bias`; α̂'s prior centred on ``mean_attr``: the
    full log's, or found here) and the direct model on ``t`` weighted by ``w``; the direct model's expected clicks on
    each query's candidate list; with ``affine`` (True, or the full log's fit to start a resample from) trust
    bias's affine fit on the same counts."""
    ww = (w[:, None] * t.mask).ravel()
    size = len(s.crank) * t.depth
    n, c = np.bincount(s.cell.ravel(), ww, size), np.bincount(s.cell.ravel(), ww * t.clicks.ravel(), size)
    pbm = fit_position_bias(n, c, n_pairs=t.n_pairs, depth=t.depth, strength=PRIOR_STRENGTH, mean_attr=mean_attr,
                            first=NEGLIGIBLE)
    attr, exam = pbm.alpha, pbm.theta
    if direct == "pbm":
        model = PBM()
        model.attr, model.exam = attr, exam
    else:
        model = MODEL_BY_KEY[direct].cls().fit(SessionTable(t.pairs, t.clicks, w, t.n_pairs, int(w.sum())))
    lists = SessionTable(np.maximum(s.cand, 0), np.zeros(s.cand.shape, bool), np.ones(len(s.cand)), t.n_pairs,
                         len(s.cand))
    dm = (model.full(lists)[:, :s.k] * (s.cand[:, :s.k] >= 0)).sum(1)
    return Fit(w, exam, attr, dm, pbm.mean_attr, _affine(n, c, t, affine) if affine is not None else None,
               pbm.converged)


def _affine(n: np.ndarray, c: np.ndarray, t: SessionTable, start):
    """Trust bias's b_r + s_r·a_d on the (pair, rank) cells' counts (started from ``start`` unless it is True)."""
    from ultr_core.clickmodels.trust import fit_affine_counts
    cells = np.flatnonzero(n > 0)
    return fit_affine_counts(cells // t.depth, cells % t.depth + 1, c[cells], shown=n[cells], n_pairs=t.n_pairs,
                             depth=t.depth,
                             start=None if start is True else start)


def _setup(t: SessionTable, arrays: SessionArrays, rank: np.ndarray, k: int, propensity=None) -> Setup:
    n_q = int(arrays.pair_query.max()) + 1
    pq = arrays.pair_query[t.pairs[:, 0]]
    length = np.zeros(n_q, np.int64)
    np.maximum.at(length, pq, t.mask.sum(1))                # the longest list each query's sessions show
    kq = np.minimum(k, length)
    positions = np.arange(t.depth)[None, :]
    lists = np.where(positions < kq[:, None], cand.candidate_lists(rank, arrays.pair_query, n_q, depth=t.depth), -1)
    match = (lists[pq] == t.pairs) & (positions < k) & t.mask
    return Setup(t, pq, arrays.pair_query, n_q, k, rank[t.pairs], rank, lists, match, t.pairs * t.depth + positions,
                 kq, propensity)


def logged_propensities(arrays: SessionArrays) -> tuple[np.ndarray | None, int]:
    """The logging policy's π₀(d at r | q) per cell (pair·D + r; 0 where no session shows it) from the log's
    ``propensity`` column, and the number of cells whose sessions disagree on it (their mean is used); (None, 0)
    for a log without the column."""
    if arrays.propensity is None:
        return None, 0
    d, mask = arrays.depth, arrays.mask
    cells = (arrays.pairs * d + np.arange(d)[None, :])[mask]
    values, size = arrays.propensity[mask], arrays.n_pairs * d
    count = np.bincount(cells, minlength=size)
    mean = np.bincount(cells, values, size) / np.maximum(count, 1)
    lo, hi = np.full(size, np.inf), np.full(size, -np.inf)
    np.minimum.at(lo, cells, values)
    np.maximum.at(hi, cells, values)
    return mean, int(((count > 0) & (hi - lo > 1e-9)).sum())


def _candidate(ranking: str, scores, arrays, t, production, fitted) -> cand.Candidate:
    if scores is not None:
        return cand.from_scores(scores, arrays.pair_keys, arrays.pair_query, production=production)
    if ranking == "production":
        return cand.Candidate("the production order", production, {})
    key = ranking.split(":", 1)[1] if ranking.startswith("model:") else None
    if key not in MODEL_BY_KEY:
        raise ConfigError("--ranking", f"give a scores file, 'production' or 'model:KEY' with KEY one of "
                                       f"{', '.join(MODEL_BY_KEY)}")
    rel = fitted(key).relevance()
    return cand.from_values(rel, f"re-ranked by {MODEL_BY_KEY[key].label}'s relevance", arrays.pair_query,
                            production=production)


def _identified(s: Setup) -> tuple[np.ndarray, np.ndarray, int]:
    """Per candidate slot (queries × k): identified (its document's component of the log's identifiability graph —
    pairs and positions, :class:`~ultr_core.identifiability.graph.IdentifiabilityGraph` — holds the slot's position)
    and shown at its position; and the number of components the log's positions fall into."""
    t = s.t
    n_pairs, d = len(s.crank), t.depth
    shown = np.unique(s.cell[t.mask])
    g = IdentifiabilityGraph.from_pairs(shown // d, shown % d, n_documents=n_pairs,
                                        factors=pd.DataFrame({"position": np.arange(1, d + 1)}))
    pair_comp = np.full(n_pairs, -1)                 # a pair never shown is in no position's component
    pair_comp[g.doc] = g.component[g.fac]
    top = s.cand[:, :s.k]
    ok = top >= 0
    ident = ok & (pair_comp[np.maximum(top, 0)] == g.component[np.arange(s.k)][None, :])
    at_pos = ok & np.isin(np.maximum(top, 0) * d + np.arange(s.k)[None, :], shown)
    return ident, at_pos, len(np.unique(g.component))


def _boot(t, s: Setup, point: Fit, direct: str, n_boot: int, seed: int, report=None, chosen=DEFAULT_ESTIMATORS):
    """(n_boot, chosen estimators + 1) values — the estimators', then the log's own — over Poisson resamples of
    sessions, and how many resamples' PBM fits did not converge; ``report(done, total)`` every 10 resamples."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, len(chosen) + 1))
    capped = 0
    for b in range(n_boot):
        if report is not None and b % 10 == 0:
            report(b, n_boot)
        w = rng.poisson(t.weight).astype(np.float64)
        if w.sum() == 0:                 # a resample with no session has no value: counted as degenerate
            out[b] = np.nan
            continue
        f = _fit(t, w, s, direct, point.mean_attr, point.affine)
        capped += not f.converged
        out[b] = [ESTIMATOR_BY_KEY[k].value(s, f) for k in chosen] + [logged_value(s, f)]
    return out, capped


def _chosen(estimators, logged: bool) -> tuple:
    """The estimator keys asked for (None: :func:`~.estimators.default_estimators` of a log with or without its
    logging policy's propensities; an empty list is refused), each checked against the table."""
    keys = tuple(dict.fromkeys(default_estimators(logged=logged) if estimators is None else estimators))
    bad = [k for k in keys if k not in ESTIMATOR_BY_KEY]
    if bad or not keys:
        raise ConfigError("--estimators", f"unknown estimator {str(bad[0])[:20]!r}; choose from "
                                          f"{', '.join(ESTIMATOR_BY_KEY)}" if bad else "name at least one estimator")
    return keys


def _entries(s: Setup, point: Fit, draws: np.ndarray, slots: dict, nq, chosen=DEFAULT_ESTIMATORS) -> dict:
    """Each estimator's entry: its interval, or its refusal with the reason, and the support rule it was held to
    (:data:`SUPPORT_RULES`, by the record's support kind); a note where slots fall short without a refusal."""
    weight = nq[:, None] * (s.cand[:, :s.k] >= 0)                        # the slots that exist
    sessions = int(s.t.weight.sum())
    share = lambda m: float((weight * m).sum() / weight.sum())            # noqa: E731  session-weighted slots
    out = {}
    for i, e in enumerate(ESTIMATOR_BY_KEY[k] for k in chosen):
        rule = SUPPORT_RULES[e.support]
        named = {"model": FIT_MODELS[e.fit].name, "model_s": FIT_MODELS[e.fit].possessive}   # its fallback model
        short, lacks = 1 - share(rule.supported(slots)), rule.short.format(n=MIN_IMPRESSIONS, m=MIN_EXAMINED, **named)
        known = slots["identified"] | slots["at_position"] if e.support == "at its position" else slots["identified"]
        iv, refused, notes = None, "", []
        if share(known) < 1:
            refused = (f"{1 - share(known):.0%} of the candidate's top-{s.k} slots put a document at a position the "
                       "log does not connect to where it was shown: the position bias between them is not identified")
        elif short > rule.refuse_above:
            refused = f"{short:.1%} of the candidate's top-{s.k} slots " + lacks
        else:
            iv = interval(e.value(s, point), draws[:, i], bounds=(0.0, float(s.k)), method=e.interval,
                          sessions=sessions)
            notes += [iv.note, f"{short:.1%} of the top-{s.k} slots {lacks}" if short > 0 else ""]
        if e.fit == "affine" and point.affine is not None and not point.affine.converged:
            notes.append("the affine fit did not converge: " + point.affine.message)
        stated = rule.text.format(k=s.k, n=MIN_IMPRESSIONS, m=MIN_EXAMINED, refuse=THIN_REFUSED, **named)
        out[e.key] = EstimatorResult(e.key, e.label, e.cite, e.formula, e.support, share(slots[rule.share]), stated,
                                     iv, refused, "; ".join(filter(None, notes)))
    return out


def evaluate_ranking(data, name: str = "log", *, ranking: str = "production", scores=None, model: str = "pbm",
                     k: int = 10, n_boot: int = N_BOOT, seed: int = 0, judgements=None, report=None,
                     prior: str = DEFAULT_PRIOR, estimators=None) -> RankingReport:
    """The value of a candidate ranking on the log ``data`` (a click table or :class:`SessionArrays`): expected
    clicks in its top ``k`` per session by every estimator, with 90 % bootstrap intervals; ``ranking`` is
    "production", "model:KEY" or (with ``scores``, :class:`~ultr_core.logs.scores.Scores`) a scores file; ``model``
    the direct method's click model; ``prior`` the attractiveness prior of a "model:KEY" re-ranking's fit (as the
    click-model comparison's); ``report(done, total)`` follows the bootstrap; ``estimators``: keys of
    :data:`~.estimators.ESTIMATORS` (None: the default set).  A :class:`~.records.RankingReport`; see
    docs/counterfactual.md."""
    arrays = data if isinstance(data, SessionArrays) else SessionArrays.from_frame(data, name)
    _direct(model)
    t = arrays.compress()
    production = cand.production_rank(t, arrays.pair_query)
    from ultr_core.clickmodels.compare import fit_with_prior
    fitted = lambda key: fit_with_prior(MODEL_BY_KEY[key], t, arrays.pair_keys, prior=prior, seed=seed)      # noqa: E731
    c = _candidate(ranking, scores, arrays, t, production, fitted)
    return value_candidate(arrays, c, model=model, k=k, n_boot=n_boot, seed=seed, judgements=judgements, name=name,
                           t=t, production=production, report=report, estimators=estimators)


def value_candidate(arrays: SessionArrays, c: cand.Candidate, *, model: str = "pbm", k: int = 10, n_boot: int = N_BOOT,
                    seed: int = 0, judgements=None, name: str = "log", t=None, production=None,
                    report=None, estimators=None) -> RankingReport:
    """:func:`evaluate_ranking` of a built :class:`~.candidate.Candidate` (``t``, ``production``: the log's
    patterns and production ranks, when already computed)."""
    _direct(model)
    propensity, varied = logged_propensities(arrays)            # read once: the estimators' π₀ and the output's note
    chosen = _chosen(estimators, propensity is not None)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError("--k", f"must be a whole number ≥ 1, got {k!r}")
    if not 20 <= n_boot <= 10_000:
        raise ConfigError("--n-boot", f"must lie in 20 … 10000, got {n_boot!r}")
    t = arrays.compress() if t is None else t
    production = cand.production_rank(t, arrays.pair_query) if production is None else production
    notes = [f"k = {k} is beyond the log's {counted(t.depth, 'rank')}: valued at k = {t.depth}"] if k > t.depth else []
    s = _setup(t, arrays, c.rank, min(int(k), t.depth), propensity)
    point = _fit(t, t.weight, s, model, affine=True if any(ESTIMATOR_BY_KEY[e].fit == "affine" for e in chosen)
                 else None)
    draws, capped = _boot(t, s, point, model, n_boot, seed, report, chosen)
    notes += _convergence_notes(point.converged, capped, n_boot)
    ident, at_pos, n_comp = _identified(s)
    top = s.cand[:, :s.k]
    slots = {"identified": ident, "at_position": at_pos,
             "examined": (top >= 0) & (examined_impressions(t)[np.maximum(top, 0)] >= MIN_EXAMINED),
             "impressed": (top >= 0) & (np.bincount(t.pairs[t.mask], np.broadcast_to(t.weight[:, None], t.mask.shape)[
                 t.mask], t.n_pairs)[np.maximum(top, 0)] >= MIN_IMPRESSIONS)}
    nq = np.bincount(s.pq, t.weight, s.n_queries)
    sessions = int(t.weight.sum())
    judged = None
    if judgements is not None:
        from ultr_core.counterfactual.judged_dcg import judged_value
        judged = judged_value(judgements, arrays, s, production=production, nq=nq, n_boot=n_boot, seed=seed)
    return RankingReport(
        log=name, sessions=sessions, queries=int(s.n_queries), k=int(s.k), model=model, n_boot=int(n_boot),
        seed=int(seed), level=LEVEL, notes=tuple(notes),
        candidate=CandidateSummary(label=c.label, counts=c.counts, notes=tuple(c.notes)),
        logged=interval(logged_value(s, point), draws[:, -1], bounds=(0.0, float(s.k)), sessions=sessions),
        estimators=_entries(s, point, draws, slots, nq, chosen),
        support=SlotSupport(any_position=1.0, **{key: float((nq[:, None] * v).sum() / (nq * s.kq).sum())
                                                 for key, v in slots.items()}),
        position_bias=LogPositionBias(theta=tuple((point.theta / point.theta[0]).tolist()), components=int(n_comp)),
        logging_propensities=_propensity_source(propensity is not None, varied), judged=judged)


def _convergence_notes(point: bool, capped: int, n_boot: int) -> list[str]:
    """What the output says when PBM's fit (:func:`~.position_bias.fit_position_bias`) did not converge."""
    notes = [] if point else ["PBM's fit on the log did not converge: θ̂ and every estimate from it are from its "
                              "last step"]
    if capped:
        notes.append(f"PBM's fit did not converge in {capped} of {n_boot} bootstrap resamples")
    return notes


def _propensity_source(logged: bool, varied: int) -> PropensitySource:
    """Where the policy-aware estimators' π₀ comes from, said in the output."""
    if not logged:
        return PropensitySource(source="display frequencies", text="π₀(d at r | q): the log's share of q's sessions "
                                "showing d at r (no 'propensity' column)")
    return PropensitySource(source="logged", varied_cells=int(varied), text="π₀(d at r | q): the log's 'propensity' "
                            "column" + (f" ({varied:,} (document, rank) cells disagree between sessions: their mean "
                                        "is used)" if varied else ""))
