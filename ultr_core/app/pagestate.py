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
>>> levels = Setting("levels", (0.0, 0.3), float, options=(0.0, 0.3, 0.6), many=True)
>>> levels.parse("0.6,0.9,0"), levels.to_url((0.0, 0.6))
(((0.6, 0.0), "levels='0.9' is not one of the choices; left out"), '0,0.6')
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ultr_core.constraints import Interval, Options, Rule, validate

__all__ = ["Setting", "parse_value", "parse_values", "TRAIN_SETTINGS", "COMPARE_SETTINGS", "SWEEPS",
           "HEATMAP_SETTINGS", "IDENTIFIABILITY_SETTINGS", "SIMULATE_SETTINGS"]


@dataclass(frozen=True)
class Setting:
    """One setting a page keeps in its URL: the key ``url``, its ``default``, the type ``cast`` and its domain
    (``lo``–``hi``, or ``options``); ``many``: a comma-separated list of such values (``default`` a tuple), each item
    read alone (:func:`parse_values`); ``aliases``: older spellings of a choice still read, as (old, choice) pairs."""

    url: str
    default: object
    cast: type = str
    lo: float | None = None
    hi: float | None = None
    options: tuple | None = None
    many: bool = False
    aliases: tuple = ()

    CONSTRAINTS = {
        "url": [Rule(lambda q: isinstance(q, str) and q.isidentifier(), "a URL key")],
        "cast": [Options(int, float, str)],
        "lo": [None, Interval(float, None, None)], "hi": [None, Interval(float, None, None)],
        "options": [None, Rule(lambda o: isinstance(o, tuple) and len(o) > 0, "a non-empty tuple")],
        "many": [Rule(lambda m: isinstance(m, bool), "True or False")],
        "aliases": [Rule(lambda a: isinstance(a, tuple) and all(len(p) == 2 for p in a), "(old, choice) pairs")],
    }

    def __post_init__(self):
        validate(self, where=f"setting {self.url!r}")
        if self.parse(None if self.default is None else self.to_url(self.default))[1] is not None:
            raise ValueError(f"setting {self.url!r}: its default {self.default!r} is outside its own domain")

    def parse(self, raw: str | None) -> tuple:
        """(value, notice): ``raw`` (the URL's text, None when absent) read by :func:`parse_value` (a list:
        :func:`parse_values`)."""
        if self.many:
            return parse_values(self.url, raw, self.default, cast=self.cast, lo=self.lo, hi=self.hi,
                                options=self.options, aliases=dict(self.aliases))
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
        """The URL text of ``value`` (booleans as 0/1, numbers as short as they read, a list comma-separated)."""
        if self.many:
            return ",".join(_url_text(v) for v in value)
        return _url_text(value)


def _url_text(value) -> str:
    if isinstance(value, bool):
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


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


def parse_values(name: str, raw: str | None, default: tuple, *, cast=str, lo=None, hi=None, options=None,
                 aliases: dict | None = None) -> tuple:
    """(values, notice) of a comma-separated URL setting: absent → ``default``; each item read as
    :func:`parse_value` reads one (an older spelling in ``aliases`` read as its choice), an item that is not valid
    left out and named in the notice, one outside [``lo``, ``hi``] clamped, one named twice kept once; empty text → no
    values; no valid item → ``default``."""
    if raw is None:
        return tuple(default), None
    values, bad, clamped = [], [], []
    for item in (x.strip() for x in raw.split(",")):
        if not item:
            continue
        item = (aliases or {}).get(item, item)
        value, notice = parse_value(name, item, None, cast=cast, lo=lo, hi=hi, options=options)
        if value is None:
            bad.append(item)
        elif value in values:
            clamped.append(f"{name}: {item[:20]!r} is named twice; kept once")
        else:
            values.append(value)
            clamped += [notice] if notice else []
    said = f"{name}=" + ", ".join(repr(b[:20]) for b in bad[:3]) + (" …" if len(bad) > 3 else "")
    wrong = "one of the choices" if options is not None else "valid here"
    if bad and not values:
        return tuple(default), f"{said}: none is {wrong}; using {','.join(map(_url_text, default))}"
    if bad:
        clamped.insert(0, f"{said} {'is' if len(bad) == 1 else 'are'} not {wrong}; left out")
    return tuple(values), "; ".join(clamped) or None


def _methods_setting(name: str, default: tuple) -> Setting:
    """A list of methods (the algorithms' keys; older links name them by label)."""
    from ultr_core.algorithms.config import ALGORITHMS
    return Setting(name, default, options=tuple(ALGORITHMS), many=True,
                   aliases=tuple((label, key) for key, label in ALGORITHMS.items() if label != key))


#: the Train page's settings besides its methods' hyper-parameters (which have their own table:
#: :mod:`ultr_core.algorithms.hyper`)
TRAIN_SETTINGS = (
    _methods_setting("algorithms", ("dla",)),
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
        # default: the preset's own methods; older links name them by label
        _methods_setting("methods", ("naive", "dla", "ips")),
        Setting("values", ""),                                     # the sweep's values as typed; default: the preset's
        Setting("sweep", "none", options=tuple(SWEEPS)),           # default: the preset's own sweep
        Setting("seeds", 3, int, lo=1, hi=10),                     # default: the preset's own seeds
        Setting("sessions", 20_000, int, options=(5_000, 10_000, 20_000, 50_000, 100_000)),
        Setting("steps", 400, int, options=(100, 200, 400, 600, 1000)),
        Setting("guess", 1, int, lo=0, hi=1),
    )


#: the Compare page's settings (a link carries the methods, the sweep and its values only for its preset)
COMPARE_SETTINGS = _compare_settings()

def _heatmap_settings() -> tuple:
    from ultr_core.studies.validation import FIG4_COUPLING, FIG4_QUICK_COUPLING
    return (Setting("levels", FIG4_QUICK_COUPLING, float, options=FIG4_COUPLING, many=True),)  # paper: all


#: the Heat-maps page's settings (a link carries the levels, seeds and steps only for its grid)
HEATMAP_SETTINGS = _heatmap_settings() + (
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
    Setting("bias", ("position",), many=True),      # offered: the log's columns (with_options); default: its bias
)

#: the Simulate page's data-set settings (its simulation parameters come from the schema,
#: :mod:`ultr_core.simulation.params`); the data set's options are the built-in ones plus the named data roots'
SIMULATE_SETTINGS = (
    Setting("dataset", "synthetic"),
    Setting("queries", 500, int, lo=50, hi=5000),
    Setting("k", 1, int, lo=1, hi=10),
)
