"""The click model's parts (SPEC §2): its configuration, the relevance map r(y) and the
position examination o_p — see :mod:`ultr_core.simulation` for every convention.
"""
from __future__ import annotations

from dataclasses import asdict, field, make_dataclass

import numpy as np

from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.clickmodels.samplers import EYE_TRACKING as _EYE_TRACKING
from ultr_core.constraints import validate
from ultr_core.errors import ConfigError
from ultr_core.simulation.params import CLICK_PARAMS, MAX_CONTEXTS, PARAM, resolve_name

__all__ = ["EYE_TRACKING", "N_CRUX", "MAX_CONTEXTS", "MAX_LOG_ROWS", "ClickModelConfig", "binary_threshold",
           "binary_rule", "relevance_probability", "position_observation", "signal_curve",
           "affine_curves"]

#: eye-tracking examination probabilities of positions 1..10 (Joachims et al. 2005): defined with the samplers
EYE_TRACKING = _EYE_TRACKING
N_CRUX = 10
#: most log rows (sessions × list length) one simulation may build: ≈ 50 bytes a row in memory
MAX_LOG_ROWS = 60_000_000


class _ClickModelMethods:
    """What a click model's configuration does; its fields, defaults and constraints are the schema's
    (:data:`~ultr_core.simulation.params.CLICK_PARAMS`)."""

    def __post_init__(self):
        validate(self)
        users = MODEL_BY_KEY[self.user_model]
        if not users.position_only and (self.coupling > 0 or self.n_contexts > 0):
            raise ConfigError("user_model", f"LBD's coupling and the contexts are defined for PBM users only (they "
                                            f"change PBM's examination); the user model {self.user_model!r} is not "
                                            f"PBM — set user_model='pbm' or turn coupling and contexts off")
        problem = users.continuation_problem(self.gamma)
        if problem:
            raise ConfigError("continuation", problem)

    @property
    def gamma(self) -> float | None:
        """The continuation parameter the user model draws with (``continuation`` or the model's default).

        >>> ClickModelConfig(user_model="dbn").gamma, ClickModelConfig(user_model="dcm", continuation=0.3).gamma
        (0.9, 0.3)
        """
        return MODEL_BY_KEY[self.user_model].gamma if self.continuation is None else self.continuation

    def continuation_curve(self, n_positions: int) -> np.ndarray | None:
        """The user model's continuation at positions 1 … n (DCM: λ_r = γ·(1/r)^η; see
        :meth:`ultr_core.clickmodels.models.ClickModel.continuation_by_rank`), None when it has none.

        >>> ClickModelConfig(user_model="dcm", continuation=0.8, eta=2.0).continuation_curve(2).tolist()
        [0.8, 0.2]
        """
        return MODEL_BY_KEY[self.user_model].continuation_by_rank(self.gamma, self.eta, n_positions)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_values(cls, values: dict, **changes) -> "ClickModelConfig":
        """The configuration from parameter values by their schema names or older spellings (CLI options, page
        widgets, links); parameters of the log (sessions, seeds) are left out, those not given keep their defaults.

        >>> ClickModelConfig.from_values({"users": "dbn", "gamma": 0.5, "contexts": 0, "sessions": 9}).continuation
        0.5
        """
        named = {resolve_name(k): v for k, v in values.items()}
        return cls(**{**{PARAM[n].attr: v for n, v in named.items() if n in PARAM and PARAM[n].on_click}, **changes})

    @classmethod
    def from_meta(cls, click_model: dict) -> "ClickModelConfig":
        """The configuration a log's metadata records (:meth:`to_dict`), ignoring keys this version does not know.

        >>> ClickModelConfig.from_meta({"eta": 1.5, "user_model": "dcm", "retired_knob": 3}).eta
        1.5
        """
        from dataclasses import fields
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in click_model.items() if k in known})



#: How clicks are generated: one field per parameter of the schema (:mod:`ultr_core.simulation.params`, which
#: says what each is and accepts), all validated on construction.
ClickModelConfig = make_dataclass(
    "ClickModelConfig", [(p.attr, p.kind if p.default is not None else p.kind | None, field(default=p.default))
                         for p in CLICK_PARAMS],
    bases=(_ClickModelMethods,), frozen=True,
    namespace={"CONSTRAINTS": {p.attr: list(p.domain) for p in CLICK_PARAMS},
               "__doc__": "How clicks are generated: the fields of the simulation schema's click parameters "
                          "(ultr_core.simulation.params), validated on construction."})
ClickModelConfig.__module__ = __name__

