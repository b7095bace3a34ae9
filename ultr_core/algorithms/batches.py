"""What a learner's step and construction read, as typed records instead of string-keyed dicts (issue #45): one
:class:`Batch` per kind of training step and the :class:`TrainContext` of a fit.

Every learner has one protocol (rax's one signature per concept): ``Learner(config, n_features, n_positions,
context)`` builds it, ``loss(batch) -> (loss tensor, {name: float})`` is one step's objective, ``score(X)`` ranks
and ``observation()`` is its per-position curve or None.  The fits around it share one name and return type:
``fit(log, dataset, config) -> FitResult`` trains a ranker (:func:`ultr_core.algorithms.fit`; a selection method
through its record's fitter, ``fitter(SelectionJob) -> FitResult``), a click model's ``fit(table) -> self``
(:mod:`ultr_core.clickmodels`), and the identifiability study's count-table fits ``fit_counts(...) ->
EmbeddingResult`` (:mod:`ultr_core.identifiability.embedding`).

>>> import torch
>>> b = Batch(X=torch.zeros(2, 3, 4), clicks=torch.zeros(2, 3), shown=torch.ones(2, 3, dtype=torch.bool))
>>> b.X.shape[1], b.labels is None, TrainContext().click_model
(3, True, {})
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

__all__ = ["Batch", "SelectionBatch", "PairBatch", "TrainContext"]


class _OnDevice:
    def to(self, device):
        """The batch with every tensor moved to ``device`` (non-blocking)."""
        return replace(self, **{f.name: getattr(self, f.name).to(device, non_blocking=True) for f in fields(self)
                                if getattr(self, f.name) is not None})


@dataclass
class Batch(_OnDevice):
    """A step of lists: features ``X`` (B, L, F), ``clicks`` (B, L) float, ``shown`` (B, L) bool mask, and where a
    learner reads them, true ``labels`` (B, L) (Oracle), examination ratios ``tau`` (B, L) (HTE) and the split
    ``rows`` (B, L) of the documents (−1 for none; the per-document propensities of policy-aware IPS and DR)."""

    X: object
    clicks: object
    shown: object
    labels: object = None
    tau: object = None
    rows: object = None


@dataclass
class SelectionBatch(_OnDevice):
    """A step of CLD's Tobit loss: candidate features ``X`` (N, F), ``selected`` (N,) bool, ``target`` (N,) w·c."""

    X: object
    selected: object
    target: object


@dataclass
class PairBatch(_OnDevice):
    """A step of CLD_pair: the pair's features ``Xi``, ``Xj`` (N, F), selected flags ``si``, ``sj`` and ``delta``
    = w_i c_i − w_j c_j."""

    Xi: object
    Xj: object
    si: object
    sj: object
    delta: object = None


@dataclass
class TrainContext:
    """What a fit knows about its log besides the batches: the propensities it may divide by (``propensity``: true
    or estimated; ``true_propensity``), the log's click model (its metadata; ``convention`` of its curve), the
    session arrays, the seeded generators of the fit, ``exposure(curve)`` (per split row, the expectation of a
    position curve under the logging policy: :meth:`~ultr_core.simulation.simulator.ClickSimulator.exposure`) and
    ``affine`` — the estimated (α_k, β_k) of trust bias when the fit estimates its propensities."""

    true_propensity: object = None
    propensity: object = None
    convention: str = "eye_tracking"
    click_model: dict = field(default_factory=dict)
    sessions: object = None
    rng: object = None
    generator: object = None
    exposure: object = None
    affine: object = None
