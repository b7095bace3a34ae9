"""Numerical identifiability beyond PBM (issue #46, item 6): the Fisher information of any fitted model of the
click-model table on the pattern-compressed sessions, by autograd.

Parameters are the logarithms of the model's fitted probability arrays (``INFO_PARAMS`` of its class:
attractiveness, examination, satisfaction, continuations; differentiated through their logits).  The information is
the weighted outer product of the per-pattern scores (the empirical Fisher information: each distinct click
pattern's gradient of ln P(clicks), times its session count)
— positive semi-definite everywhere, and with an exact null vector for every direction the likelihood cannot see
(PBM's scale α·a, γ/a per connected component: Theorem 1 of *Identifiability Matters* — in log coordinates an
even ±1 over the component, so no single parameter takes the blame for the scale).  Parameters no training
session touches (pairs only in the test split, impossible UBM cells) are set aside and counted.  Reported:

* the rank and the smallest eigenvalues (relative to the largest), the null space = eigenvalues below
  :data:`NULL_TOL` of the largest;
* per parameter its standard error of log p from the pseudo-inverse on the identified subspace and its share in
  the null space; *unidentified* when that share exceeds :data:`NULL_SHARE` (the parameter's level rests mostly on
  the undetermined directions: a component of a few parameters), *weak* when its 90 % interval spans more than ×2,
  else *identified* — the rule of :mod:`ultr_core.identifiability.uncertainty`.

At most :data:`MAX_PARAMETERS` parameters are analysed (dense eigen-decomposition): the per-pair parameters of the
most-shown pairs first, every shared parameter always; the rest are counted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ultr_core.logs.outputs import JsonRecord

__all__ = ["ModelInformation", "model_information", "information_summary", "InformationSummary", "WeakParameter",
           "MAX_PARAMETERS", "NULL_TOL", "NULL_SHARE"]

MAX_PARAMETERS = 2_000
NULL_TOL = 1e-9
NULL_SHARE = 0.5
_CHUNK = 256
_Z90 = 1.6448536269514722


@dataclass(frozen=True)
class ModelInformation:
    """``names`` (``attr[17]``, ``exam[3]``, …), ``log_se`` (standard error of each log p), ``null_share``,
    ``levels``; ``eigenvalues`` (ascending, ÷ the largest), ``rank``, ``null_dimension``; ``set_aside``: parameters
    no training session touches; ``not_analysed``: beyond :data:`MAX_PARAMETERS`."""

    model: str
    names: list
    log_se: np.ndarray
    null_share: np.ndarray
    levels: list
    eigenvalues: np.ndarray
    rank: int
    null_dimension: int
    set_aside: int
    not_analysed: int
    counts: dict = field(default_factory=dict)


def _parameters(model, t):
    """Flattened logits of the model's INFO_PARAMS with their names and the pair each per-pair entry belongs to."""
    names, values, owner = [], [], []
    for k in model.INFO_PARAMS:
        v = np.atleast_1d(np.asarray(getattr(model, k), np.float64)).reshape(-1)
        names += [f"{k}[{i}]" for i in range(len(v))]
        values.append(v)
        owner.append(np.arange(len(v)) if len(v) == t.n_pairs and k not in ("exam", "ctr", "cont", "tau")
                     else np.full(len(v), -1))
    return names, np.concatenate(values), np.concatenate(owner)


def _scores(model, t, theta: np.ndarray, shapes):
    """(patterns × parameters) per-pattern gradients of ln P(clicks) w.r.t. the logits, chunk by chunk."""
    import torch
    x = torch.tensor(theta, dtype=torch.float64, requires_grad=True)

    def tensors(flat):
        out, lo = {}, 0
        for k, n, shape in shapes:
            out[k] = torch.sigmoid(flat[lo:lo + n]).reshape(shape)
            lo += n
        return out
    ll = model.torch_log_likelihood(tensors(x), t)
    J = np.zeros((len(ll), len(theta)))
    for lo in range(0, len(ll), _CHUNK):
        hi = min(lo + _CHUNK, len(ll))
        eye = torch.zeros((hi - lo, len(ll)), dtype=torch.float64)
        eye[np.arange(hi - lo), np.arange(lo, hi)] = 1.0
        (g,) = torch.autograd.grad(ll, x, grad_outputs=eye, is_grads_batched=True, retain_graph=True)
        J[lo:hi] = g.numpy()
    return J


