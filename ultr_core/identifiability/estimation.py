"""Position-bias (observation) curves from a click log, one per connected IG component.

Observation probabilities o(t) are identifiable only up to one scale **per connected
component** of the IG (Theorem 1 of *Identifiability Matters*): inside a component a chain of
documents shown at two factors links every pair of factors; between components nothing does.
So every curve here is normalised within its component (its reference factor = 1: the lowest
position, else the most-shown factor), and ratios across components are refused.

Estimators (all on the (document, factor) impression/click counts of the graph, vectorised):

* **Intervention harvesting** (Agarwal, Zaitsev, Wang, Li, Najork & Joachims, *Estimating
  Position Bias without Intrusive Interventions*, WSDM 2019).  For factors t ≠ t′ the
  intervention set S(t, t′) holds the documents shown at both; with per-document click rates
  ĉ_{d,t} = clicks/impressions and equal weight per document,
  Ĉ_t^{t,t′} = Σ_{d∈S} ĉ_{d,t}  estimates o(t)·Σ_d r(d), so o(t′)/o(t) = Ĉ_{t′}^{t,t′}/Ĉ_t^{t,t′}.

  - ``pivot_one``: o(t)/o(ref) from the pairs with the reference factor (eq. 9 with k = 1);
  - ``adjacent_chain``: products of ratios between neighbouring factors (positions k, k+1);
  - ``all_pairs``: maximum likelihood over every pair, Ĉ_t^{t,t′} ≈ o(t)·ρ(t,t′) with a
    symmetric pair relevance ρ, weighted cross-entropy with the non-click rates Ĉ¬ (the
    paper's AllPairs estimator).
* **PBM by maximum likelihood** (``em``, the name of the EM it replaced): r(d)·o(t).

Both likelihood fits run by Newton's method (observed information) until the Newton decrement is below 10⁻¹²
(:func:`~ultr_core.identifiability.uncertainty.converged_curves`).

Uncertainty: a **document bootstrap** — documents are resampled with replacement (Poisson(1)
weights, the standard streaming approximation), the estimator is re-run, and the one interval
engine's percentile interval (:mod:`ultr_core.evaluation.intervals`) is reported per factor — stretched
to the estimate where the resamples lie to one side of it.

**Vectorised and bounded.**  Every estimated component and bootstrap resample is solved at once (the
chosen components' factors stacked into one index, resamples as rows of a Poisson weight matrix).
**The work rule** (printed in the notes): single-factor components are skipped; those with ≥ 2
factors are taken largest first, at most ``max_components`` and ``max_factors`` factors in all (the
largest always, whole).  Every factor's Fisher standard error: :mod:`.uncertainty`.

>>> import pandas as pd
>>> from ultr_core.identifiability import IdentifiabilityGraph
>>> from ultr_core.logs.ingestion import CountTable
>>> t = CountTable(pd.DataFrame({"doc_id": [0, 0, 1, 1], "position": [1, 2, 1, 2],
...                              "impressions": [100, 100, 100, 100], "clicks": [40, 20, 60, 30]}),
...                ("doc_id",), ("position",))
>>> curves = estimate_bias(IdentifiabilityGraph.from_counts(t), method="pivot_one", n_bootstrap=0)
>>> curves["estimate"].round(3).tolist()
[1.0, 0.5]
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from ultr_core.errors import ConfigError, counted
from ultr_core.evaluation.intervals import MIN_DRAWS, bootstrap_intervals
from ultr_core.identifiability.curve_methods import ESTIMATOR_LABELS, ESTIMATORS
from ultr_core.identifiability.graph import IdentifiabilityGraph
from ultr_core.identifiability.pairs import MAX_INTERVENTION_PAIRS, Budget, intervention_sets
from ultr_core.identifiability.support import blank_unsupported
from ultr_core.identifiability.uncertainty import STALLED, converged_curves
from ultr_core.logs.coding import tuple_labels

__all__ = ["ESTIMATORS", "ESTIMATOR_LABELS", "estimate_bias", "BiasEstimate", "intervention_sets", "Budget"]



@dataclass
class BiasEstimate:
    """Curves (tidy ``table``: component, factor, label, position, estimate, lower, upper,
    impressions) and what could not be estimated (``notes``)."""

    table: pd.DataFrame
    method: str
    n_bootstrap: int
    alpha: float
    notes: list = field(default_factory=list)

    def to_records(self) -> list[dict]:
        return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
                for r in self.table.to_dict("records")]


MAX_ESTIMATED_FACTORS = 5_000
#: what an estimation spends when nobody sets a budget: as the CLI does (a frozen record, shared)
CLI_BUDGET = Budget()
#: fewest resamples for an interval: with fewer (a time budget ran out) no interval is shown
MIN_BOOTSTRAP = 20
_CHUNK_CELLS = 8_000_000           # resample rows × columns held at once (float64: 64 MB per array)


# --------------------------------------------------------------------------- the stacked problem
@dataclass
class _Stack:
    """The chosen components' factors in one index ("slots", curve order inside each component)
    and their (document, factor) rows with local document codes."""

    slots: np.ndarray          # graph factor of each slot
    seg: np.ndarray            # component rank (0…k−1) of each slot
    start: np.ndarray          # first slot of each slot's component (its reference factor)
    doc: np.ndarray            # rows: local document code …
    slot: np.ndarray           # … slot …
    n: np.ndarray              # … impressions and clicks
    c: np.ndarray
    n_docs: int

    @property
    def F(self) -> int:
        return len(self.slots)


def _choose(graph: IdentifiabilityGraph, max_components: int, max_factors: int):
    """Components to estimate (largest first) and the notes that state the rule."""
    sizes = np.asarray(graph.sizes)
    multi = np.flatnonzero(sizes >= 2)                   # components are numbered by decreasing size
    notes = []
    if graph.n_components > 1:
        notes.append(f"the graph has {graph.n_components:,} components: each curve is normalised within its "
                     "component; ratios between components are not identifiable and are not estimated")
    single = graph.n_components - len(multi)
    if single:
        notes.append(f"{counted(single, 'component')} {'holds' if single == 1 else 'hold'} a single factor: nothing to "
                     "compare it with (skipped)")
    fits = np.cumsum(sizes[multi]) <= max_factors
    fits[:1] = True
    chosen = multi[:max_components][fits[:max_components]]
    if len(chosen) < len(multi):
        notes.append(f"curves for the {len(chosen):,} largest of {len(multi):,} components with ≥ 2 factors "
                     f"(rule: largest first, at most {max_components} components and {max_factors:,} factors)")
    return chosen, notes


def _curve_order(graph: IdentifiabilityGraph, facs: np.ndarray, fac_rank: np.ndarray) -> np.ndarray:
    """``facs`` in curve order, component by component (``fac_rank``): position, then the other columns, or else
    by decreasing impressions; the first factor of each component is its reference."""
    f = graph.factors.iloc[facs]
    if "position" in f:
        others = [c for c in f.columns if c != "position"]
        keys = [f[c].astype(str).to_numpy() for c in reversed(others)] + [f["position"].to_numpy(np.float64)]
    else:
        keys = [-np.bincount(graph.fac, graph.impressions, graph.n_factors)[facs]]
    return facs[np.lexsort(keys + [fac_rank[facs]])]    # lexsort is stable: ties keep factor order


def curve_references(graph: IdentifiabilityGraph) -> np.ndarray:
    """Per factor, the reference of its component's curve (its first factor in curve order) — for every component."""
    slots = _curve_order(graph, np.arange(graph.n_factors), np.asarray(graph.component))
    comp = np.asarray(graph.component)[slots]
    first = slots[np.r_[True, comp[1:] != comp[:-1]]] if len(slots) else slots
    ref = np.empty(graph.n_components, np.int64)
    ref[np.asarray(graph.component)[first]] = first
    return ref[np.asarray(graph.component)]


