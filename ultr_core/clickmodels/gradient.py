"""Maximum likelihood for the cascade models with latent satisfaction — DBN and CCM — by gradient (L-BFGS on the
exact log-likelihood of the observed click vectors, as CLAX fits click models), the default since PyClick's EM for
them does not increase the likelihood: on DBN clicks drawn with γ = 0.9 its training log-likelihood rises for five
iterations, then falls as γ runs to 1 (docs/click_models.md, "Parameter recovery").

The objective is the log-likelihood of the patterns plus the log-density of PyClick's prior, one success in two
trials for every parameter — Beta(2, 2), so a (query, document) pair never seen in training keeps ½ — or, for the
attractiveness, the table's learned prior (:mod:`~ultr_core.clickmodels.prior`), divided by the number of sessions.
Parameters are logits; the likelihood is the cascade recursion of :func:`~ultr_core.clickmodels.cascade_ml._tail`
written in torch (float64), one pass over the ranks, vectorised over patterns; the fits take its gradient from a reverse
pass written out by hand (:func:`cascade_log_likelihood_fast`, equal to autograd's to 1e-13).
"""
from __future__ import annotations

import numpy as np

__all__ = ["cascade_log_likelihood", "cascade_log_likelihood_fast", "fit_cascade", "attr_log_prior", "history_size"]

#: the L-BFGS iteration cap (each iteration a few passes over the patterns).  A cap, not the stopping rule: fits stop
#: on the tolerances below.  Logs whose lists barely change need more than 100: PyClick's Yandex sample (DBN 184,
#: DCM-ML 118) and the edge corpus's Yandex-like log (DBN 144–221) stopped at the old cap of 100 (issue #62)
MAX_ITER = 500
#: the fit has converged when an iteration changes the objective (mean log-likelihood per session, prior included)
#: by less than CHANGE_TOL or its largest gradient is below GRAD_TOL.  10⁻⁹ per session is far below the sampling
#: noise of a mean log-likelihood (about 0.5/√N, above 5·10⁻⁶ for any log of up to 10¹⁰ sessions); 10⁻¹² kept DBN
#: and CCM at the cap on every log of 100,000 sessions or more (issue #62: held-out log-likelihood equal to 10⁻⁷)
GRAD_TOL, CHANGE_TOL = 1e-9, 1e-9
#: patterns per chunk of the likelihood's gradient (≈ 100 MB of autograd state for 10 ranks)
CHUNK = 100_000
#: torch threads of a fit: its tensors are a few hundred thousand values, where intra-op threads gain little when
#: the machine is idle and spin against other processes when it is not (issue #49: DBN 128 s instead of 6 s on a busy
#: 2-core machine with two threads; docs/benchmarks.md, "Click models under load")
FIT_THREADS = 1
#: a start is kept this far from 0 and 1 (logits within ±6.9)
START_CLIP = 1e-3
#: L-BFGS keeps the last HISTORY steps, fewer where their (step, gradient change) pairs — two float64 vectors of
#: every parameter each — would take more than HISTORY_BYTES: on 2 M pairs DBN's 20 took 1.28 GB, the largest
#: share of a 100 M-row fit's peak; 10 gave the same printed fit, 0.63 GB less peak and 17 % less time (issue #62)
HISTORY, HISTORY_BYTES = 20, 700_000_000


def cascade_log_likelihood(a, after_click, go_on, *, clicks, shown=None):
    """Per pattern, Σ_r ln P(c_r | c_<r) of a cascade that examines rank 0, goes on after a click at r with
    ``after_click[:, r]`` and after a skipped examined rank with ``go_on``; ``a`` the attractiveness (torch);
    ``shown`` (bool, or None for all) the ranks each pattern shows — a list ends there."""
    import torch
    exam = torch.ones(a.shape[0], dtype=a.dtype)
    total = torch.zeros(a.shape[0], dtype=a.dtype)
    for r in range(a.shape[1]):
        c = clicks[:, r]
        p_click = a[:, r] * exam
        p = torch.where(c, p_click, 1 - p_click).clamp_min(1e-300)
        total = total + (torch.log(p) if shown is None else torch.where(shown[:, r], torch.log(p), 0.0))
        exam = torch.where(c, after_click[:, r], exam * go_on * (1 - a[:, r]) / p)
    return total


