"""What every click model is (:class:`ClickModel`: fit, predict, sample, in CLAX's spirit) and the cascade family's
shared scan (:class:`Cascade`), with PyClick's constants and the click-vector helpers the models share; the models
themselves are in :mod:`~ultr_core.clickmodels.models`, :mod:`~ultr_core.clickmodels.ubm`,
:mod:`~ultr_core.clickmodels.cascade_ml` and :mod:`~ultr_core.clickmodels.trust`."""
from __future__ import annotations

import numpy as np

from ultr_core.clickmodels import samplers as smp

__all__ = ["ClickModel", "Cascade", "EM_ITERATIONS", "PROB_MIN", "PYCLICK_CAP"]

#: EM iterations (PyClick's EMInference.ITERATION_NUM)
EM_ITERATIONS = 50
#: the smallest probability used where a model says 0 (PyClick's PROB_MIN)
PROB_MIN = 1e-6
#: where PyClick caps an EM estimate (1 − PROB_MIN)
PYCLICK_CAP = 1 - PROB_MIN


def _observed(full: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """P(the observed click) from P(click): p where clicked, 1 − p elsewhere."""
    return np.where(clicks, full, 1 - full)


def _last_click(clicks: np.ndarray) -> np.ndarray:
    """Rank (0-based) of each pattern's last click; D when there is none (PyClick's get_last_click_rank)."""
    d = clicks.shape[1]
    last = d - 1 - np.argmax(clicks[:, ::-1], axis=1)
    return np.where(clicks.any(1), last, d)


def _first_click(clicks: np.ndarray) -> np.ndarray:
    return np.where(clicks.any(1), np.argmax(clicks, axis=1), clicks.shape[1])




class ClickModel:
    """A click model owns what every part of the app asks of it (CLAX's ``ClickModel`` in spirit): ``fit(table)`` →
    self; ``full(table)`` and ``conditional(table)`` → (P, D) arrays; ``relevance()`` → one estimate per (query,
    document) pair; ``bias()`` → its bias parameters; and, for a model simulated users can follow
    (``USER_MODEL``), ``sample`` and ``examination`` with the one signature of :mod:`~ultr_core.clickmodels.samplers`;
    for the recovery study, ``generating`` (its parameters as a log was drawn), ``recovered`` (the fitted ones in
    the same layout) and ``use_generating``."""

    attr: np.ndarray
    #: simulated users can follow it (it has ``sample``)
    USER_MODEL = False
    #: the continuation γ its simulated users go on with by default (None: it has none)
    DEFAULT_GAMMA: float | None = None
    #: examination depends on the position (and context) alone: the setting of Identifiability Matters' Theorem 1,
    #: of LBD's coupling and of contextual position bias
    POSITION_ONLY = False

    #: the fitted probability arrays whose Fisher information :mod:`~ultr_core.clickmodels.information` measures
    INFO_PARAMS: tuple = ("attr",)
    IG_MEANING, IG_SHORT = "examine by the clicks above", "examination follows the clicks above"    # its users
    examined_click = staticmethod(lambda attract, gamma, positions=None: attract)    # P(click | examined)

    def fit(self, t):
        raise NotImplementedError

    def statistics(self, t) -> list | None:
        """What ``fit`` sums from ``t`` before its attractiveness prior enters — a counting model's sufficient
        statistics, so that one pass serves fits under many priors (:meth:`from_statistics`); None for a model
        fitted iteratively, whose fit reads the prior on every pass."""
        return None

    def from_statistics(self, stats: list, attr_prior: tuple):
        """The fit of :meth:`statistics`' ``stats`` under ``attr_prior``: ``fit(t)`` is
        ``from_statistics(statistics(t), t.attr_prior)``."""
        raise NotImplementedError(f"{type(self).__name__} is fitted iteratively")

    def torch_click_probability(self, P: dict, t):
        """P(c_r = 1 | c_<r) per pattern and rank from the tensors ``P`` (name → probabilities)."""
        raise NotImplementedError(f"{type(self).__name__} has no likelihood in torch")

    def torch_log_likelihood(self, P: dict, t):
        """Per pattern, ln P(its click vector) as a torch function of ``P`` (name → probabilities)."""
        import torch
        p = self.torch_click_probability(P, t).clamp(1e-300, 1 - 1e-16)
        c = torch.from_numpy(np.asarray(t.clicks, bool))
        return (torch.where(c, torch.log(p), torch.log1p(-p)) * torch.from_numpy(t.mask)).sum(1)

    def relevance(self) -> np.ndarray:
        return self.attr

    def bias(self) -> dict:
        return {}

    def conditional(self, t) -> np.ndarray:
        return _observed(self.full(t), t.clicks)

    @classmethod
    def continuation_by_rank(cls, gamma: float | None, eta: float, n: int) -> np.ndarray | None:
        """Its continuation at positions 1 … n (γ at every position; None for a model without one)."""
        return None if gamma is None else np.full(n, float(gamma))

    @classmethod
    def sample(cls, attract, shown, curve, *, gamma, rng):
        raise NotImplementedError(f"{cls.__name__} is not a user model")

    @classmethod
    def generating(cls, alpha: np.ndarray, curve: np.ndarray, gamma: float | None) -> dict:
        """Parameter name → the value a recovery log was drawn with, in the fitted model's layout."""
        return {"attr": alpha}

    def recovered(self, name: str) -> np.ndarray:
        """A fitted parameter in the layout of :meth:`generating`."""
        return np.atleast_1d(np.asarray(getattr(self, name), np.float64))

    def use_generating(self, alpha: np.ndarray, gamma: float | None):
        raise ValueError(f"{type(self).__name__}: generating parameters are set for the models fitted by gradient")


class Cascade(ClickModel):
    """The cascade family: the user scans down and goes on after position p with ``transition(per, shared)`` =
    (P(go on | clicked), P(go on | not clicked)), from the per-(query, document) parameters ``per`` (attractiveness
    first) and the shared ones — one rule that the sampler and, for DBN and CCM, the fit and the likelihoods use."""

    USER_MODEL = True
    #: per-(query, document) parameters the transition reads (simulated users: each = the attractiveness)
    N_PER = 1
    #: the fitted arrays the transition reads: per (query, document) pair, then shared
    PER_NAMES, SHARED_NAMES = ("attr",), ()

    INFO_PARAMS = PER_NAMES + SHARED_NAMES

    def _shared(self, P: dict):                 # as transition reads them (fit_cascade's layout: one vector)
        import torch
        return torch.cat([P[k].reshape(-1) for k in self.SHARED_NAMES]) if self.SHARED_NAMES else []

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.INFO_PARAMS = cls.PER_NAMES + cls.SHARED_NAMES

    def torch_log_likelihood(self, P: dict, t):
        import torch

        from ultr_core.clickmodels.gradient import cascade_log_likelihood
        pairs = torch.from_numpy(np.asarray(t.pairs, np.int64))
        per = [P[k][pairs] for k in self.PER_NAMES]
        after_click, go_on = self.transition(per, self._shared(P))
        return cascade_log_likelihood(per[0], after_click, go_on, clicks=torch.from_numpy(np.asarray(t.clicks, bool)),
                                      shown=torch.from_numpy(t.mask))

    @staticmethod
    def transition(per, shared):
        raise NotImplementedError

    @staticmethod
    def form(shared):
        """The transition's affine form for the gradient fits (:func:`~ultr_core.clickmodels.gradient.fit_cascade`):
        (k, u, v, g) — after a click at rank r go on with u_r + v_r · the k-th per-pair parameter, after a skip with
        g_r — the same rule as :meth:`transition` (``tests/clickmodels/test_cascade_gradient.py`` checks both)."""
        raise NotImplementedError

    @classmethod
    def shared(cls, gamma) -> tuple:
        """The shared parameters simulated users go on with, from the one continuation knob γ."""
        return ()

    @classmethod
    def go_on(cls, attract, gamma):
        a = np.asarray(attract, np.float64)
        return cls.transition((a,) * cls.N_PER, cls.shared(gamma))

    @classmethod
    def sample(cls, attract, shown, curve, *, gamma, rng):
        return smp.sample_cascade(cls.go_on(attract, gamma), attract, shown, rng=rng)

    @classmethod
    def examination(cls, attract, shown, curve, *, gamma):
        return smp.cascade_examination(cls.go_on(attract, gamma), attract, shown)
