"""One call from a click table to every model's held-out scores and relevance estimates, and its typed result: one
:class:`ModelFit` per fitted model (or ranker read as one) in a :class:`ClickModelComparison` — each writes the JSON
keys ``click-models --json`` has always had.

>>> fit = ModelFit(label="PBM", log_likelihood=-0.31, perplexity=1.2, perplexity_by_rank=(1.3, 1.1),
...                conditional_perplexity=1.2, conditional_perplexity_by_rank=(1.3, 1.1), bias={}, seconds=0.01)
>>> sorted(fit.to_json())[:4], "converged" in fit.to_json()
(['bias', 'conditional_perplexity', 'conditional_perplexity_by_rank', 'label'], False)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from ultr_core.clickmodels.evaluation import fit_comparison, score_models
from ultr_core.clickmodels.outofcore import join_sessions
from ultr_core.clickmodels.prior import DEFAULT_PRIOR, PRIORS, learned_prior, model_prior
from ultr_core.clickmodels.registry import CLICK_MODELS, MODEL_BY_KEY
from ultr_core.clickmodels.sessions import SessionArrays, SessionTable, split_sessions
from ultr_core.errors import ConfigError

__all__ = ["compare_click_models", "parse_models", "train_test", "fit_with_prior", "ModelFit",
           "ClickModelComparison", "SCORE_FIELDS"]


#: the held-out scores of :func:`~ultr_core.clickmodels.evaluation.score_models`, one field each of :class:`ModelFit`
SCORE_FIELDS = ("log_likelihood", "perplexity", "perplexity_by_rank", "conditional_perplexity",
                "conditional_perplexity_by_rank")


@dataclass(frozen=True, kw_only=True)
class ModelFit:
    """One fitted click model (or a ranker read as one) scored on the held-out sessions: its scores, its bias
    parameters (``model.bias()``: parameter name → values), the seconds its fit and scoring took, and what applies to
    it — the learned prior it chose, whether its optimiser converged (the models fitted by an optimiser only), its
    Fisher summary, its agreement with the judges, and for a ranker its colour and kind."""

    label: str
    log_likelihood: float
    perplexity: float
    perplexity_by_rank: tuple
    conditional_perplexity: float
    conditional_perplexity_by_rank: tuple
    bias: dict
    seconds: float
    prior: object = None                     #: the learned prior's PriorChoice (:mod:`~ultr_core.clickmodels.prior`)
    converged: bool | None = None            #: None: fitted by counting or a fixed number of EM steps
    identifiability: object = None           #: InformationSummary (:func:`~.information.information_summary`)
    judgements: object = None                #: Agreement (:func:`~ultr_core.clickmodels.judgement_agreement.agreement`)
    colour: str | None = None                #: a ranker's colour (the algorithm table's)
    kind: str | None = None                  #: "ranker" for a ranker read as a click model

    @classmethod
    def scored(cls, label: str, scores: dict, **rest) -> "ModelFit":
        """From :func:`~ultr_core.clickmodels.evaluation.score_models`'s scores of one model."""
        return cls(label=label, **{k: tuple(v) if isinstance(v, list) else float(v)
                                   for k, v in scores.items() if k in SCORE_FIELDS}, **rest)

    def with_(self, **changes) -> "ModelFit":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The entry ``models[key]`` (or ``rankers[key]``) of ``click-models --json``: what applies, in field order."""
        return {f.name: list(v) if isinstance(v, tuple) else v
                for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass(frozen=True, kw_only=True)
class ClickModelComparison:
    """:func:`~ultr_core.clickmodels.compare.compare_click_models`'s result: the sessions it trained and scored on,
    what the readers repaired (``notes``), every model's :class:`ModelFit` (and every ranker's), the best fit with
    its paired interval, the judgements report (with judgements) and ``relevance`` — one row per (query_id, doc_id)
    with training impressions, clicks and each model's estimate (not part of the JSON: a table of its own)."""

    train_sessions: int
    test_sessions: int
    dropped_test_sessions: int
    depth: int
    notes: tuple
    models: dict = field(default_factory=dict)           #: key → ModelFit
    rankers: dict = field(default_factory=dict)          #: key → ModelFit (rankers read as click models)
    best_fit: object = None                              #: FitComparison (None: no model scored)
    judgements: object = None                     #: JudgementReport (:func:`~.judgement_agreement.judgement_report`)
    relevance: object = None                             #: pandas.DataFrame

    @property
    def scored(self) -> dict:
        """Every scored entry, the models' then the rankers': key → ModelFit."""
        return {**self.models, **self.rankers}

    def with_(self, **changes) -> "ClickModelComparison":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """``click-models --json``: the sessions, notes, ``models`` (and ``rankers`` when there are any),
        ``best_fit`` and ``judgements`` (with judgements); ``relevance`` is its own table."""
        out = {"train_sessions": self.train_sessions, "test_sessions": self.test_sessions,
               "dropped_test_sessions": self.dropped_test_sessions, "depth": self.depth, "notes": list(self.notes),
               "models": {k: m.to_json() for k, m in self.models.items()}}
        if self.rankers:
            out["rankers"] = {k: m.to_json() for k, m in self.rankers.items()}
        out["best_fit"] = self.best_fit
        if self.judgements is not None:
            out["judgements"] = self.judgements
        return out


