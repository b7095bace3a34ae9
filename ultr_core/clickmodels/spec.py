"""The record of the click-model table (:mod:`~ultr_core.clickmodels.registry`), apart from the table so that an
extension module (:mod:`ultr_core.extensions`) can build records while the table is being built."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.constraints import Options, Rule, validate

__all__ = ["ClickModelSpec"]


@dataclass(frozen=True)
class ClickModelSpec:
    """One click model: key (CLI name), label, its class, the inference (``mle``: counting, ``em``: 50 EM
    iterations, ``gradient``: maximum likelihood by L-BFGS, :mod:`~ultr_core.clickmodels.gradient`), citation, the
    parameters it fits, what its relevance estimate is, and its colour in every chart.
    Everything a model *does* — fit, likelihoods, sampling, its transition rule, its default continuation and what
    the recovery study checks — is its class's (:class:`~ultr_core.clickmodels.models.ClickModel`); a model
    simulated users can follow (a *user model*, ``cls.USER_MODEL``) has ``behaviour``, one sentence on how its
    simulated users click."""

    key: str
    label: str
    cls: type
    inference: str
    cite: str
    params: str
    relevance: str
    colour: str = ""
    behaviour: str = ""
    #: what identifiability needs for its users besides a connected graph (``ig --users``, the Upload page); "" none
    ig_condition: str = ""
    #: the attractiveness prior it is fitted with by default (``--prior auto``): "pyclick" (one success in two
    #: trials) or "learned" (:mod:`~ultr_core.clickmodels.prior`), whichever fits held-out sessions of sparse logs
    #: better (docs/click_models.md)
    prior: str = "pyclick"

    CONSTRAINTS = {
        "key": [Rule(lambda k: isinstance(k, str) and k.isidentifier() and k.islower(), "a lower-case identifier")],
        "label": [Rule(lambda s: isinstance(s, str) and s, "a label")],
        "cls": [Rule(lambda c: isinstance(c, type) and all(hasattr(c, m) for m in ("fit", "full", "conditional")),
                     "a click-model class (fit, full, conditional)")],
        "inference": [Options("mle", "em", "gradient")],
        "cite": [Rule(lambda s: isinstance(s, str) and s, "a citation")],
        "params": [Rule(lambda s: isinstance(s, str) and s, "what it fits")],
        "relevance": [Rule(lambda s: isinstance(s, str) and s, "what its relevance estimate is")],
        "colour": [Rule(lambda c: isinstance(c, str) and len(c) == 7 and c[0] == "#", "a colour #rrggbb")],
        "behaviour": [Rule(lambda s: isinstance(s, str), "one sentence (user models)")],
        "ig_condition": [Rule(lambda s: isinstance(s, str), "a condition in words, or ''")],
        "prior": [Options("pyclick", "learned")],
    }

    def __post_init__(self):
        validate(self, where=f"click model {self.key!r}")
        if self.cls.USER_MODEL and not self.behaviour:
            from ultr_core.errors import ConfigError
            raise ConfigError(f"click model {self.key!r}.behaviour", "a user model says how its users click")

    @property
    def sampler(self):
        """Its class's ``sample`` when simulated users can follow it, else None."""
        return self.cls.sample if self.cls.USER_MODEL else None

    @property
    def gamma(self) -> float | None:
        """The continuation its simulated users go on with by default (None: it has none)."""
        return self.cls.DEFAULT_GAMMA

    def continuation_problem(self, gamma: float | None) -> str | None:
        """Why ``gamma`` cannot drive its users (its class's ``MAX_GAMMA`` and ``GAMMA_RULE``), or None."""
        top = getattr(self.cls, "MAX_GAMMA", None)
        if gamma is None or top is None or gamma <= top:
            return None
        return f"with {self.label} users {self.cls.GAMMA_RULE}; got {gamma:g}"

    @property
    def position_only(self) -> bool:
        """Examination by position (and context) alone: Theorem 1's setting, where coupling and contexts apply."""
        return self.cls.POSITION_ONLY

    def continuation_by_rank(self, gamma: float | None, eta: float, n: int):
        return self.cls.continuation_by_rank(gamma, eta, n)
