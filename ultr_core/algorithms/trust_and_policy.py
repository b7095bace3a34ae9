"""Learners beyond examination (issue #48): trust bias — Bayes-IPS (Agarwal et al., WWW 2019) and Affine-IPS
(Vardasbi, Oosterhuis & de Rijke, CIKM 2020) — and stochastic logging — policy-aware IPS (Oosterhuis & de Rijke,
SIGIR 2020) and the doubly robust estimator (Oosterhuis, TOIS 2023), which has both.

Each reads the affine click probabilities β_k + α_k R (:mod:`~ultr_core.algorithms.affine`: the log's true users,
or with ``propensity="estimated"`` a fit on swap interventions) and, for the policy-aware two, the expectation of a
position curve under the simulator's logging policy (``TrainContext.exposure``).  Differences from the official code
are listed in docs/conventions.md.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ultr_core.algorithms.affine import true_affine
from ultr_core.algorithms.learners import NEG, Learner, listwise_softmax
from ultr_core.algorithms.models import ranker

__all__ = ["affine_listwise", "affine_targets", "dr_targets", "BayesIPS", "AffineIPS", "PolicyAwareIPS",
           "DoublyRobust"]


def affine_targets(clicks, alpha, beta):
    """Affine-IPS's relevance estimate per shown result, (c − β_k)/α_k (Vardasbi et al. 2020's affine correction):
    its expectation is R.

    >>> affine_targets(torch.tensor([[1.0, 0.0]]), torch.tensor([0.5, 0.25]), torch.tensor([0.2, 0.1]))
    tensor([[ 1.6000, -0.4000]])
    """
    return (clicks - beta[None, :]) / alpha[None, :]


def dr_targets(clicks, shown, r_hat, *, alpha, beta, rho):
    """The doubly robust relevance estimate per logged candidate, R̂ + shown·(c − α_k R̂ − β_k)/ρ_d (Oosterhuis 2023,
    the DR estimator): its mean over a document's sessions is R when ρ_d is the expected α (unclipped) or when R̂ = R.

    >>> dr_targets(torch.tensor([[1.0, 0.0]]), torch.tensor([[True, False]]), torch.tensor([[0.5, 0.5]]),
    ...            alpha=torch.tensor([[0.5, 0.0]]), beta=torch.tensor([[0.1, 0.0]]), rho=torch.tensor([[0.4, 0.4]]))
    tensor([[2.1250, 0.5000]])
    """
    return r_hat + shown * (clicks - alpha * r_hat - beta) / rho


def affine_listwise(logits, targets, mask):
    """Mean over all lists of −Σ_i t_i log softmax(logits)_i with targets that may be negative (affine corrections):
    the gradient is linear in the targets, so its expectation is the loss's on the expected targets — every list
    counts, clicked or not (the official ``SoftmaxLoss`` weighs each list by its target sum).

    >>> l = affine_listwise(torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, -0.5]]), torch.tensor([[True, True]]))
    >>> round(float(l), 4)                   # −(1 − 0.5)·log ½
    0.3466
    """
    logp = torch.log_softmax(logits.masked_fill(~mask, NEG), dim=1)
    per_list = -(targets * mask * logp.masked_fill(~mask, 0.0)).sum(dim=1)
    return per_list.mean()


def _curves(cfg, context, n_positions):
    """(α, β) as float arrays over the shown positions: estimated or the log's truth."""
    if cfg.propensity == "estimated" and context.affine is not None:
        return context.affine()
    theta = context.true_propensity if context.propensity is None else context.propensity
    return true_affine(context.click_model, theta, n_positions)


def _clip(w, cfg):
    return w.clamp(max=cfg.max_weight or float("inf"))


