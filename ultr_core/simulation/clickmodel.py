"""The click model's parts (SPEC §2): its configuration, the relevance map r(y) and the
position examination o_p — see :mod:`ultr_core.simulation` for every convention.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ultr_core.clickmodels.registry import MODEL_BY_KEY, USER_MODELS
from ultr_core.clickmodels.samplers import EYE_TRACKING as _EYE_TRACKING
from ultr_core.constraints import Interval, Options, validate
from ultr_core.errors import ConfigError

__all__ = ["EYE_TRACKING", "N_CRUX", "MAX_CONTEXTS", "MAX_LOG_ROWS", "ClickModelConfig", "binary_threshold", "binary_rule", "relevance_probability", "position_observation"]

#: eye-tracking examination probabilities of positions 1..10 (Joachims et al. 2005): defined with the samplers
EYE_TRACKING = _EYE_TRACKING
N_CRUX = 10
#: most context types a simulation may use (each has a 10-dim vector)
MAX_CONTEXTS = 1_000_000
#: most log rows (sessions × list length) one simulation may build: ≈ 50 bytes a row in memory
MAX_LOG_ROWS = 60_000_000


@dataclass(frozen=True)
class ClickModelConfig:
    """How clicks are generated.  All fields are validated; see the module docstring."""

    eta: float = 1.0                 #: position-bias severity η
    convention: str = "eye_tracking"  #: "eye_tracking" (v_p^η) or "reciprocal" ((1/p)^η, CLD)
    noise: float = 0.1               #: click noise ε
    topk: int | None = None          #: show only the first k candidates (None: all)
    coupling: float = 0.0            #: coupling level η_c (LBD individual-level observation)
    n_contexts: int = 0              #: contextual PBM with this many context types (0: off)
    logging: str = "svm"             #: "svm" (1 % labelled queries) or "given" (data order)
    logging_fraction: float = 0.01   #: share of training queries the logging ranker sees
    max_list: int | None = None      #: keep at most this many candidates per query (None: all)
    crux_scaling: str = "official"   #: "official" ([−1, 1] over all splits) or "train01" (legacy)
    intervention: bool = False       #: swap position 1 with a uniformly random shown position k per session (HTE)
    coupling_seed: int | None = 0    #: seed of the coupling direction u (None: the simulation seed)
    shuffle: float = 0.0             #: share of sessions shown in a random order (exploration); 0: always the logged order
    shuffle_blocks: int = 1          #: shuffle only within this many contiguous blocks of each list (K blocks → K IG components)
    relevance: str = "graded"        #: "graded" r(y); "binary" (CLD §6 text: grades ≥ ¾·y_max relevant, others clicked
    #                                     with ε) or "binary_official" (hyz20/CLD: ≥ 2 on 0–4 grades, ≥ 1 otherwise)
    user_model: str = "pbm"          #: how simulated users click: a user model of :mod:`ultr_core.clickmodels`
    #                                     (PBM: the papers' setting; UBM and the cascade family: issue #34)
    continuation: float | None = None  #: the cascade family's γ (DCM's λ_r = γ·(1/r)^η, DBN's γ, CCM's τ₁); None: the model's default

    #: what every field accepts (:mod:`ultr_core.constraints`; a test checks every field is declared)
    CONSTRAINTS = {
        "eta": [Interval(float, 0, 10)], "convention": [Options("eye_tracking", "reciprocal")],
        "noise": [Interval(float, 0, 1, closed="left")], "topk": [None, Interval(int, 1, None)],
        "coupling": [Interval(float, 0, 5)], "n_contexts": [Interval(int, 0, MAX_CONTEXTS)],
        "logging": [Options("svm", "given")], "logging_fraction": [Interval(float, 0, 1, closed="right")],
        "max_list": [None, Interval(int, 1, None)], "crux_scaling": [Options("official", "train01")],
        "intervention": [Options(True, False)], "coupling_seed": [None, Interval(int, 0, 2**32 - 1)],
        "shuffle": [Interval(float, 0, 1)], "shuffle_blocks": [Interval(int, 1, 100)],
        "relevance": [Options("graded", "binary", "binary_official")],
        "user_model": [Options(*USER_MODELS)], "continuation": [None, Interval(float, 0, 1)],
    }

    def __post_init__(self):
        validate(self)
        if not MODEL_BY_KEY[self.user_model].position_only and (self.coupling > 0 or self.n_contexts > 0):
            raise ConfigError("user_model", f"coupling and contexts change PBM's examination; the user model "
                                            f"{self.user_model!r} has its own — set user_model='pbm' or turn them off")

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
    def from_meta(cls, click_model: dict) -> "ClickModelConfig":
        """The configuration a log's metadata records (:meth:`to_dict`), ignoring keys this version does not know.

        >>> ClickModelConfig.from_meta({"eta": 1.5, "user_model": "dcm", "retired_knob": 3}).eta
        1.5
        """
        from dataclasses import fields
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in click_model.items() if k in known})


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


def relevance_probability(labels, max_label: int, noise: float, binary: bool | str = False) -> np.ndarray:
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


def position_observation(n_positions: int, eta: float = 1.0, convention: str = "eye_tracking",
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