def _cascade_function():
    """The cascade log-likelihood as one autograd node with its gradient written out (a reverse pass over the ranks):
    autograd's graph of the recursion — a dozen nodes per rank — cost more than half of a DBN fit (issue #62: 163 of
    302 s on 750,000 patterns).  Built on first use (torch imports late)."""
    import torch

    class CascadeLogLikelihood(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, after_click, go_on, clicks, shown):     # torch.autograd.Function: apply passes by position
            n, depth = a.shape
            # rank-major copies: each rank's values contiguous (the recursion reads one rank at a time)
            aT, AT = a.t().contiguous(), after_click.t().contiguous()
            cT, sT = clicks.t().contiguous(), shown.t().to(a.dtype).contiguous()
            gT = go_on.expand(n, depth).t()
            exam = torch.empty((depth + 1, n), dtype=a.dtype)
            p = torch.empty((depth, n), dtype=a.dtype)
            exam[0] = 1.0
            total = torch.zeros(n, dtype=a.dtype)
            for r in range(depth):
                q = aT[r] * exam[r]
                torch.where(cT[r], q, 1 - q, out=p[r])
                p[r].clamp_min_(1e-300)
                total += sT[r] * torch.log(p[r])
                torch.where(cT[r], AT[r], exam[r] * gT[r] * (1 - aT[r]) / p[r], out=exam[r + 1])
            ctx.save_for_backward(aT, gT, cT, sT, exam, p)
            ctx.go_on_shape = go_on.shape
            return total

        @staticmethod
        def backward(ctx, grad_total):
            aT, gT, cT, sT, exam, p = ctx.saved_tensors
            depth, n = aT.shape
            da, dA, dg = (torch.zeros((depth, n), dtype=aT.dtype) for _ in range(3))
            de_next = torch.zeros(n, dtype=aT.dtype)        # the adjoint of the examination after rank r
            for r in range(depth - 1, -1, -1):
                c, e, pr, ar, gr = cT[r], exam[r], p[r], aT[r], gT[r]
                dA[r] = de_next * c
                carry = de_next - dA[r]                      # the adjoint through e·g·(1 − a)/p after a skip
                inv = 1 / pr
                eg = e * gr * inv
                dp = (sT[r] * grad_total - carry * eg * (1 - ar)) * inv
                dp *= pr > 1e-300                            # the clamp passes no gradient
                dp = torch.where(c, dp, -dp)
                da[r] = dp * e - carry * eg
                dg[r] = carry * e * (1 - ar) * inv
                de_next = dp * ar + carry * gr * (1 - ar) * inv
            dgo = dg.t()
            dgo = dgo.sum_to_size(ctx.go_on_shape) if len(ctx.go_on_shape) else dgo.sum()
            return da.t(), dA.t(), dgo, None, None

    return CascadeLogLikelihood


_CASCADE = []


def cascade_log_likelihood_fast(a, after_click, go_on, *, clicks, shown=None):
    """:func:`cascade_log_likelihood` with its gradient written out (one autograd node): the fits' objective.  Not
    for batched or higher-order gradients (the information matrix uses :func:`cascade_log_likelihood`)."""
    import torch
    if not _CASCADE:
        _CASCADE.append(_cascade_function())
    go_on = torch.as_tensor(go_on, dtype=a.dtype)
    shown = torch.ones_like(clicks) if shown is None else shown
    return _CASCADE[0].apply(a, after_click.expand_as(a), go_on, clicks, shown)