class BayesIPS(Learner):
    """Bayes-IPS (Agarwal, Wang, Li, Bendersky & Najork, WWW 2019): a click at k weighted by
    P(R = 1 | C = 1, k)/θ_k, in the trust-bias EM code's form 1/(θ_k ε⁺_k + θ_k ε⁻_k) = 1/(α_k + 2β_k)
    (``AliVard/trust-bias-CIKM2020``, ``trust_bias_EM/TrustParams.py``), ÷ its value at position 1 and clipped at
    ``max_weight``; the listwise loss of IPS.  Still biased under trust bias (Vardasbi et al. 2020)."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        a, b = _curves(cfg, context, n_positions)
        z = np.maximum(np.asarray(a + 2 * b, np.float64)[:n_positions], 1e-6)
        self.register_buffer("prop", torch.tensor(z / z[0], dtype=torch.float32))

    def loss(self, b):
        w = _clip(1.0 / self.prop[:b.X.shape[1]], self.cfg)
        objective = listwise_softmax(self.score(b.X), b.clicks, b.shown, weights=w[None, :])
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        return self.prop.cpu().numpy().copy()


class AffineIPS(Learner):
    """Affine-IPS (Vardasbi, Oosterhuis & de Rijke, CIKM 2020, the affine correction): each shown document's target
    (c − β_k)/α_k, ×α_1 and with α_1/α_k clipped at ``max_weight`` — unbiased for the relevance R under trust bias
    (E[c] = β_k + α_k R) — in :func:`affine_listwise` over every session (targets of unclicked results are negative)."""

    needs_clicks = False

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        a, b = (np.asarray(x, np.float64)[:n_positions] for x in _curves(cfg, context, n_positions))
        a = np.maximum(a, 1e-6)
        self.register_buffer("alpha", torch.tensor(a / a[0], dtype=torch.float32))
        self.register_buffer("beta", torch.tensor(b, dtype=torch.float32))

    def loss(self, b):
        L = b.X.shape[1]
        targets = affine_targets(b.clicks, _clip(1.0 / self.alpha[:L], self.cfg).reciprocal(), self.beta[:L])
        objective = affine_listwise(self.score(b.X), targets, b.shown)
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        return self.alpha.cpu().numpy().copy()


class PolicyAwareIPS(Learner):
    """Policy-aware IPS (Oosterhuis & de Rijke, SIGIR 2020, the policy-aware estimator): a click on d weighted by
    1/ρ(d), ρ(d) = Σ_k π(k | d) θ_k the examination expected under the logging policy π (the simulator's ranking,
    swaps and exploration), ÷ θ_1 and clipped at ``max_weight``; the listwise loss over every logged candidate, shown
    or not — a document π never shows (ρ = 0) gets no click and no correction: unbiased only when every relevant
    document has ρ > 0 (the stochastic logging CLD's §2 says it needs)."""

    sees_candidates = True

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        theta = np.asarray(context.true_propensity if context.propensity is None else context.propensity,
                           np.float64)[:n_positions]
        rho = context.exposure(theta) / max(theta[0], 1e-9)
        self.register_buffer("rho", torch.tensor(np.r_[rho, 1.0], dtype=torch.float32))   # row −1: padding
        self.register_buffer("prop", torch.tensor(theta / max(theta[0], 1e-9), dtype=torch.float32))

    def loss(self, b):
        w = _clip(1.0 / self.rho[b.rows].clamp(min=1e-6), self.cfg)
        objective = listwise_softmax(self.score(b.X), b.clicks, b.shown, weights=w)
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        return self.prop.cpu().numpy().copy()


class DoublyRobust(Learner):
    """The doubly robust estimator (Oosterhuis, TOIS 2023; ``HarrieO/2022-doubly-robust-LTR``,
    ``utils/estimators.py: compute_weights``): each logged candidate's target R̂(d) + shown·(c − α_k R̂(d) − β_k)/ρ_d,
    with ρ_d = max(ᾱ_d, 10/√N) — ᾱ_d the α expected under the logging policy, N the log's sessions — and the direct
    method R̂ = σ(g(x)) a second tower fitted to the clicks as β_k + α_k R̂ (binary cross-entropy); unbiased when
    either R̂ or the affine model is right, and defined for documents the policy never shows (ρ = 0: R̂ alone)."""

    needs_clicks = False
    sees_candidates = True

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        a, b = (np.asarray(x, np.float64)[:n_positions] for x in _curves(cfg, context, n_positions))
        self.g = ranker(cfg, n_features)
        clip = min(10.0 / np.sqrt(max(context.sessions.n_sessions, 1)), 1.0)
        rho = np.maximum(context.exposure(a), clip)
        self.register_buffer("rho", torch.tensor(np.r_[rho, 1.0], dtype=torch.float32))
        self.register_buffer("alpha", torch.tensor(a, dtype=torch.float32))
        self.register_buffer("beta", torch.tensor(b, dtype=torch.float32))

    def loss(self, b):
        L = min(b.X.shape[1], len(self.alpha))
        alpha = F.pad(self.alpha[:L], (0, b.X.shape[1] - L))[None, :]
        beta = F.pad(self.beta[:L], (0, b.X.shape[1] - L))[None, :]
        logit_r = self.g(b.X).squeeze(-1)
        r_hat = torch.sigmoid(logit_r)
        p = (beta + alpha * r_hat).clamp(1e-6, 1 - 1e-6)
        shown = b.shown & (torch.arange(b.X.shape[1]) < L)[None, :]        # the positions the log shows
        dm = (F.binary_cross_entropy(p, b.clicks, reduction="none") * shown).sum() / shown.sum().clamp(min=1)
        with torch.no_grad():
            r = r_hat.detach()
            targets = dr_targets(b.clicks, shown, r, alpha=alpha, beta=beta, rho=self.rho[b.rows])
        rank = affine_listwise(self.score(b.X), targets, b.rows >= 0)
        return rank + dm, {"loss": float(rank.detach()), "direct_method_loss": float(dm.detach())}

    def observation(self):
        a = self.alpha.cpu().numpy()
        return a / max(a[0], 1e-9)