def model_information(model, t, key: str = "") -> ModelInformation:
    """The Fisher information of the fitted ``model`` on the session patterns ``t`` and what it identifies."""
    import torch
    names, p, owner = _parameters(model, t)
    shapes = [(k, int(np.size(getattr(model, k))), np.shape(np.atleast_1d(getattr(model, k))))
              for k in model.INFO_PARAMS]
    p = np.clip(p, 1e-9, 1 - 1e-9)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        J = _scores(model, t, np.log(p / (1 - p)), shapes) / (1 - p)[None, :]      # ∂/∂ log p
    finally:
        torch.set_num_threads(old)
    touched = np.abs(J).sum(0) > 0
    shown = np.bincount(t.pairs.ravel(), (t.weight[:, None] * t.mask).ravel(), t.n_pairs)
    prio = np.where(owner >= 0, shown[np.maximum(owner, 0)], np.inf)
    keep = np.flatnonzero(touched)
    keep = keep[np.argsort(-prio[keep], kind="stable")][:MAX_PARAMETERS]
    keep.sort()
    info = (J[:, keep] * t.weight[:, None]).T @ J[:, keep]
    return _summarise(key or type(model).__name__, [names[i] for i in keep], info,
                      int((~touched).sum()), int(touched.sum() - len(keep)))


def _summarise(model: str, names: list, info: np.ndarray, set_aside: int, not_analysed: int) -> ModelInformation:
    lam, V = np.linalg.eigh(info)
    top = max(float(lam[-1]), 1e-300) if len(lam) else 1.0
    null = lam <= NULL_TOL * top
    share = (V[:, null] ** 2).sum(1)
    inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, lam))
    se = np.sqrt((V ** 2) @ inv)
    with np.errstate(over="ignore"):
        span = np.exp(2 * _Z90 * se)
    levels = np.where(share > NULL_SHARE, "unidentified", np.where(span > 2.0, "weak", "identified")).tolist()
    counts = {k: levels.count(k) for k in ("identified", "weak", "unidentified")}
    return ModelInformation(model, names, se, share, levels, lam / top, int((~null).sum()), int(null.sum()),
                            set_aside, not_analysed, counts)


@dataclass(frozen=True, kw_only=True)
class WeakParameter(JsonRecord):
    """A weakly identified parameter and the standard error of its log."""

    parameter: str
    log_se: float


@dataclass(frozen=True, kw_only=True)
class InformationSummary(JsonRecord):
    """A fitted click model's identifiability (``click-models --identifiability``): the Fisher information's rank of
    its ``parameters``, the null space's dimension, the five smallest eigenvalues (÷ the largest), the parameters by
    level (``counts``), up to ten unidentified and the weakest (:class:`WeakParameter`), those set aside and those
    not analysed, and the rule."""

    parameters: int
    rank: int
    null_dimension: int
    smallest_eigenvalues: tuple
    counts: dict
    unidentified: tuple
    weakest: tuple
    set_aside: int
    not_analysed: int
    rule: str

    def line(self, label: str) -> str:
        """One line of the text report."""
        weakest = f"; weakest: {', '.join(w.parameter for w in self.weakest[:3])}" if self.weakest else ""
        return (f"{label}: Fisher rank {self.rank} of {self.parameters} parameters (null space "
                f"{self.null_dimension}); " + ", ".join(f"{v} {k}" for k, v in self.counts.items()) + weakest)


def information_summary(info: ModelInformation, pair_labels=None, top: int = 10) -> InformationSummary:
    """Rank, null dimension, the smallest eigenvalues, counts, the unidentified and weakest parameters (per-pair ones
    named by ``pair_labels`` when given)."""
    def name(n: str) -> str:
        k, _, i = n.partition("[")
        if pair_labels is not None and k in ("attr", "sat") and int(i[:-1]) < len(pair_labels):
            return f"{k}({pair_labels[int(i[:-1])]})"
        return n
    se = np.asarray(info.log_se)
    weak = [i for i in np.argsort(-se) if info.levels[i] == "weak"][:top]
    return InformationSummary(
        parameters=len(info.names), rank=info.rank, null_dimension=info.null_dimension,
        smallest_eigenvalues=tuple(float(x) for x in info.eigenvalues[:5]), counts=info.counts,
        unidentified=tuple(name(info.names[i]) for i in np.flatnonzero(np.array(info.levels) == "unidentified"))[:top],
        weakest=tuple(WeakParameter(parameter=name(info.names[i]), log_se=float(se[i])) for i in weak),
        set_aside=info.set_aside, not_analysed=info.not_analysed,
        rule=f"empirical Fisher information of the fitted model in log-probability coordinates; null: eigenvalue ≤ "
             f"{NULL_TOL:g} × the largest; unidentified: over {NULL_SHARE:.0%} of the parameter in the null space; "
             "weak: its 90 % interval spans more than ×2")