def attr_log_prior(x, prior):
    """Σ over pairs of the log-density of the attractiveness prior (successes s, trials n) at logits ``x``:
    s·ln σ(x) + (n − s)·ln σ(−x) — PyClick's one in two is ln σ(x) + ln σ(−x)."""
    import torch
    import torch.nn.functional as F
    s, n = (torch.as_tensor(np.asarray(v, np.float64)) for v in prior)
    return (s * F.logsigmoid(x) + (n - s) * F.logsigmoid(-x)).sum()


def _logits(p, shape) -> "torch.Tensor":         # noqa: F821
    import torch
    q = np.clip(np.broadcast_to(np.asarray(0.5 if p is None else p, np.float64), shape), START_CLIP, 1 - START_CLIP)
    return torch.tensor(np.log(q / (1 - q)), dtype=torch.float64, requires_grad=True)


def fit_cascade(t, n_per_pair: int, n_global: int, *, transition, max_iter: int = MAX_ITER,
                start: tuple = (None, None), precondition: bool = True, shared_counts=None):
    """Fit ``n_per_pair`` per-(query, document) probabilities (the first is the attractiveness) and ``n_global``
    shared ones to the patterns ``t``; ``transition(per_pair_on_patterns, global)`` returns (after_click, go_on);
    ``start``: (per-pair, global) probabilities to start from (None: ½).
    Returns (per-pair probabilities (n_per_pair, n_pairs), global probabilities (n_global,)) as numpy arrays, and
    whether L-BFGS converged (it stopped on its gradient or change tolerance before ``max_iter``).
    ``precondition``: L-BFGS runs on each pair's logits divided by :func:`pair_scale` — a pair seen n times has
    curvature about n/N in the mean objective, the shared parameters about 1, and L-BFGS on that spread left rare
    pairs where they started (issue #62: DBN on 750,000 varied sessions 102 s at the cap → 17.8 s, converged).
    ``shared_counts``: the weighted observations each shared parameter is learnt from (DCM's λ_r: the clicks at rank
    r), which scale the shared logits likewise; None: unscaled (DBN's γ and CCM's τ see most impressions)."""
    import torch
    scale = torch.from_numpy(np.broadcast_to(pair_scale(t), (n_per_pair, t.n_pairs)).copy()) if precondition else 1.0
    with torch.no_grad():
        z = (_logits(start[0], (n_per_pair, t.n_pairs)) / scale).requires_grad_(True)
    g_scale = 1.0 if shared_counts is None else torch.from_numpy(
        1 / np.sqrt((np.asarray(shared_counts, np.float64) + 2) / float(t.total_weight)))
    with torch.no_grad():
        y = (_logits(start[1], (n_global,)) / g_scale).requires_grad_(True)
    opt = torch.optim.LBFGS([z, y], max_iter=max_iter, line_search_fn="strong_wolfe",
                            tolerance_grad=GRAD_TOL, tolerance_change=CHANGE_TOL,
                            history_size=history_size(z.numel() + y.numel()))
    closure = _objective(t, opt, z, y, scale, g_scale, transition)

    old = torch.get_num_threads()
    torch.set_num_threads(FIT_THREADS)          # small tensors: spinning OpenMP threads only cost under contention
    try:
        with torch.random.fork_rng():
            opt.step(closure)
    finally:
        torch.set_num_threads(old)
    with torch.no_grad():
        per_pair, shared = torch.sigmoid(z * scale).numpy().copy(), torch.sigmoid(y * g_scale).numpy().copy()
    return per_pair, shared, lbfgs_converged(opt, max_iter)


