"""Learners for individual-level observation bias: LBD (Chen et al., NeurIPS 2022: Lipschitz
penalty λ and Bernoulli decoupling t), Vectorization (Chen et al., KDD 2022) and the HTE learners of
LBD's Fig. 3c.  Shared pieces (the list loss, the :class:`~.learners.Learner` base) are in :mod:`.learners`.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ultr_core.algorithms.config import lbd_table3
from ultr_core.algorithms.learners import Learner, listwise_softmax
from ultr_core.algorithms.models import ranker


class LBD(Learner):
    """Lipschitz & Bernoulli Decoupling (Chen et al., NeurIPS 2022, §5, eq. 2).

    One network outputs a relevance logit s(x) and n observation logits h_p(x), one per position
    head.  Two forms, ``lbd_penalty``:

    ``"official"`` (default; ``ultra/learning_algorithm/lbd.py`` of the official code):
        click logit ``s(x) + γ·h_p(x)`` (the raw observation logit added; Bernoulli decoupling
        γ ~ Bernoulli(1 − t) per document zeroes it) in the listwise softmax loss; penalty
        ``λ·‖∇_X mean(dropout_k(H))‖²₂`` — the squared L2 norm, over all features of the batch, of
        the gradient of the batch mean of the raw logits H of **all** position heads of every
        shown document after dropout with keep probability k = ``lbd_dropout_keep`` (0.1, as TF1's
        ``tf.nn.dropout(x, 0.1)``; kept entries scaled by 1/k).
    ``"paper"`` (the paper's text, §5):
        ``log ĉ_p = log r̂ + γ·log ô_p(x)`` with ``ô_p = σ(h_p)``; penalty
        ``λ·Σ_i ‖∇_x ô_{p_i}(x_i)‖₂`` (un-squared, per document, at the position it was shown).

    Ranking uses s(x) only.  Ablations: LBD_Lips (t = 0), LBD_Ber (λ = 0), Unlimited (both 0).
    """

    def __init__(self, cfg, n_features, n_positions, context, lam=None, t=None):
        super().__init__(cfg, n_features, n_positions, context)
        self.f = ranker(cfg, n_features, 1 + n_positions)
        paper_lam, paper_t = lbd_table3(context.click_model.get("coupling", 0.0), cfg.model)
        self.lam = (paper_lam if cfg.lbd_lambda is None else cfg.lbd_lambda) if lam is None else lam
        self.t = (paper_t if cfg.lbd_t is None else cfg.lbd_t) if t is None else t
        self.official = cfg.lbd_penalty == "official"
        self.keep = cfg.lbd_dropout_keep
        self.generator = context.generator
        self._obs = np.ones(n_positions)

    def score(self, X):
        return self.f(X)[..., 0]

    def penalty(self, X, h_all, h_disp, *, m):
        """The gradient penalty (without λ) of a batch; ``X`` must require grad."""
        mf = m.float()
        if self.official:
            H = h_all * mf[..., None]
            if self.keep < 1:
                keep = (torch.rand(H.shape, generator=self.generator, dtype=H.dtype) < self.keep).to(H)
                H = H * keep / self.keep
            target = H.sum() / (mf.sum() * h_all.shape[-1]).clamp(min=1)
            grad, = torch.autograd.grad(target, X, create_graph=True)
            return (grad ** 2).sum()
        grad, = torch.autograd.grad((torch.sigmoid(h_disp) * mf).sum(), X, create_graph=True)
        return (grad.norm(dim=-1) * mf).sum() / len(X)

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        B, L, _ = X.shape
        X = X.clone().requires_grad_(self.lam > 0)
        out = self.f(X)
        log_r = out[..., 0]
        h_all = out[..., 1:1 + L]                                           # (B, L, L): doc × position head
        idx = torch.arange(L, device=X.device)
        h_disp = h_all[:, idx, idx]                                         # the head of the shown position
        log_o = h_disp if self.official else F.logsigmoid(h_disp)
        gamma = (torch.rand(B, L, generator=self.generator) >= self.t).to(log_r)
        w = self.tau_weights(b)
        l_sv = listwise_softmax(log_r + gamma * log_o, c, m, weights=w)
        parts = {"loss": float(l_sv.detach())}
        total = l_sv
        if self.lam > 0:
            gp = self.penalty(X, h_all, h_disp, m=m)
            total = total + self.lam * gp
            parts["gradient_penalty"] = float(gp.detach())
        with torch.no_grad():
            o_each = torch.exp(h_disp - h_disp.max()) if self.official else torch.sigmoid(h_disp)
            o = ((o_each * m).sum(0) / m.sum(0).clamp(min=1)).cpu().numpy()
            seen = (m.sum(0) > 0).cpu().numpy()
            if seen[0] and o[0] > 0:                # ratios to position 1 (scale-free across batches)
                o = o / o[0]
                self._obs[:L][seen] = 0.9 * self._obs[:L][seen] + 0.1 * o[seen]
        return total, parts

    def observation(self):
        return self._obs / max(self._obs[0], 1e-12)


class Vectorization(Learner):
    """Vectorization (Chen, Liu, Liu & Sun, KDD 2022, "Scalar is Not Enough"; LBD's Table 1 baseline).

    Relevance is a vector ``r(x) ∈ R^d`` (the ranker's d outputs) and observation a vector
    ``o_p ∈ R^d`` per position (initialised to ones, frozen for the first ``vec_freeze`` steps so
    the ranker settles first); the click logit is ``⟨r(x), o_p⟩`` in the listwise softmax loss.  To
    rank, relevance is projected on a per-query **base vector** ``b(q)``: a density model maps
    features to a Gaussian ``N(μ(x), diag σ²(x))`` (μ = 1 + network output) fitted to the observation vector of the
    position
    each document was shown at (loss ``mean((μ − o_p)²/σ²) + mean(log σ²)`` + 0.001·L2 of its
    kernels, trained after ``vec_freeze`` steps), and ``b(q) = Σ_i μ(x_i)/σ²(x_i) / Σ_i 1/σ²(x_i)``
    over the query's documents; score ``⟨r(x), b(q)⟩``.  Written from the paper's description;
    the differences from the official code are in docs/conventions.md.
    """

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        d = cfg.vec_dim
        self.f = ranker(cfg, n_features, d)
        self.o = nn.Parameter(torch.ones(n_positions, d))
        self.density = nn.Sequential(nn.Linear(n_features, 256), nn.ELU(), nn.Linear(256, 64), nn.ELU(),
                                     nn.Linear(64, 2 * d))
        self.steps_done = 0

    def _density(self, X):
        out = self.density(X.detach())
        d = self.cfg.vec_dim
        # μ = 1 + net(x): the base vector starts at the observation vectors' initial value (ones),
        # so short runs rank by ⟨r, 1⟩ — the logit they trained — until the density model has fitted
        return 1.0 + out[..., :d], out[..., d:].clamp(-10, 10)

    def base_vector(self, X, mask):
        """Precision-weighted mean of μ(x) over each list's documents: (B, d)."""
        mu, log_var = self._density(X)
        w = torch.exp(-log_var) * mask[..., None]
        return (mu * w).sum(1) / w.sum(1).clamp(min=1e-9)

    def score(self, X):
        """Scores for one list (X: (L, F)) or a batch of lists (X: (B, L, F))."""
        r = self.f(X)
        if X.dim() == 2:
            b = self.base_vector(X[None], torch.ones(1, len(X), dtype=torch.bool, device=X.device))[0]
            return (r * b).sum(-1)
        b = self.base_vector(X, torch.ones(X.shape[:2], dtype=torch.bool, device=X.device))
        return (r * b[:, None, :]).sum(-1)

    def predict_lists(self, X, offsets):
        """⟨r(x), b(q)⟩ with the base vector of each query's list (``offsets``: query boundaries)."""
        dev = self.o.device
        X = torch.as_tensor(np.asarray(X, np.float32), device=dev)
        offsets = np.array([0, len(X)]) if offsets is None else np.asarray(offsets)
        q = torch.from_numpy(np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))).to(dev)
        with torch.no_grad():
            r = self.f(X)
            mu, log_var = self._density(X)
            w = torch.exp(-log_var)
            nq, d = len(offsets) - 1, self.cfg.vec_dim
            num = torch.zeros(nq, d, device=dev).index_add_(0, q, mu * w)
            den = torch.zeros(nq, d, device=dev).index_add_(0, q, w)
            b = num / den.clamp(min=1e-9)
            return (r * b[q]).sum(-1).cpu().numpy().astype(np.float64)

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        L = X.shape[1]
        frozen = self.steps_done < self.cfg.vec_freeze
        self.steps_done += 1
        o = self.o[:L].detach() if frozen else self.o[:L]
        logits = (self.f(X) * o[None]).sum(-1)
        l_click = listwise_softmax(logits, c, m)
        parts = {"loss": float(l_click.detach())}
        total = l_click
        if not frozen:
            mu, log_var = self._density(X)
            mf = m.float()[..., None]
            n = (mf.sum() * self.cfg.vec_dim).clamp(min=1)
            fit = (((mu - self.o[:L].detach()[None]) ** 2) * torch.exp(-log_var) * mf).sum() / n
            spread = (log_var * mf).sum() / n
            l2 = 0.001 * sum(0.5 * (layer.weight ** 2).sum() for layer in self.density if isinstance(layer, nn.Linear))
            total = total + fit + spread + l2
            parts["density_loss"] = float((fit + spread).detach())
        return total, parts

    def observation(self):
        """None: observation is a vector per position here, with no scalar curve to compare."""
        return None


class HTE(Learner):
    """HTE debiasing (LBD §6.3, Fig. 3c; Tian et al.'s intervention design): the listwise softmax
    loss on clicks weighted by 1/τ̂_k(x), τ̂ estimated by a T-learner on a simulated intervention
    log (:func:`ultr_core.algorithms.hte.estimate_tau`); ``hte_oracle`` uses the true o_k(x)/o_1(x)."""

    tau_kind = "estimated"

    def loss(self, b):
        objective = listwise_softmax(self.score(b.X), b.clicks, b.shown, weights=self.tau_weights(b))
        return objective, {"loss": float(objective.detach())}


class HTEOracle(HTE):
    """HTE-oracle: clicks weighted by the simulator's true 1/τ_k(x) = o_1(x)/o_k(x) (upper bound of HTE)."""

    tau_kind = "true"


class LBDHTEOracle(LBD):
    """LBD-HTE-oracle: LBD trained on the clicks corrected with the true 1/τ_k(x) (LBD §6.3)."""

    tau_kind = "true"


def _lbd_variant(lam, t, doc):
    class Variant(LBD):
        __doc__ = doc

        def __init__(self, cfg, n_features, n_positions, context):
            super().__init__(cfg, n_features, n_positions, context, lam=lam, t=t)
    return Variant


#: the LBD ablations (LBD paper, Fig. 3): named so the table of algorithms can point at them
LBDLips = _lbd_variant(None, 0.0, "LBD_Lips: LBD with t = 0 (gradient penalty only).")
LBDBer = _lbd_variant(0.0, None, "LBD_Ber: LBD with λ = 0 (Bernoulli decoupling only).")
Unlimited = _lbd_variant(0.0, 0.0, "Unlimited: LBD with λ = 0 and t = 0.")