def parse_models(text: str | None) -> list[str]:
    """``pbm,ubm`` → keys, every unknown name refused with the names on offer; None → all models."""
    if not text:
        return [s.key for s in CLICK_MODELS]
    keys = [k.strip().lower() for k in str(text).split(",") if k.strip()]
    bad = [k for k in keys if k not in MODEL_BY_KEY]
    if bad or not keys:
        raise ConfigError("models", f"unknown click model {bad[0][:20]!r}; choose from "
                                    f"{', '.join(MODEL_BY_KEY)}" if bad else "name at least one click model")
    return list(dict.fromkeys(keys))


def train_test(data, *, name: str = "log", split: float = 0.75, test=None):
    """(train, test, dropped): the first ``split`` of ``data``'s sessions and the rest (PyClick's ``Example.py``), or
    all of them and ``test`` on one coding of pairs; test sessions of queries unseen in training dropped and
    counted.  ``data`` and ``test``: click tables or :class:`SessionArrays`."""
    arrays = data if isinstance(data, SessionArrays) else SessionArrays.from_frame(data, name)
    if test is None:
        return split_sessions(arrays, split)
    other = test if isinstance(test, SessionArrays) else SessionArrays.from_frame(test, name)
    if other.depth != arrays.depth:
        raise ConfigError("--test", f"the test log shows {other.depth} results per session, the training log "
                                  f"{arrays.depth}: a click model's rank parameters score lists of the depth it was "
                                  "fitted on — give a test log of the same depth (or use the split instead)")
    train, test_s = join_sessions(arrays, other)
    seen = np.isin(test_s.query, np.unique(train.query))
    return train, test_s.subset(seen), int((~seen).sum())


def _entry(spec, model, scored: dict, seconds: float, chosen, notes: list) -> ModelFit:
    """A fitted model's entry: its held-out scores, bias parameters, seconds (fit and score), learned prior and — for
    a fit by an optimiser — whether it converged (a note when a cap stopped it; the models fitted by counting or a
    fixed number of EM steps have no ``converged``)."""
    converged = getattr(model, "converged", None)
    if converged is False:
        notes.append(f"{spec.label}: the optimiser stopped at its iteration cap before converging — its figures are "
                     "from its last step")
    return ModelFit.scored(spec.label, scored, bias=model.bias(), seconds=round(seconds, 3), prior=chosen or None,
                           converged=converged)


