"""The record of the Playground's knob table (:mod:`~ultr_core.app.knobs`), apart from the table so that an
extension module (:mod:`ultr_core.extensions`) can build knobs while the table is being built.  A knob sets a
:class:`~ultr_core.app.playground.PlaygroundSettings` field or, for a knob an extension adds, any parameter of the
simulation schema (:mod:`ultr_core.simulation.params`; the settings carry it in ``extra``)."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.constraints import Interval, Options, Rule, validate

__all__ = ["Knob"]


@dataclass(frozen=True)
class Knob:
    """One Playground knob: the :class:`PlaygroundSettings` ``field`` it sets, its URL key ``query`` (and widget
    key ``pg_<query>``), the widget's domain (``lo``–``hi``, or ``options``) and, for the three knobs whose widget
    value is not the setting's (data set, top-k, methods), the conversions.  :data:`KNOBS` is the one table the
    page loops over for URL → state, state → settings, settings → URL and preset → state.

    >>> from ultr_core.app.knobs import KNOB_BY_FIELD
    >>> k = KNOB_BY_FIELD["topk"]
    >>> k.to_widget(None), k.to_setting("all"), k.to_setting(3), k.parse("5"), k.parse("7")
    ('all', None, 3, 5, None)
    >>> KNOB_BY_FIELD["methods"].parse("dla,nope,LBD"), KNOB_BY_FIELD["methods"].to_url(["DLA", "LBD"])
    (['DLA', 'LBD'], 'dla,lbd')

    Links store method keys; the labels older links carry are still read.
    """

    field: str
    query: str
    cast: type = float
    lo: float | None = None
    hi: float | None = None
    options: tuple | None = None
    widget_of: object = None         # setting value → widget value (default: as is)
    setting_of: object = None        # widget value → setting value (default: cast)
    url_parse: object = None         # URL text → widget value, None when invalid (default: cast, then checks)
    url_of: object = None            # widget value → URL text (default: as text, lists joined by commas)
    aliases: tuple = ()              # older URL keys still read
    label: str = ""                  # the widget's label (a simulation parameter's from the schema)
    help: str = ""
    step: float | None = None

    CONSTRAINTS = {
        # which field it sets is checked where the table is assembled (app.knobs: a settings field or a parameter)
        "field": [Rule(lambda f: isinstance(f, str) and f.isidentifier(), "a field name")],
        "query": [Rule(lambda q: isinstance(q, str) and q.isidentifier(), "a URL key")],
        "cast": [Options(int, float, str, tuple)],
        "lo": [None, Interval(float, None, None)], "hi": [None, Interval(float, None, None)],
        "options": [None, Rule(lambda o: isinstance(o, tuple) and len(o) > 0, "a non-empty tuple")],
        "widget_of": [None, Rule(callable, "a function")], "setting_of": [None, Rule(callable, "a function")],
        "url_parse": [None, Rule(callable, "a function")], "url_of": [None, Rule(callable, "a function")],
        "aliases": [Rule(lambda a: isinstance(a, tuple), "a tuple of URL keys")],
        "label": [Rule(lambda s: isinstance(s, str), "text")], "help": [Rule(lambda s: isinstance(s, str), "text")],
        "step": [None, Interval(float, 0, None, closed="neither")],
    }

    def __post_init__(self):
        validate(self, where=f"knob {self.field!r}")

    @property
    def key(self) -> str:
        return f"pg_{self.query}"

    @classmethod
    def of(cls, name: str, **kw) -> "Knob":
        """The knob of a simulation parameter: field, URL key, older keys, type, range, label and help from the
        schema (:mod:`ultr_core.simulation.params`); ``kw`` (the Playground's coarser choices) overrides."""
        from ultr_core.simulation.params import PARAM
        p = PARAM[name]
        base = dict(cast=p.kind, aliases=p.aliases, label=p.label, help=p.help)
        if "options" not in kw:
            base.update(lo=p.lo, hi=p.hi, step=p.step)
        return cls(name, name, **{**base, **kw})

    def to_widget(self, value):
        return self.widget_of(value) if self.widget_of else value

    def to_setting(self, value):
        return self.setting_of(value) if self.setting_of else self.cast(value)

    def to_url(self, value) -> str:
        if self.url_of:
            return self.url_of(value)
        return ",".join(value) if isinstance(value, (list, tuple)) else str(value)

    def parse(self, raw: str):
        """A URL value as a widget value, or None when it is not one (clamping is the page's ``qp``)."""
        if self.url_parse:
            return self.url_parse(raw)
        try:
            value = self.cast(raw)
        except (TypeError, ValueError, OverflowError):
            return None
        return value if self.options is None or value in self.options else None
