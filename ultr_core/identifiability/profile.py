"""The profile-likelihood check of one factor (issue #46, item 2), as Fris & Hager's parameter shift
(``stanfris/practical-identifiability-ultr``): fix δ = log(o_k / o_ref) at shifted values, refit every other
parameter to convergence, and keep the δ whose likelihood-ratio statistic 2 (ℓ̂ − ℓ_p(δ)) stays below the χ²₁
quantile — an interval that follows the likelihood's real shape (asymmetric, or open on one side where the data
cannot bound it), beside the Fisher interval δ̂ ± z·se that assumes it is quadratic.

The profile runs on the cells of the factor's information component that the Fisher fit uses (the same
documents: :mod:`~ultr_core.identifiability.uncertainty`), so the two intervals describe the same estimator.

>>> import numpy as np
>>> from ultr_core.identifiability.uncertainty import factor_uncertainty
>>> doc, fac = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
>>> n, c = np.full(4, 400.0), np.array([160.0, 80.0, 80.0, 40.0])
>>> p = profile_interval(factor_uncertainty(doc, fac, n, c=c, n_docs=2, n_factors=2, component=np.zeros(2, int)), 1)
>>> round(p.estimate, 3), [round(p.lower, 3), round(p.upper, 3)], [round(p.fisher_lower, 3), round(p.fisher_upper, 3)]
(0.5, [0.424, 0.586], [0.425, 0.588])
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2

from ultr_core.errors import ConfigError
from ultr_core.identifiability.newton import log_likelihood, newton_step
from ultr_core.identifiability.uncertainty import Z90, FactorUncertainty

__all__ = ["ProfileInterval", "profile_interval", "SPAN"]

#: the search for an endpoint stops this far (in log ratio) from the estimate: beyond it the side is open
SPAN = 12.0
_TOL = 1e-10
#: Newton steps per constrained refit; one that stops here is counted in the result
MAX_REFIT_STEPS = 100


@dataclass(frozen=True)
class ProfileInterval:
    """o_k / o_ref: the estimate, the profile-likelihood interval (``lower``/``upper``; None where the likelihood
    stays within the χ² bound up to ×e^SPAN: that side is open) and the Fisher interval; ``curve`` holds
    (ratio, 2(ℓ̂ − ℓ_p)) points for a chart.  In a report (:func:`~.precision.profile_report`) the factor and its
    reference are named by the log's labels."""

    factor: int | str
    reference: int | str
    level: float
    estimate: float
    lower: float | None
    upper: float | None
    fisher_lower: float
    fisher_upper: float
    curve: list = field(default_factory=list)
    note: str | None = None          #: why the interval is missing (the budget ran out before its ends were found)
    #: whether every constrained refit converged, and if not how far the worst stopped from its maximum
    convergence: str = "every refit converged"

    def with_(self, **changes) -> "ProfileInterval":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """``ig --profile``'s object in the report."""
        return asdict(self)


class _Spent(Exception):
    """The budget's seconds ran out between two refits."""


class _Problem:
    """The factor's information component, renumbered; ``fit(delta)`` refits with log(o_k/o_ref) held at δ."""

    def __init__(self, u: FactorUncertainty, k: int):
        doc, fac, _ = u.cells
        n, c, fitted = u.counts
        rows = fitted & (u.block[fac] == u.block[k])
        self.docs, ld = np.unique(doc[rows], return_inverse=True)
        self.facs, lf = np.unique(fac[rows], return_inverse=True)
        self.cells = (ld.reshape(-1), lf.reshape(-1), n[rows], c[rows])
        self.D, self.F = len(self.docs), len(self.facs)
        self.k, self.ref = int(np.searchsorted(self.facs, k)), int(np.searchsorted(self.facs, u.reference[k]))
        r = u.r_free if u.r_free is not None else u.r            # the fit's own r, before the reported bound
        self.theta0 = np.r_[np.log(r[self.docs]), np.log(u.o[self.facs])]
        self.ground = np.zeros(self.F, bool)
        self.ground[[self.k, self.ref]] = True
        self.n_fits, self.unconverged = 0, []

    def loglik(self, theta) -> float:
        d, f, n, c = self.cells
        return log_likelihood(n, c, np.exp(theta[d] + theta[self.D + f]))

    def fit(self, delta: float, start) -> np.ndarray:
        theta = start.copy()
        theta[self.D + self.k] = theta[self.D + self.ref] + delta
        d, f = self.cells[0], self.cells[1]
        top = np.full(self.D, -np.inf)                   # start inside the model: every p = r·o below 1
        np.maximum.at(top, d, theta[self.D + f])
        theta[:self.D] = np.minimum(theta[:self.D], -top - 1e-6)
        for _ in range(MAX_REFIT_STEPS):
            theta, dec = newton_step(*self.cells[:3], c=self.cells[3], theta=theta, n_docs=self.D, n_factors=self.F,
                                     block=np.zeros(self.F, np.int64), grounding=self.ground)
            if abs(dec) < _TOL:
                break
        else:
            self.unconverged.append(abs(dec))    # checked, and said in the result (ProfileInterval.convergence)
        self.n_fits += 1
        return theta