def compare_click_models(data, name: str = "log", *, models=None, split: float = 0.75, test=None, on_model=None,
                         stop=None, identifiability: bool = False, judgements=None, include_prior: bool = False,
                         seed: int = 0, prior: str = DEFAULT_PRIOR,
                         rankers: dict | None = None) -> ClickModelComparison:
    """Fit every model in ``models`` on the first ``split`` of the sessions of ``data`` (a click table or
    :class:`SessionArrays`) — or on all of them with ``test`` (the same kinds) as the test log — and score it on
    the test sessions: a :class:`~ultr_core.clickmodels.compare.ClickModelComparison` with ``train_sessions``,
    ``test_sessions``, ``dropped_test_sessions`` (queries unseen in training), ``notes`` (what the readers repaired)
    and, per model, a :class:`~ultr_core.clickmodels.compare.ModelFit` (its scores, bias parameters and ``seconds``);
    ``relevance`` is a table of one row per (query_id, doc_id) with training impressions, clicks, each model's
    estimate and DBN's and SDBN's satisfaction.  ``on_model(done, total, label)`` is called as models finish;
    ``stop`` (an Event) set between two models ends the comparison early with the models done so far.
    ``identifiability``: each model also gets the Fisher information's rank and its unidentified and weak parameters
    (:mod:`~ultr_core.clickmodels.information`).  ``relevance`` flags every pair whose estimate the data cannot
    support (``prior_dominated``, :mod:`~ultr_core.clickmodels.judgement_agreement`); with ``judgements``
    (:class:`~ultr_core.logs.judgements.Judgements`) every model's estimates are also scored against them
    (``judgements`` per model, and the file's counts and the clicks-vs-judges verdict under ``judgements``).
    ``prior``: "auto" (each model its record's: the learned prior for DCM and DCM-ML, PyClick's for the rest),
    "pyclick" (one success in two trials for every pair) or "learned" (:mod:`~.prior`) for every model; each
    learned prior's choice under the model's ``prior``.  ``rankers``: key → (label, ``score(pair_keys)`` → one score
    per pair), rankers trained
    on the log's training sessions elsewhere (ULTR methods on a log with features); each is read as a click model
    through a logistic link (:class:`~ultr_core.clickmodels.scored.ScoredPBM`) and scored beside the models, under
    ``rankers`` (its score a column of ``relevance``, judged with them)."""
    keys = parse_models(models) if not isinstance(models, list) else models
    if prior not in PRIORS:
        raise ConfigError("--prior", f"choose one of {', '.join(PRIORS)}")
    tr, te, dropped, pair_keys = _tables(data, name, split, test)
    if identifiability:
        _in_memory(tr, "--identifiability")
    rel = _relevance_frame(tr, pair_keys)
    if not rel["clicks"].any():
        from ultr_core.logs.clicklog import NO_CLICKS
        raise ConfigError("log", NO_CLICKS)
    if te.n_sessions == 0:
        raise ConfigError("split", "no test session's query occurs in training: nothing to score")
    notes = _notes(data, test)
    fitted = _fit_models(keys, tr, pair_keys, rel, prior=prior, seed=seed, identifiability=identifiability,
                         on_model=on_model, stop=stop)
    ranked = _fitted_rankers(rankers or {}, tr, pair_keys, rel)
    scored, moments, seconds = score_models({k: v[1] for k, v in (fitted | ranked).items()}, te)
    models = {key: _entry(spec, model, scored[key], fit_s + seconds[key], chosen, notes).with_(
                  identifiability=info[0] if info else None)
              for key, (spec, model, fit_s, chosen, *info) in fitted.items()}
    ranker_fits = {k: ModelFit.scored(label, scored[k], bias=model.bias(), seconds=round(fit_s + seconds[k], 3))
                   for k, (label, model, fit_s) in ranked.items()}
    labels = {k: m.label for k, m in (models | ranker_fits).items()}
    out = ClickModelComparison(train_sessions=tr.n_sessions, test_sessions=te.n_sessions,
                               dropped_test_sessions=dropped, depth=tr.depth, notes=tuple(notes), models=models,
                               rankers=ranker_fits, best_fit=fit_comparison(moments, labels), relevance=rel)
    if judgements is not None and models:
        from ultr_core.clickmodels.judgement_agreement import judge_comparison
        out = judge_comparison(out, judgements, include_prior=include_prior, seed=seed)
    return out


def _fit_models(keys, tr, pair_keys, rel: pd.DataFrame, *, prior: str, seed: int, identifiability: bool, on_model,
                stop) -> dict:
    """Each model of ``keys`` fitted on ``tr``: key → (spec, model, seconds, learned prior[, Fisher summary]); its
    relevance (and satisfaction) a column of ``rel``."""
    fitted, shared = {}, {}
    for i, key in enumerate(keys):
        if stop is not None and stop.is_set():
            break
        spec, t0 = MODEL_BY_KEY[key], time.perf_counter()
        table, chosen = ((tr, None) if model_prior(spec, prior) == "pyclick"
                         else _learned(spec, tr, pair_keys, seed, shared))
        model = spec.cls().fit(table)
        fitted[key] = (spec, model, time.perf_counter() - t0, chosen)
        if identifiability:
            from ultr_core.clickmodels.information import information_summary, model_information
            labels = [f"{q}/{d}" for q, d in zip(rel["query_id"], rel["doc_id"])]
            fitted[key] += (information_summary(model_information(model, tr, key), labels),)
        rel[spec.label] = model.relevance()
        if hasattr(model, "sat"):
            rel[f"{spec.label} satisfaction"] = model.sat
        if on_model is not None:
            on_model(i + 1, len(keys), spec.label)
    return fitted