def _stack(graph: IdentifiabilityGraph, chosen: np.ndarray) -> _Stack:
    rank = np.full(graph.n_components, -1, np.int64)
    rank[chosen] = np.arange(len(chosen))
    fac_rank = rank[graph.component]
    slots = _curve_order(graph, np.flatnonzero(fac_rank >= 0), fac_rank)
    seg = fac_rank[slots]
    first = np.r_[True, seg[1:] != seg[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(len(slots)), 0))
    slot_of = np.full(graph.n_factors, -1, np.int64)
    slot_of[slots] = np.arange(len(slots))
    rows = slot_of[graph.fac] >= 0
    doc, uniq = pd.factorize(graph.doc[rows])
    return _Stack(slots, seg, start, np.asarray(doc, np.int64), slot_of[graph.fac[rows]],
                  graph.impressions[rows].astype(np.float64), graph.clicks[rows].astype(np.float64), len(uniq))


def _weights(rng, n_boot: int, n_docs: int, width: int, chunk: int | None = None):
    """Row blocks of the Poisson(1) bootstrap weight matrix (``n_boot`` × ``n_docs``), in chunks
    that keep chunk × ``width`` cells bounded (and at most ``chunk`` rows); the same draws whatever the chunking."""
    step = max(1, min(n_boot, _CHUNK_CELLS // max(width, 1), chunk or n_boot))
    for b0 in range(0, n_boot, step):
        yield rng.poisson(1.0, (min(step, n_boot - b0), n_docs)).astype(np.float64)


def _pair_sums(S: _Stack, max_pairs: int = MAX_INTERVENTION_PAIRS):
    """Ordered slot pairs (i, j) that share a document and the sparse maps document → pair
    (ĉ_{d,i} and 1): ``W @ Mc`` and ``W @ Mn`` are the intervention-set sums C, N per resample.
    Only documents shown at two factors or more enter an intervention set, so the maps (and the
    bootstrap weights) have one row per such document; returns (keys, Mc, Mn, documents)."""
    ia, ib = intervention_sets(S.doc, S.slot, max_pairs)
    ctr = np.divide(S.c, S.n, out=np.zeros_like(S.c), where=S.n > 0)
    keys, kinv = np.unique(S.slot[ia] * S.F + S.slot[ib], return_inverse=True)
    docs, dinv = np.unique(S.doc[ia], return_inverse=True)
    shape = (len(docs), len(keys))
    Mc = sparse.csc_matrix((ctr[ia], (dinv, kinv)), shape=shape)
    Mn = sparse.csc_matrix((np.ones(len(ia)), (dinv, kinv)), shape=shape)
    return keys, Mc, Mn, len(docs)


def _lookup(keys: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Column of each key ``k`` among the sorted ``keys`` (−1 where absent)."""
    if len(keys) == 0:
        return np.full(np.shape(k), -1)
    pos = np.minimum(np.searchsorted(keys, k), len(keys) - 1)
    return np.where(keys[pos] == k, pos, -1)


def _take(C: np.ndarray, col: np.ndarray) -> np.ndarray:
    """C[:, col] with NaN where col = −1."""
    out = C[:, np.maximum(col, 0)]
    out[:, col < 0] = np.nan
    return out


def _ratios(S: _Stack, keys, C, method):
    """pivot_one / adjacent_chain curves for every row of C (resamples × pair keys)."""
    s = np.arange(S.F)
    with np.errstate(all="ignore"):
        if method == "pivot_one":
            ref = S.start
            out = _take(C, _lookup(keys, s * S.F + ref)) / _take(C, _lookup(keys, ref * S.F + s))
            out[:, s == ref] = 1.0
            out[~np.isfinite(out)] = np.nan
            return out
        prev = np.maximum(s - 1, 0)
        step = _take(C, _lookup(keys, s * S.F + prev)) / _take(C, _lookup(keys, prev * S.F + s))
        step[~np.isfinite(step)] = np.nan
        step[:, s == S.start] = 1.0
    # products of the steps inside each component: log-sums restarted at the component start,
    # with NaN and zero steps counted so that they propagate forward within their component only
    def seg_cumsum(x):
        cs = np.cumsum(x, axis=1)
        return cs - (cs - x)[:, S.start]
    nan = seg_cumsum(np.isnan(step).astype(np.float64))
    zero = seg_cumsum((step == 0).astype(np.float64))
    with np.errstate(all="ignore"):
        logs = seg_cumsum(np.where(np.isnan(step) | (step == 0), 0.0, np.log(np.abs(step))))
    out = np.exp(logs)
    out[zero > 0] = 0.0
    out[nan > 0] = np.nan
    return out


def _normalise(S: _Stack, o: np.ndarray, reached=None) -> np.ndarray:
    """Curves divided by their component's reference factor (NaN where it has no clicks)."""
    ref = o[:, S.start]
    with np.errstate(all="ignore"):
        out = np.where(ref > 1e-9, o / ref, np.nan)
    if reached is not None:
        out[:, ~reached] = np.nan
    return out


def _curves(S: _Stack, method: str, W: np.ndarray, exclude=None, pairs=None):
    """Normalised curves (rows of W × slots) and the full-data fit's left-out documents and factors (``exclude``),
    where the bootstrap refits start.

    * ``em``: the PBM on the (document, factor) counts, reweighted by W;
    * ``all_pairs``: Agarwal et al.'s AllPairs likelihood −Σ Ĉ_t log(o_t ρ_tt′) + Ĉ¬_t log(1 − o_t ρ_tt′)
      with a symmetric ρ per unordered pair is a PBM in which the pair plays the document and the
      ordered pair's intervention-set sums play the clicks Ĉ and non-clicks Ĉ¬ = N − Ĉ: fitted by
      the same fitter;
    * both fitted by Newton's method until the Newton decrement is below 1e-12, each resample to convergence
      (:func:`~ultr_core.identifiability.uncertainty.converged_curves`; issue #46: EM stopped by a step-size rule
      or capped warm starts looked certain along weak directions);
    * ``pivot_one`` / ``adjacent_chain``: ratios of intervention-set sums.
    """
    if method == "em":
        return _converged(S.doc, S.slot, S.n_docs, S, W[:, S.doc] * S.n, W[:, S.doc] * S.c, exclude)
    keys, Mc, Mn, _ = pairs
    C = np.asarray((Mc.T @ W.T).T)
    if method in ("pivot_one", "adjacent_chain"):
        return _ratios(S, keys, C, method), None, 0
    N = np.asarray((Mn.T @ W.T).T)
    i, j = keys // S.F, keys % S.F
    pair_key, pair = np.unique(np.minimum(i, j) * S.F + np.maximum(i, j), return_inverse=True)
    return _converged(pair.reshape(-1), i, len(pair_key), S, N, C, exclude)


def estimate_bias(graph: IdentifiabilityGraph, *, method: str = "all_pairs", n_bootstrap: int = 100,
                  alpha: float = 0.1, seed: int = 0, max_components: int = 10) -> pd.DataFrame:
    """Observation curve of every component with ≥ 2 factors (the ``max_components`` largest),
    normalised within the component, with document-bootstrap intervals: the tidy table of
    :func:`estimate_bias_full` (which also returns the notes)."""
    return estimate_bias_full(graph, method=method, n_bootstrap=n_bootstrap, alpha=alpha, seed=seed,
                              max_components=max_components).table


_COLUMNS = ["component", "factor", "label", "position", "estimate", "lower", "upper", "impressions"]


def estimate_bias_full(graph: IdentifiabilityGraph, *, method: str = "all_pairs", n_bootstrap: int = 100,
                       alpha: float = 0.1, seed: int = 0, max_components: int = 10,
                       max_factors: int = MAX_ESTIMATED_FACTORS,
                       budget: Budget = CLI_BUDGET) -> BiasEstimate:
    """As :func:`estimate_bias`, returning the :class:`BiasEstimate` with its notes (and the work
    rule of the module docstring), within ``budget``."""
    if method not in ESTIMATORS:
        raise ConfigError("method", f"unknown estimator {method!r}; use one of {', '.join(ESTIMATORS)}")
    if graph.impressions is None:
        raise ConfigError("graph", "estimation needs click counts: build the graph with "
                                   "IdentifiabilityGraph.from_counts or from a click log")
    if not 0 < alpha < 1:
        raise ConfigError("alpha", f"{alpha} is not in (0, 1)")
    if n_bootstrap < 0 or n_bootstrap > 10_000:
        raise ConfigError("n_bootstrap", f"{n_bootstrap} is not in 0…10000")
    chosen, notes = _choose(graph, max_components, max_factors)
    if len(chosen) == 0:
        return BiasEstimate(pd.DataFrame(columns=_COLUMNS), method, n_bootstrap, alpha, notes)
    S = _stack(graph, chosen)
    pairs = _pair_sums(S, budget.max_pairs) if method != "em" else None
    n_w = pairs[3] if pairs else S.n_docs            # documents whose weights can change an estimate
    width = max(len(S.doc), pairs[0].size if pairs else 0, n_w)
    est, exclude, stalled = _curves(S, method, np.ones((1, n_w)), pairs=pairs)
    est = est[0]
    if stalled:
        notes.append(f"the {method} fit stopped with its Newton decrement above {STALLED:g}: its curve is from its "
                     "last step")
    boots, stalled = _resamples(S, method, n_bootstrap, n_w, width, exclude, pairs, seed, budget, notes)
    if boots and method in ("em", "all_pairs"):
        notes.append("bootstrap refits: Newton's method until the Newton decrement is below 1e-12 (converged along "
                     "weak directions too)" + (f"; {stalled} of {sum(len(b) for b in boots)} stopped with it above "
                                               f"{STALLED:g}, their last steps in the band" if stalled else ""))
    if sum(len(b) for b in boots) >= min(MIN_BOOTSTRAP, n_bootstrap) > 0:
        lo, hi, _ = bootstrap_intervals(est, np.vstack(boots), level=1 - alpha, bounds=(0.0, np.inf),
                                        min_draws=min(MIN_DRAWS, n_bootstrap))
    else:
        lo = hi = np.full(S.F, np.nan)
    f = graph.factors.iloc[S.slots]
    pos = (pd.to_numeric(f["position"],
                         errors="coerce").astype("Int64").astype(object).where(f["position"].notna(), None)
           if "position" in f else [None] * S.F)
    table = pd.DataFrame({"component": chosen[S.seg].astype(int), "factor": S.slots.astype(int),
                          "label": tuple_labels(f), "position": list(pos), "estimate": est.astype(float),
                          "lower": np.asarray(lo, float), "upper": np.asarray(hi, float),
                          "impressions": np.bincount(S.slot, S.n, S.F).astype(np.int64)}, columns=_COLUMNS)
    clicks = np.bincount(S.slot, S.c, S.F)
    support_notes, dead, no_clicks = blank_unsupported(table, clicks, S.start, seg=S.seg, chosen=chosen)
    notes += _gap_notes(S, np.isnan(est) & ~dead, chosen, method)
    table = table[~no_clicks].reset_index(drop=True)        # a component without clicks has no curve at all
    return BiasEstimate(table, method, sum(len(b) for b in boots), alpha, notes + support_notes)


def _gap_notes(S: _Stack, gap: np.ndarray, chosen: np.ndarray, method: str) -> list[str]:
    """One note per component with factors ``gap`` (no estimate, though clicked), naming why: the factor shares no
    document with its reference (``pivot_one``) or with another factor, or every document it shares is clicked at
    every impression or at none (such a document carries no information about the ratio: the fit sets it aside)."""
    pivot = method == "pivot_one"
    pairs = np.unique(np.stack([S.doc, S.slot]), axis=1)                     # (document, slot) incidences
    if pivot:                # documents shown at each slot's reference factor
        at_ref = np.zeros(S.n_docs, bool)
        at_ref[pairs[0][pairs[1] == S.start[pairs[1]]]] = True
        shares = at_ref[pairs[0]] & (pairs[1] != S.start[pairs[1]])
    else:                    # documents shown at two factors or more
        shares = np.bincount(pairs[0], minlength=S.n_docs)[pairs[0]] >= 2
    linked = np.bincount(pairs[1], shares, S.F) > 0
    other = "reference" if pivot else "neighbouring"
    notes = []
    for k in np.flatnonzero(np.bincount(S.seg, gap, len(chosen))):          # at most max_components
        apart, idle = (int(np.sum(gap & (S.seg == k) & want)) for want in (~linked, linked))
        if apart:
            notes.append(f"component {int(chosen[k])}: {counted(apart, 'factor')} {_verb(apart, 'share')} no document "
                         f"with the {other} factor: not estimated by {method}")
        if idle:
            notes.append(f"component {int(chosen[k])}: {counted(idle, 'factor')} {_verb(idle, 'share')} only "
                         f"documents clicked at every impression or at none with the {other} factor (they carry no "
                         f"information about the ratio): not estimated by {method}")
    return notes


def _verb(n: int, verb: str) -> str:
    return verb + "s" if n == 1 else verb


def _converged(doc, slot, n_docs: int, S: _Stack, N, C, exclude):
    return converged_curves(doc, slot, n_docs, F=S.F, N=N, C=C, start=S.start, exclude=exclude)


def _resamples(S, method, n_bootstrap, n_w, width, exclude, pairs, seed, budget: Budget, notes) -> tuple[list, int]:
    """The bootstrap curves, chunk by chunk, until ``n_bootstrap`` are done or the budget is spent (then a note
    says how many were done; with fewer than :data:`MIN_BOOTSTRAP` no interval is drawn), and how many refits
    stalled."""
    import time
    t0, boots, stalled = time.monotonic(), [], 0
    for W in _weights(np.random.default_rng(seed), n_bootstrap, n_w, width, budget.chunk):
        if budget.spent(t0):
            done = sum(len(b) for b in boots)
            cut = (": no bootstrap interval (the band is the Fisher interval alone)" if done < MIN_BOOTSTRAP
                   else ": intervals from those")
            notes.append(f"the time budget of this shared server ({budget.seconds:g} s) ended the bootstrap after "
                         f"{done} of {n_bootstrap} resamples{cut} — python -m ultr_core ig FILE computes all of them")
            break
        curves, _, k = _curves(S, method, W, exclude, pairs)
        boots.append(curves)
        stalled += k
    return boots, stalled