def profile_interval(u: FactorUncertainty, factor: int, level: float = 0.9, *, budget=None) -> ProfileInterval:
    """The profile-likelihood interval of o_factor / o_ref at ``level`` beside the Fisher interval (module
    docstring); refused for a reference factor or one no information reaches.  ``budget``
    (:class:`~ultr_core.identifiability.pairs.Budget`): checked before every refit — past its seconds the
    interval is left out with a note (the points found so far stay in ``curve``), a closed tab stops it."""
    import time
    t0 = time.monotonic()
    k = int(factor)
    if not 0 <= k < len(u.o):
        raise ConfigError("--profile", f"factor {k} does not exist (0–{len(u.o) - 1})")
    if u.reference[k] == k:
        raise ConfigError("--profile", "this factor is its component's reference: its ratio is 1 by definition")
    if not np.isfinite(u.log_se[k]):
        raise ConfigError("--profile", "no clicked document links this factor to its reference: there is no "
                                       "likelihood to profile (unidentified)")
    P = _Problem(u, k)
    d_hat = P.theta0[P.D + P.k] - P.theta0[P.D + P.ref]
    P.theta0 = P.fit(d_hat, P.theta0)                   # the maximum on these cells: the deviance is 0 at δ̂
    best = P.loglik(P.theta0)
    bound = chi2.ppf(level, 1)
    z = float(np.sqrt(bound))
    memo = {}

    def dev(delta):
        if budget is not None and budget.spent(t0):
            raise _Spent
        theta = P.fit(delta, P.theta0)
        memo[delta] = max(0.0, 2 * (best - P.loglik(theta)))
        return memo[delta] - bound

    se = u.log_se[k]
    memo.setdefault(d_hat, 0.0)
    try:
        ends = [_endpoint(dev, d_hat, -1, se), _endpoint(dev, d_hat, +1, se)]
        for x in d_hat + se * np.linspace(-3, 3, 13):    # the curve's shape around the estimate, for the chart
            if x not in memo:
                dev(x)
        ends, note = [float(np.exp(e)) if e is not None else None for e in ends], None
    except _Spent:
        ends = [None, None]
        note = (f"the profile stopped after its budget of {budget.seconds:g} s ({len(memo)} refits): the interval "
                "is not computed; the command line (ig --profile) computes it without a budget")
    curve = [(float(np.exp(d)), float(v)) for d, v in sorted(memo.items())]
    conv = "every refit converged" if not P.unconverged else (
        f"{len(P.unconverged)} of {P.n_fits} refits stopped at {MAX_REFIT_STEPS} Newton steps (largest decrement "
        f"{max(P.unconverged):.1g}: their deviance is within about that of its maximum; a document pushed to "
        "r·o = 1 slows them)")
    return ProfileInterval(k, int(u.reference[k]), level, float(np.exp(d_hat)), *ends,
                           float(np.exp(d_hat - z * se)), float(np.exp(d_hat + z * se)), curve, note, conv)


def _endpoint(dev, d_hat: float, side: int, se: float):
    """Where the deviance crosses the bound on one side of δ̂ (brentq inside the first bracket found by doubling
    steps from the Fisher half-width), or None when it does not within :data:`SPAN`."""
    step, inner = max(Z90 * se, 1e-3), d_hat
    while abs(inner - d_hat) < SPAN:
        outer = d_hat + side * min(step, SPAN)
        if dev(outer) > 0:
            return brentq(dev, inner, outer, xtol=1e-6) if side > 0 else brentq(dev, outer, inner, xtol=1e-6)
        inner, step = outer, step * 2
    return None