def fit_with_prior(spec, table: SessionTable, pair_keys: pd.DataFrame, *, prior: str = DEFAULT_PRIOR,
                   seed: int = 0):
    """``spec``'s model fitted on ``table`` with the attractiveness ``prior`` ("auto", "pyclick" or "learned") — the
    fit the comparison makes, for a caller that needs one model (the counterfactual evaluation's re-ranking)."""
    if prior not in PRIORS:
        raise ConfigError("--prior", f"choose one of {', '.join(PRIORS)}")
    if model_prior(spec, prior) == "pyclick":
        return spec.cls().fit(table)
    return spec.cls().fit(_learned(spec, table, pair_keys, seed, {})[0])


def _learned(spec, tr: SessionTable, pair_keys: pd.DataFrame, seed: int, shared: dict):
    """(the training table with ``spec``'s learned prior, what was chosen); the models fitted by gradient take
    PBM's choice (searched once, kept in ``shared``) with a PBM baseline."""
    from dataclasses import replace

    from ultr_core.clickmodels.models import PBM
    pair_query = pd.factorize(pair_keys["query_id"], sort=True)[0]
    def search(cls):                    # each class searched once per comparison
        if cls not in shared:
            shared[cls] = learned_prior(cls, tr, pair_query, seed=seed)
        return shared[cls]

    if spec.inference != "gradient":
        p, chosen = search(spec.cls)
    else:
        p, chosen = learned_prior(spec.cls, tr, pair_query, seed=seed, choice=search(PBM)[1].with_(chosen_by="pbm"),
                                  base_cls=PBM)
    return replace(tr, attr_prior=p), chosen


def _fitted_rankers(rankers: dict, tr, pair_keys: pd.DataFrame, rel: pd.DataFrame) -> dict:
    """Each ranker's scores on the log's pairs read as a click model (:class:`ScoredPBM`) fitted on ``tr``: key →
    (label, model, seconds); its relevance a column of ``rel``."""
    from ultr_core.clickmodels.scored import ScoredPBM
    out = {}
    for key, (label, score) in rankers.items():
        t0 = time.perf_counter()
        model = ScoredPBM(score(pair_keys)).fit(tr)
        out[key] = (label, model, time.perf_counter() - t0)
        rel[label] = model.relevance()
    return out


def _in_memory(tr, flag: str) -> None:
    """Refuse ``flag`` on training patterns read from disk chunk by chunk: the Fisher information holds every
    pattern."""
    if not isinstance(tr, SessionTable):
        raise ConfigError(flag, f"needs the training patterns in memory, and this log has {tr.rows:,} distinct "
                                f"(result list, click) patterns, more than the {tr.in_memory_rows:,} held: raise "
                                "--memory-limit (2 kB a pattern), fit a sample of its sessions, or leave the flag out")


def _notes(data, test) -> list[str]:
    """What the readers repaired in the training log (and the test log), to be said beside the scores."""
    notes = list(getattr(data, "notes", ()))
    notes += [f"test log: {n}" for n in getattr(test, "notes", ())]
    return notes


def _tables(data, name: str, split: float, test):
    """(train patterns, test patterns, dropped test sessions, pair keys) of ``data``: split patterns as DuckDB built
    them (:class:`~ultr_core.clickmodels.patterns.SplitPatterns`), or sessions compressed here."""
    from ultr_core.clickmodels.patterns import SplitPatterns
    if isinstance(data, SplitPatterns):
        return data.train, data.test, data.dropped, data.pair_keys
    train, test_s, dropped = train_test(data, name=name, split=split, test=test)
    return train.compress(), test_s.compress(), dropped, train.pair_keys


def _relevance_frame(train: SessionTable, pair_keys: pd.DataFrame) -> pd.DataFrame:
    """One row per (query, document) pair of the log with its training impressions and clicks, and whether the
    data can support an estimate for it (``prior_dominated``:
    :data:`~ultr_core.clickmodels.judgement_agreement.RULE`)."""
    from ultr_core.clickmodels.judgement_agreement import prior_dominated
    n, c, rank_sum = train.per_pair()
    mean_rank = rank_sum / np.maximum(n, 1e-12)
    return pair_keys.assign(impressions=n.astype(np.int64), clicks=c.astype(np.int64),
                            mean_rank=np.where(n > 0, mean_rank, np.nan), prior_dominated=prior_dominated(train))
