"""A page's state as one table of settings (issue #59: the Playground's :class:`~ultr_core.app.knob.Knob` table is
the model): each :class:`Setting` names its URL key, default, type and domain, and from it derive reading a link
(a value outside the domain is corrected, with the notice the page shows), the widget's start value and the URL the
page writes back.  Pure: the pages read ``st.query_params`` and hand the text here.

>>> steps = Setting("steps", 600, int, lo=50, hi=5000)
>>> steps.parse(None), steps.parse("900"), steps.parse("9000")
((600, None), (900, None), (5000, 'steps=9000 is above 5000; using 5000'))
>>> steps.parse("ten")
(600, "steps='ten' is not valid here; using 600")
>>> Setting("model", "dnn", options=("dnn", "linear")).parse("cnn")
('dnn', "model='cnn' is not one of the choices; using dnn")
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ultr_core.constraints import Interval, Options, Rule, validate

__all__ = ["Setting", "parse_value", "TRAIN_SETTINGS", "COMPARE_SETTINGS", "SWEEPS",
           "HEATMAP_SETTINGS", "IDENTIFIABILITY_SETTINGS", "SIMULATE_SETTINGS"]


@dataclass(frozen=True)
class Setting:
    """One setting a page keeps in its URL: the key ``url``, its ``default``, the type ``cast`` and its domain
    (``lo``–``hi``, or ``options``)."""

    url: str
    default: object
    cast: type = str
    lo: float | None = None
    hi: float | None = None
    options: tuple | None = None

    CONSTRAINTS = {
        "url": [Rule(lambda q: isinstance(q, str) and q.isidentifier(), "a URL key")],
        "cast": [Options(int, float, str)],
        "lo": [None, Interval(float, None, None)], "hi": [None, Interval(float, None, None)],
        "options": [None, Rule(lambda o: isinstance(o, tuple) and len(o) > 0, "a non-empty tuple")],
    }

    def __post_init__(self):
        validate(self, where=f"setting {self.url!r}")
        if self.parse(None if self.default is None else str(self.default))[1] is not None:
            raise ValueError(f"setting {self.url!r}: its default {self.default!r} is outside its own domain")

    def parse(self, raw: str | None) -> tuple:
        """(value, notice): ``raw`` (the URL's text, None when absent) read by :func:`parse_value`."""
        return parse_value(self.url, raw, self.default, cast=self.cast, lo=self.lo, hi=self.hi, options=self.options)

    def with_default(self, default) -> "Setting":
        """The same setting with another default (one that depends on another setting, e.g. a preset's seeds)."""
        from dataclasses import replace
        return replace(self, default=default)

    def with_options(self, options: tuple) -> "Setting":
        """The same setting with the choices a page offers now (e.g. the data sets its data roots hold)."""
        from dataclasses import replace
        return replace(self, options=options)

    def to_url(self, value) -> str:
        """The URL text of ``value`` (booleans as 0/1)."""
        return str(int(value)) if isinstance(value, bool) else str(value)


def parse_value(name: str, raw: str | None, default, *, cast=str, lo=None, hi=None, options=None) -> tuple:
    """(value, notice) of a URL setting ``name`` whose text is ``raw`` (None when absent): absent → ``default``; not
    of the type ``cast``, not finite or not among ``options`` → ``default`` with a notice; outside [``lo``, ``hi``] →
    clamped with a notice.  The one reading of a link's value (every page's ``qp``)."""
    if raw is None:
        return default, None
    try:
        value = cast(raw)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        return default, f"{name}={raw[:20]!r} is not valid here; using {default}"
    if options is not None and value not in options:
        return default, f"{name}={raw[:20]!r} is not one of the choices; using {default}"
    if lo is not None and value < lo:
        return cast(lo), f"{name}={value} is below {lo}; using {lo}"
    if hi is not None and value > hi:
        return cast(hi), f"{name}={value} is above {hi}; using {hi}"
    return value, None


#: the Train page's settings besides its methods and their hyper-parameters (which have their own tables:
#: :mod:`ultr_core.algorithms.specs`, :mod:`ultr_core.algorithms.hyper`)
TRAIN_SETTINGS = (
    Setting("model", "dnn", options=("dnn", "linear")),
    Setting("lr", 0.01, float, options=(0.001, 0.003, 0.01, 0.03, 0.1)),
    Setting("steps", 600, int, lo=50, hi=5000),
    Setting("seed", 0, int, lo=0, hi=10_000),
    Setting("refs", 1, int, lo=0, hi=1),
    Setting("clicks", "log", options=("log", "online")),
)


#: the Compare page's sweeps: label → the grid key it sweeps (None: one setting, no sweep)
SWEEPS = {"none": None, "position-bias severity η": "click.eta", "top-k cut-off k": "click.topk",
          "click noise ε": "click.noise", "sessions": "n_sessions", "coupling level η_c": "click.coupling",
          "assumed η of IPS / CLD (misspecification)": "train.ips_eta,train.cld_rho_eta",
          "CLD selection coupling ρ (γ)": "train.cld_gamma",
          "user model (how simulated users click)": "click.user_model",
          "exploration (shuffled share of sessions)": "click.shuffle"}


def _compare_settings() -> tuple:
    from ultr_core.studies.presets import PRESET_SWEEPS
    return (
        Setting("preset", "custom", options=("custom", *PRESET_SWEEPS)),
        Setting("sweep", "none", options=tuple(SWEEPS)),           # default: the preset's own sweep
        Setting("seeds", 3, int, lo=1, hi=10),                     # default: the preset's own seeds
        Setting("sessions", 20_000, int, options=(5_000, 10_000, 20_000, 50_000, 100_000)),
        Setting("steps", 400, int, options=(100, 200, 400, 600, 1000)),
        Setting("guess", 1, int, lo=0, hi=1),
    )


#: the Compare page's settings besides its methods and the sweep's values (a link carries them only for its preset)
COMPARE_SETTINGS = _compare_settings()

#: the Heat-maps page's settings besides its coupling levels (a link carries seeds and steps only for its grid)
HEATMAP_SETTINGS = (
    Setting("grid", "quick", options=("quick", "paper")),
    Setting("seeds", 1, int, lo=1, hi=5),                        # default: 3 on the paper's grid
    Setting("sessions", 20_000, int, options=(5_000, 10_000, 20_000, 50_000)),
    Setting("steps", 400, int, options=(100, 200, 400, 600)),    # default: 600 on the paper's grid
    Setting("model", "dnn", options=("dnn", "linear")),
)

#: the Identifiability page's settings besides its bias columns (which depend on the log); the built-in log's K,
#: sessions and seed apply to the built-in source only
IDENTIFIABILITY_SETTINGS = (
    Setting("source", "builtin", options=("builtin", "current", "link")),   # default: the link's, else the current
    Setting("k", 2, int, lo=1, hi=5),
    Setting("sessions", 100_000, int, options=(20_000, 50_000, 100_000, 300_000)),
    Setting("seed", 0, int, lo=0, hi=10_000),
    Setting("teach", 0, int, lo=0, hi=1),
)

#: the Simulate page's data-set settings (its simulation parameters come from the schema,
#: :mod:`ultr_core.simulation.params`); the data set's options are the built-in ones plus the named data roots'
SIMULATE_SETTINGS = (
    Setting("dataset", "synthetic"),
    Setting("queries", 500, int, lo=50, hi=5000),
    Setting("k", 1, int, lo=1, hi=10),
)
