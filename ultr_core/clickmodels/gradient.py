"""Maximum likelihood for the cascade models with latent satisfaction — DBN and CCM — by gradient (L-BFGS on the
exact log-likelihood of the observed click vectors, as CLAX fits click models), the default since PyClick's EM for
them does not increase the likelihood: on DBN clicks drawn with γ = 0.9 its training log-likelihood rises for five
iterations, then falls as γ runs to 1 (docs/click_models.md, "Parameter recovery").

The objective is the log-likelihood of the patterns plus the log-density of PyClick's prior, one success in two
trials for every parameter — Beta(2, 2), so a (query, document) pair never seen in training keeps ½ — or, for the
attractiveness, the table's learned prior (:mod:`~ultr_core.clickmodels.prior`), divided by the number of sessions.
Parameters are logits; the likelihood is the cascade recursion of :func:`~ultr_core.clickmodels.cascade_ml._tail`
written in torch (float64), one pass over the ranks, vectorised over patterns (the information matrix's autograd
reads it); the fits take its value and gradient from one compiled loop over each pattern's ranks
(:func:`~ultr_core.clickmodels.kernels.cascade_pass`; its value equal to this recursion's to 1e-13, its gradient to
autograd's to 1e-9).
"""
from __future__ import annotations

import numpy as np

__all__ = ["cascade_log_likelihood", "fit_cascade", "attr_log_prior", "history_size"]

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
#: the parts each chunk of patterns is split into, summed on as many threads (the compiled loop releases the GIL): a
#: fixed number, not the machine's cores, so that a fit's sums — and its bits — are the same on every machine;
#: waiting threads do not spin, so a busy machine loses nothing (issue #62)
PARTS = 2
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


def fit_cascade(t, n_per_pair: int, n_global: int, *, form, max_iter: int = MAX_ITER,
                start: tuple = (None, None), precondition: bool = True, shared_counts=None):
    """Fit ``n_per_pair`` per-(query, document) probabilities (the first is the attractiveness) and ``n_global``
    shared ones to the patterns ``t``; ``form(global)`` returns the transition's affine form (k, u, v, g): after a
    click at rank r go on with u_r + v_r · (per-pair parameter k), after a skip with g_r (``Cascade.form``);
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
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(PARTS, thread_name_prefix="cascade-fit")
    closure = _objective(t, opt, z, y, scale, g_scale, form, pool)

    old = torch.get_num_threads()
    torch.set_num_threads(FIT_THREADS)          # small tensors: spinning OpenMP threads only cost under contention
    try:
        with torch.random.fork_rng():
            opt.step(closure)
    finally:
        torch.set_num_threads(old)
        pool.shutdown()
    with torch.no_grad():
        per_pair, shared = torch.sigmoid(z * scale).numpy().copy(), torch.sigmoid(y * g_scale).numpy().copy()
    return per_pair, shared, lbfgs_converged(opt, max_iter)


def _pattern_sums(t, per: np.ndarray, form: tuple, pool) -> tuple[float, np.ndarray, list]:
    """(Σ weight · log-likelihood over the patterns of ``t``, its gradient with respect to the per-pair probabilities
    ``per``, and with respect to the transition's (u, v, g)) at ``form`` = (k, u, v, g): each chunk split into
    :data:`PARTS` runs of rows, one a thread of ``pool``, each summed into its own arrays and the parts then added in
    order (the same sums, and bits, whatever the threads' timing)."""
    from ultr_core.clickmodels.kernels import cascade_pass
    sums = [[np.zeros_like(per), *(np.zeros(t.depth) for _ in range(3))] for _ in range(PARTS)]
    no_mask = np.zeros((0, 0), bool)

    def part(c, i: int) -> float:
        rows = slice(len(c.weight) * i // PARTS, len(c.weight) * (i + 1) // PARTS)
        shown = no_mask if c.shown is None else np.ascontiguousarray(c.shown[rows], bool)
        return cascade_pass(per, np.ascontiguousarray(c.pairs[rows], np.int64),
                            np.ascontiguousarray(c.clicks[rows], bool), shown=shown,
                            weight=np.ascontiguousarray(c.weight[rows], np.float64), form=form, sums=sums[i])

    value = 0.0
    for c in t.chunks(CHUNK):
        for v in pool.map(lambda i, c=c: part(c, i), range(PARTS)):
            value += v
    for other in sums[1:]:
        for total, x in zip(sums[0], other):
            total += x
    return value, sums[0][0], sums[0][1:]


def _objective(t, opt, z, y, scale, g_scale, form, pool):
    """L-BFGS's closure over the table ``t`` for the scaled logits ``z`` (per pair) and ``y`` (shared); ``pool``
    the threads of :func:`_pattern_sums`."""
    import torch
    import torch.nn.functional as F

    from ultr_core.clickmodels.cells import release_free_memory
    total_w = float(t.total_weight)

    def closure():
        """The objective and its gradient summed over the table's chunks (memory bounded by a chunk).  The
        probabilities of all pairs are computed once per evaluation; one compiled loop a chunk
        (:func:`~ultr_core.clickmodels.kernels.cascade_pass`) gathers them, runs the recursion and adds its gradient
        into one per-pair array and the transition's (u, v, g), which one backward pass then takes through the
        sigmoid and the shared parameters."""
        opt.zero_grad()
        local, shared = z * scale, y * g_scale
        per_all, shared_p = torch.sigmoid(local), torch.sigmoid(shared)
        k, u, v, g = (x if i == 0 else torch.broadcast_to(torch.as_tensor(x, dtype=torch.float64), (t.depth,))
                      for i, x in enumerate(form(shared_p)))
        uvg = [np.ascontiguousarray(x.detach().numpy()) for x in (u, v, g)]
        ll, d_per, d_uvg = _pattern_sums(t, per_all.detach().numpy(), (k, *uvg), pool)
        value = -ll / total_w
        prior = attr_log_prior(local[0], t.attr_prior) + (F.logsigmoid(local[1:]) + F.logsigmoid(-local[1:])).sum() + (
            F.logsigmoid(shared) + F.logsigmoid(-shared)
        ).sum()
        # d(objective)/d(logits) = −(d ll/d p)·σ′ / N: the surrogate's gradient, the sums held constant
        surrogate = (per_all * torch.from_numpy(d_per)).sum() + sum(
            (x * torch.from_numpy(dx)).sum() for x, dx in zip((u, v, g), d_uvg) if x.requires_grad)
        (-(surrogate + prior) / total_w).backward()
        release_free_memory()    # the pages of this evaluation's freed per-pair arrays go back (glibc keeps them)
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
