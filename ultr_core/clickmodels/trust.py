"""Trust bias (Agarwal, Wang, Li, Bendersky & Najork, WWW 2019; Vardasbi, Oosterhuis & de Rijke, CIKM 2020): a
result at position p is examined with θ_p, then clicked with ε⁺_p when relevant and ε⁻_p when not.

Simulated users follow Vardasbi et al.'s ``trust_1`` policy (``AliVard/trust-bias-CIKM2020``,
``trust_bias/preprocess/click_policy.json``): ε⁺_p = 0.98 − (p − 1)/100 and ε⁻_p = γ/p with γ = 0.65 (the one
continuation knob of the user-model table; ``trust_3`` is γ = 0.35); θ_p is the simulation's position curve. With a
graded relevance probability α the click probability is θ_p (ε⁻_p + (ε⁺_p − ε⁻_p) α) — their binary case when α is 0
or 1.

Fitted on a log, only the affine form is seen: P(c_p) = b_p + s_p α_qd with s_p = θ_p (ε⁺_p − ε⁻_p) and b_p = θ_p ε⁻_p
(their α_p and β_p), so α is recovered up to an affine map at best (docs/identifiability_trust_bias.md).  The fit is
maximum likelihood by L-BFGS with PyClick's one-in-two prior on every parameter, as DBN's and CCM's
(:mod:`~ultr_core.clickmodels.gradient`); b = σ(u), s = (1 − b) σ(v) keeps every probability below 1.

>>> Trust.continuation_by_rank(0.65, 1.0, 3).round(4).tolist()
[[0.98, 0.97, 0.96], [0.65, 0.325, 0.2167]]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ultr_core.clickmodels.models import PROB_MIN, ClickModel

__all__ = ["Trust", "fit_affine_counts", "AffineFit", "affine_log_likelihood", "AFFINE_GTOL"]


def _eps(gamma, n: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(gamma, np.float64)
    if g.ndim == 2:
        g = np.concatenate([g, np.repeat(g[:, -1:], max(n - g.shape[1], 0), axis=1)], axis=1)
        return g[0, :n], g[1, :n]
    p = np.arange(1, n + 1, dtype=np.float64)
    return 0.98 - (p - 1) / 100, float(g) / p


class Trust(ClickModel):
    """Trust-bias users (module docstring); fitted as P(c_p) = noise_p + signal_p · α_qd."""

    USER_MODEL = True
    #: ε⁻ at position 1: Vardasbi et al.'s trust_1 (0.65/p)
    DEFAULT_GAMMA = 0.65
    #: what the "truth" curve of the observation charts is for its users (in full, and in one line for a tile)
    TRUTH_NOTE = ("truth: trust-bias users' click signal θ_p(ε⁺_p − ε⁻_p) — how much a click at p rises with "
                  "relevance, what Affine-IPS and DR divide by; IPS divides by θ_p alone (and false clicks, θ_p ε⁻_p, "
                  "stay in)", "truth: the click signal θ(ε⁺ − ε⁻) of trust-bias users.")
    #: γ = ε⁻_1 must stay below ε⁺_1 = 0.98 with a margin: at 0.98 a click at position 1 says nothing about
    #: relevance (its click signal θ_1(ε⁺_1 − ε⁻_1) is 0: no curve can be normalised, training failed — issue #60)
    MAX_GAMMA = 0.95
    GAMMA_RULE = ("γ is ε⁻ at position 1 and must stay at most 0.95, below ε⁺_1 = 0.98 (a relevant result is clicked "
                  "more often than a non-relevant one; at 0.98 a click at position 1 says nothing about relevance)")
    INFO_PARAMS = ("attr", "signal", "noise")
    #: what the identifiability graph's verdict means for these users (the Playground's IG box, ``ig``)
    IG_SHORT = "relevance only up to an affine map"
    IG_MEANING = ("click with trust bias (affine in relevance: a connected graph gives relevance only up to an affine "
                  "map — the order, not the ratios)")

    @classmethod
    def continuation_by_rank(cls, gamma, eta, n):
        """(ε⁺_p, ε⁻_p) for p = 1 … n as a (2, n) array."""
        if gamma is None:
            return None
        return np.stack(_eps(gamma, n))

    @staticmethod
    def examined_click(attract, gamma, positions=None):
        """ε⁻ + (ε⁺ − ε⁻)·α, per position along the last axis (or at the 1-based ``positions`` of the rows)."""
        if positions is None:
            plus, minus = _eps(gamma, np.shape(attract)[-1])
        else:
            positions = np.asarray(positions, np.int64)
            plus, minus = (e[positions - 1] for e in _eps(gamma, int(positions.max())))
        return minus + (plus - minus) * np.asarray(attract)

    @staticmethod
    def examination(attract, shown, curve, *, gamma):
        return np.broadcast_to(curve, np.shape(attract))

    @staticmethod
    def sample(attract, shown, curve, *, gamma, rng):
        exam = np.broadcast_to(curve, np.shape(attract))
        p = exam * Trust.examined_click(attract, gamma)
        return (rng.random(np.shape(attract), dtype=np.float32) < p) & shown, exam

    def fit(self, t, max_iter: int = 500):
        import torch
        import torch.nn.functional as F

        from ultr_core.clickmodels.gradient import attr_log_prior
        # clicks are independent given the rank: the (pair, rank) cells suffice
        pair, rank, n, k = (torch.from_numpy(np.asarray(x, dt)) for x, dt in
                            zip(t.cells(), (np.int64, np.int64, np.float64, np.float64)))
        total = float(t.total_weight)
        a = torch.zeros(t.n_pairs, dtype=torch.float64, requires_grad=True)
        u = torch.full((t.depth,), -2.0, dtype=torch.float64, requires_grad=True)
        v = torch.zeros(t.depth, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([a, u, v], max_iter=max_iter, line_search_fn="strong_wolfe", tolerance_grad=1e-9,
                                tolerance_change=1e-12, history_size=20)

        def closure():
            opt.zero_grad()
            noise = torch.sigmoid(u)[rank]
            p = (noise + (1 - noise) * torch.sigmoid(v)[rank] * torch.sigmoid(a)[pair]).clamp(1e-12, 1 - 1e-12)
            ll = (k * torch.log(p) + (n - k) * torch.log1p(-p)).sum()
            prior = attr_log_prior(a, t.attr_prior) + sum((F.logsigmoid(x) + F.logsigmoid(-x)).sum() for x in (u, v))
            loss = -(ll + prior) / total
            loss.backward()
            return loss
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            opt.step(closure)
        finally:
            torch.set_num_threads(old)
        from ultr_core.clickmodels.gradient import lbfgs_converged
        self.converged = lbfgs_converged(opt, max_iter)
        with torch.no_grad():
            self.attr = np.minimum(torch.sigmoid(a).numpy().copy(), 1 - PROB_MIN)
            self.noise = torch.sigmoid(u).numpy().copy()
            self.signal = (1 - self.noise) * torch.sigmoid(v).numpy()
        return self

    def full(self, t):
        return self.noise[None, :] + self.signal[None, :] * self.attr[t.pairs]

    def torch_click_probability(self, P, t):
        return P["noise"][None, :] + P["signal"][None, :] * P["attr"][np.asarray(t.pairs, np.int64)]

    def bias(self):
        return {"signal": self.signal.tolist(), "noise": self.noise.tolist()}


@dataclass(frozen=True)
class AffineFit:
    """Trust bias's affine click model fitted on counts (:func:`fit_affine_counts`): ``signal`` s_p and ``noise``
    b_p per rank, ``attr`` a_d per document, with b_p + s_p·a_d ≤ 1 everywhere; ``log_likelihood`` at the fit;
    ``converged`` (the optimiser's own verdict, or a projected gradient below :data:`AFFINE_GTOL`) and the
    optimiser's ``message``, ``iterations``."""

    signal: np.ndarray
    noise: np.ndarray
    attr: np.ndarray
    log_likelihood: float
    converged: bool
    message: str = ""
    iterations: int = 0

    def probability(self, pair, position) -> np.ndarray:
        """b_p + s_p·a_d of (document ``pair``, 1-based ``position``) cells — in [0, 1] by construction."""
        k = np.asarray(position, np.int64) - 1
        return self.noise[k] + self.signal[k] * self.attr[np.asarray(pair, np.int64)]


#: the projected gradient (of the mean log-likelihood per impression) below which an affine fit counts as converged
AFFINE_GTOL = 1e-6
#: L-BFGS-B's relative tolerance on the objective for a fit started from another (a bootstrap resample): on a
#: 20,000-session trust-bias log the log-likelihood ends 3·10⁻⁵ below the 10⁻¹⁵ fit's and s_r/s_1 within 2·10⁻⁴ —
#: far inside the resamples' spread — in 64 % of its iterations
RESAMPLE_FTOL = 1e-15


def affine_log_likelihood(p, clicks, shown) -> float:
    """Σ c log p + (n − c) log(1 − p), cells at p = 0 or 1 with no contrary impression adding 0."""
    p, c, n = np.asarray(p, np.float64), np.asarray(clicks, np.float64), np.asarray(shown, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.where(c > 0, c * np.log(p), 0.0) + np.where(n - c > 0, (n - c) * np.log1p(-p), 0.0)
    return float(ll.sum())


def fit_affine_counts(pair, position, clicks, *, shown, n_pairs: int, depth: int, max_iter: int = 3000,
                      start: "AffineFit | None" = None) -> AffineFit:
    """Trust bias's affine click model P(click) = b_p + s_p · a_d fitted by maximum likelihood on a count table —
    one row per (document ``pair``, 1-based ``position``) with its ``clicks`` and ``shown`` impressions.  Examination
    does not depend on other clicks, so counts suffice: any list length, any depth.

    The constraint b_p + s_p·a_d ≤ 1 (a probability) is built into the coordinates: s_p = (1 − b_p)·e_p with
    (a, e, b) in [0, 1] — the click is a noise click (b) or, failing that, an examined (e) attractive (a) result
    (the latent form of Vardasbi et al.'s affine model).  L-BFGS-B in those box coordinates, started from the
    documents' CTR or from ``start`` (a bootstrap resample's from the full log's fit).  Its result is checked
    (:class:`AffineFit`'s ``converged``).  (s, b) are fixed only up to the affine map of
    docs/identifiability_trust_bias.md — use ratios such as s_p/s_1.  (Earlier coordinates kept a, s, b in [0, 1]
    each but not their sum: where a cell passed 1 the clipped objective went flat, L-BFGS-B stopped "ABNORMAL"
    after a few steps and fitted probabilities exceeded 1.)

    >>> f = fit_affine_counts([0, 0, 1, 1], [1, 2, 1, 2], [80, 40, 30, 15], shown=[100] * 4, n_pairs=2, depth=2)
    >>> bool(f.signal[1] < f.signal[0] and f.attr[0] > f.attr[1]), f.converged
    (True, True)
    >>> f.probability([0, 1], [1, 2]).round(2).tolist()
    [0.8, 0.15]
    """
    from scipy.optimize import minimize
    pair, k = np.asarray(pair, np.int64), np.asarray(position, np.int64) - 1
    c, n = np.asarray(clicks, np.float64), np.asarray(shown, np.float64)
    total = max(float(n.sum()), 1.0)
    eps = 1e-12

    def objective(x):
        a, e, b = x[:n_pairs], x[n_pairs:n_pairs + depth], x[n_pairs + depth:]
        ea = e[k] * a[pair]
        p = b[k] + (1 - b[k]) * ea
        q = np.clip(p, eps, 1 - eps)
        g = c / q - (n - c) / (1 - q)                     # d ll / d p per cell
        grad = np.concatenate([np.bincount(pair, g * (1 - b[k]) * e[k], n_pairs),
                               np.bincount(k, g * (1 - b[k]) * a[pair], depth),
                               np.bincount(k, g * (1 - ea), depth)])
        return -(c * np.log(q) + (n - c) * np.log1p(-q)).sum() / total, -grad / total

    x0 = _affine_start(start, pair, c, n, n_pairs, depth)
    scale = _diagonal_scale(x0, pair, k, n, n_pairs, depth, total)

    def scaled(y):                       # the same objective in coordinates y = x·√(diagonal information)
        value, grad = objective(y / scale)
        return value, grad / scale

    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):    # L-BFGS-B's BLAS gains 10 % from a second core here and costs a busy one
        res = minimize(scaled, x0 * scale, jac=True, method="L-BFGS-B", bounds=list(zip(np.zeros(len(x0)), scale)),
                       options=dict(maxiter=int(max_iter), maxfun=2 * int(max_iter), ftol=1e-15 if start is None
                                    else RESAMPLE_FTOL, gtol=1e-12))
    x = np.clip(res.x / scale, 0.0, 1.0)
    grad = objective(x)[1]
    free = ((x > 0) | (grad < 0)) & ((x < 1) | (grad > 0))          # the projected gradient's components
    pg = float(np.abs(grad[free]).max(initial=0.0))
    a, e, b = x[:n_pairs], x[n_pairs:n_pairs + depth], x[n_pairs + depth:]
    sig = (1 - b) * e
    ll = affine_log_likelihood(b[k] + sig[k] * a[pair], c, n)
    msg = res.message if isinstance(res.message, str) else res.message.decode()
    return AffineFit(sig, b, a, ll, bool(res.success or pg < AFFINE_GTOL), msg, int(res.nit))


def _diagonal_scale(x, pair, k, n, n_pairs: int, depth: int, total: float) -> np.ndarray:
    """√ of the diagonal of the expected information (per impression) at ``x`` = (a, e, b): L-BFGS-B in coordinates
    scaled by it — a document's a touches a few cells, a rank's e and b thousands, and unscaled the fit took 800
    iterations per bootstrap resample on 20,000 sessions."""
    a, e, b = x[:n_pairs], x[n_pairs:n_pairs + depth], x[n_pairs + depth:]
    ea = e[k] * a[pair]
    p = np.clip(b[k] + (1 - b[k]) * ea, 0.02, 0.98)        # a start at a bound must not set the scale
    w = n / (p * (1 - p))
    diag = np.concatenate([np.bincount(pair, w * ((1 - b[k]) * e[k]) ** 2, n_pairs),
                           np.bincount(k, w * ((1 - b[k]) * a[pair]) ** 2, depth),
                           np.bincount(k, w * (1 - ea) ** 2, depth)])
    return np.sqrt(np.maximum(diag / total, 1e-12))


def _affine_start(start, pair, c, n, n_pairs: int, depth: int) -> np.ndarray:
    """(a, e, b) to start from: the documents' CTR scaled to [0.01, 0.99], e = 0.3, b = 0.05; or ``start``'s."""
    if start is None:
        ctr = np.bincount(pair, c, n_pairs) / np.maximum(np.bincount(pair, n, n_pairs), 1)
        return np.concatenate([np.clip(ctr / max(ctr.max(), 1e-9), 0.01, 0.99), np.full(depth, 0.3),
                               np.full(depth, 0.05)])
    e0 = np.divide(start.signal, 1 - start.noise, out=np.ones(depth), where=start.noise < 1)
    return np.clip(np.concatenate([start.attr, e0, start.noise]), 0.0, 1.0)
