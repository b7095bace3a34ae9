"""The methods' hyper-parameters as the app shows them: one :class:`Hyper` per :class:`TrainConfig` field a page
offers — its label, help, URL key, choices or range and, for a field whose None means "the method's own default",
the checkbox that chooses it.  The Train page draws the widgets of exactly the fields its chosen methods read
(``params`` of their records in the algorithm table) from this table; a field with no record here is set on the
CLI (``train --set FIELD=VALUE``).

>>> [h.field for h in shown_for(["lbd"])], [h.field for h in shown_for(["naive"])]
(['lbd_lambda', 'lbd_t', 'lbd_penalty'], [])
>>> HYPER["lbd_lambda"].toggle == HYPER["lbd_t"].toggle     # one checkbox sets both to the paper's Table 3
True
"""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.algorithms.config import TrainConfig
from ultr_core.algorithms.specs import SPECS_BY_KEY
from ultr_core.constraints import Interval, Options, Rule, validate

__all__ = ["Hyper", "Toggle", "HYPERS", "HYPER", "shown_for"]


@dataclass(frozen=True)
class Toggle:
    """A checkbox that sets its fields to None (the method's own choice): label, help, URL key, default state."""

    label: str
    help: str
    url: str
    default: bool = True


@dataclass(frozen=True)
class Hyper:
    """One hyper-parameter widget: the TrainConfig ``field``, label, help, ``url`` key (``aliases``: older keys),
    its choices (``options``) or range (``lo``, ``hi``, ``step``), the widget's start value, and the :class:`Toggle`
    that sets it to None instead (None: none)."""

    field: str
    label: str
    help: str
    url: str
    default: object
    options: tuple = ()
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    toggle: Toggle | None = None
    aliases: tuple = ()

    CONSTRAINTS = {
        "field": [Rule(lambda f: f in TrainConfig.__dataclass_fields__, "a TrainConfig field")],
        "label": [Rule(lambda s: isinstance(s, str) and s, "a label")], "help": [Rule(lambda s: isinstance(s, str),
                                                                                     "text")],
        "url": [Rule(lambda s: isinstance(s, str) and s.isidentifier(), "a URL key")],
        "default": [Rule(lambda v: v is not None,
                         "a value")], "options": [Rule(lambda o: isinstance(o, tuple), "a tuple")],
        "lo": [None, Interval(float, None, None)], "hi": [None, Interval(float, None, None)],
        "step": [None, Interval(float, 0, None, closed="neither")],
        "toggle": [None, Rule(lambda t: isinstance(t, Toggle), "a Toggle")],
        "aliases": [Rule(lambda a: isinstance(a, tuple), "a tuple")],
    }

    def __post_init__(self):
        validate(self, where=f"hyper-parameter {self.field!r}")
        if bool(self.options) == (self.lo is not None):
            raise ValueError(f"{self.field}: give options or a range (lo, hi, step), not both or neither")


_TABLE3 = Toggle("LBD λ and t from the paper's Table 3 for this log's η_c",
                 "η_c 0–0.2 → λ 100, t 0.1; 0.3 → 1, 0.1; 0.4–0.5 → 1, 0.3; 0.6 → 1, 0.4 (DNN); Linear → 10000, 0.1",
                 "table3")
_TRUE_PROPENSITY = Toggle("IPS uses the true propensities",
                          "off: IPS assumes o_p = v_p^η′ with the η′ above (CLD's RQ4 misspecification)", "ips_true")

#: the hyper-parameters the app offers, in the order it shows them
HYPERS = (
    Hyper("lbd_lambda", "LBD gradient penalty λ", "Lipschitz decoupling strength (LBD §5)", "lam", 100.0,
          options=(0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0), toggle=_TABLE3),
    Hyper("lbd_t", "LBD Bernoulli t", "probability of dropping the observation term", "t", 0.1, lo=0.0, hi=0.9,
          step=0.05, toggle=_TABLE3),
    Hyper("lbd_penalty", "LBD penalty form", "official: squared norm of the gradient of the batch mean of all heads' "
          "raw logits after dropout (keep 0.1), raw logit added; paper: Σ‖∇ₓσ(h)‖ at the shown position", "penalty",
          "official", options=tuple(Options("official", "paper").values)),
    Hyper("ips_eta", "IPS assumed η (misspecification)", "IPS propensities o_p = v_p^η′; 'true propensities' "
          "overrides", "ips_eta", 1.0, lo=0.0, hi=2.0, step=0.1, toggle=_TRUE_PROPENSITY),
    Hyper("cld_gamma", "CLD ρ (γ)", "correlation of the CLD Tobit model: the official code (hyz20/CLD) fixes ρ = 0.5, "
          "the paper's text tunes γ in [0.05, 0.30]; 0 = no selection coupling", "cld_gamma", 0.5, lo=0.0, hi=0.9,
          step=0.05, aliases=("gamma",)),
)
HYPER = {h.field: h for h in HYPERS}


def shown_for(algorithms) -> list[Hyper]:
    """The widgets the chosen methods (keys) read, in table order: each method's record's ``params``."""
    wanted = {f for a in algorithms for f in SPECS_BY_KEY[a].params}
    return [h for h in HYPERS if h.field in wanted]