def binary_threshold(max_label: int, rule: bool | str = "binary") -> int:
    """The grade from which a binarised label is relevant.  ``rule="binary"`` (the CLD paper's text,
    §6): ⌈¾·y_max⌉ — 3 of 0–4, 2 of MQ2008's 0–2; ``"binary_official"`` (hyz20/CLD, the data
    preparation of its simulation): 2 on 0–4 grades (Yahoo!, WEB10K), 1 otherwise.

    >>> [binary_threshold(m) for m in (1, 2, 4)], [binary_threshold(m, "binary_official") for m in (1, 2, 4)]
    ([1, 2, 3], [1, 1, 2])
    """
    if rule == "binary_official":
        return 2 if max_label >= 4 else 1
    return max(int(np.ceil(0.75 * max(max_label, 1))), 1)


def binary_rule(relevance: str) -> bool | str:
    """The ``binary`` argument of :func:`relevance_probability` for a ``ClickModelConfig.relevance``.

    >>> binary_rule("graded"), binary_rule("binary"), binary_rule("binary_official")
    (False, 'binary', 'binary_official')
    """
    return relevance if relevance in ("binary", "binary_official") else False


def relevance_probability(labels, max_label: int, noise: float, *, binary: bool | str = False) -> np.ndarray:
    """r(y) = ε + (1 − ε)(2^y − 1)/(2^y_max − 1); binarised (``binary`` True/"binary" or
    "binary_official"): 1 for y ≥ :func:`binary_threshold`, else ε.

    >>> relevance_probability([0, 2, 4], 4, 0.1).round(3).tolist()
    [0.1, 0.28, 1.0]
    >>> relevance_probability([0, 2, 3, 4], 4, 0.1, binary=True).tolist()
    [0.1, 0.1, 1.0, 1.0]
    >>> relevance_probability([0, 1, 2, 4], 4, 0.1, binary="binary_official").tolist()
    [0.1, 0.1, 1.0, 1.0]
    """
    y = np.asarray(labels, dtype=np.float64)
    if binary:
        return np.where(y >= binary_threshold(max_label, binary), 1.0, noise)
    denom = (2.0 ** max(max_label, 1)) - 1
    return noise + (1 - noise) * (2.0 ** y - 1) / denom


def position_observation(n_positions: int, *, eta: float = 1.0, convention: str = "eye_tracking",
                         topk: int | None = None) -> np.ndarray:
    """The position-based examination curve o_1..o_n (0 past top-k)."""
    p = np.arange(1, n_positions + 1)
    if convention == "eye_tracking":
        o = EYE_TRACKING[np.minimum(p, len(EYE_TRACKING)) - 1] ** eta
    elif convention == "reciprocal":
        o = (1.0 / p) ** eta
    else:
        raise ConfigError("convention", f"unknown convention {convention!r}")
    if topk is not None:
        o = np.where(p <= topk, o, 0.0)
    return o


def affine_curves(click_model: dict, theta) -> tuple[np.ndarray, np.ndarray]:
    """(α_p, β_p) of users described by a log's ``click_model`` metadata with examination ``theta``: a result of
    relevance R at p is clicked with β_p + α_p R, α_p = θ_p·(e_p(1) − e_p(0)), β_p = θ_p·e_p(0), e the user model's
    ``examined_click`` — θ and 0 under PBM and the cascades, θ(ε⁺ − ε⁻) and θε⁻ under trust bias.

    >>> a, b = affine_curves({"user_model": "trust"}, np.array([1.0, 0.5]))
    >>> a.round(4).tolist(), b.round(4).tolist()                     # ε⁺ = 0.98, 0.97; ε⁻ = 0.65, 0.325
    ([0.33, 0.3225], [0.65, 0.1625])
    """
    cfg = ClickModelConfig.from_meta(click_model)
    theta = np.asarray(theta, np.float64)
    pos = np.arange(1, len(theta) + 1)
    cls, gamma = MODEL_BY_KEY[cfg.user_model].cls, cfg.continuation_curve(len(theta))
    e0, e1 = (cls.examined_click(np.full(len(theta), r), gamma, pos) for r in (0.0, 1.0))
    return theta * (e1 - e0), theta * e0


def signal_curve(log) -> np.ndarray | None:
    """The click signal per position of a simulated log's users — how much a click at p rises with relevance,
    α_p of :func:`affine_curves` — the curve a debiasing method's own should match: the examination θ_p itself under
    PBM and the cascade family, θ_p(ε⁺_p − ε⁻_p) under trust bias (where IPS's θ_p is not it).  None without truth."""
    theta = log.true_observation_curve()
    meta = log.meta.get("click_model")
    if theta is None or meta is None:
        return theta
    return affine_curves(meta, theta)[0]