def _objective(t, opt, z, y, scale, g_scale, transition):
    """L-BFGS's closure over the table ``t`` for the scaled logits ``z`` (per pair) and ``y`` (shared)."""
    import torch
    import torch.nn.functional as F
    total_w = float(t.total_weight)

    def closure():
        """The objective and its gradient summed over the table's chunks (memory bounded by a chunk).  The
        probabilities of all pairs are computed once per evaluation; each chunk's gradient with respect to the
        probabilities it gathers is added into one per-pair array, which one backward pass then takes through the
        sigmoid — per chunk, autograd's gather of all pairs and its backward cost more than the recursion (issue #62:
        9.2 of 30 s of DBN on 750,000 patterns read from disk)."""
        opt.zero_grad()
        local, shared = z * scale, y * g_scale
        per_all, shared_p = torch.sigmoid(local), torch.sigmoid(shared)
        d_per, d_shared = torch.zeros_like(per_all), torch.zeros_like(shared_p)
        value = 0.0
        for c in t.chunks(CHUNK):
            # rank-major (D, P) memory seen as (P, D): the recursion reads one rank at a time, and elementwise ops
            # keep their inputs' layout, so neither the transition nor the recursion copies
            idx = torch.from_numpy(np.ascontiguousarray(np.asarray(c.pairs, np.int64).T))
            leaves = [p[idx].requires_grad_(True) for p in per_all.detach()]      # one leaf per parameter
            per = [p.t() for p in leaves]
            sp = shared_p.detach().clone().requires_grad_(True)
            after_click, go_on = transition(per, sp)
            shown = None if c.shown is None else torch.from_numpy(np.ascontiguousarray(np.asarray(c.shown, bool).T)).t()
            clicks = torch.from_numpy(np.ascontiguousarray(np.asarray(c.clicks, bool).T)).t()
            ll = (torch.from_numpy(np.asarray(c.weight, np.float64)) * cascade_log_likelihood_fast(
                per[0], after_click, go_on, clicks=clicks, shown=shown)).sum()
            ll.backward()
            for j, p in enumerate(leaves):
                if p.grad is not None:                       # CCM's transition reads only the attractiveness
                    d_per[j].index_add_(0, idx.reshape(-1), p.grad.reshape(-1))
            d_shared += sp.grad
            value -= float(ll.detach()) / total_w
        prior = attr_log_prior(local[0], t.attr_prior) + (F.logsigmoid(local[1:]) + F.logsigmoid(-local[1:])).sum() + (
            F.logsigmoid(shared) + F.logsigmoid(-shared)
        ).sum()
        # d(objective)/d(logits) = −(d ll/d p)·σ′ / N: the surrogate's gradient, d_per and d_shared held constant
        (-((per_all * d_per).sum() + (shared_p * d_shared).sum() + prior) / total_w).backward()
        return torch.tensor(value - float(prior.detach()) / total_w, dtype=torch.float64)

    return closure


def history_size(n_params: int) -> int:
    """The L-BFGS history for ``n_params`` parameters: :data:`HISTORY` steps, fewer (at least 3) where they would
    hold more than :data:`HISTORY_BYTES`.

    >>> history_size(10_000), history_size(4_000_001), history_size(10**9)
    (20, 10, 3)
    """
    return int(min(HISTORY, max(3, HISTORY_BYTES // (16 * max(n_params, 1)))))


def pair_scale(t) -> np.ndarray:
    """Each pair's logit scale: 1/√(its share of the weighted impressions + the prior's), so that in the scaled
    variables every pair's curvature is about as large as the shared parameters' (a diagonal preconditioner)."""
    from ultr_core.clickmodels.sessions import per_pair
    return 1 / np.sqrt((per_pair(t)[0] + 2) / float(t.total_weight))


def lbfgs_converged(opt, max_iter: int) -> bool:
    """Whether torch's L-BFGS stopped on a tolerance (gradient or change) rather than on its iteration or
    function-evaluation cap."""
    group = opt.param_groups[0]
    state = opt.state[group["params"][0]]
    return int(state.get("n_iter", 0)) < int(max_iter) and int(state.get("func_evals", 0)) < int(group["max_eval"])
