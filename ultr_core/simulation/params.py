"""The one schema of the simulation's parameters (issue #45): each declared once — its name (the URL key, the key of
a :class:`~ultr_core.simulation.logspec.LogSpec` string and, with ``-`` for ``_``, the CLI flag), the field it sets,
its type, default, domain, label, help, widget range and the older spellings links still carry.  From it derive
:class:`~ultr_core.simulation.clickmodel.ClickModelConfig` (fields, defaults and constraints), ``LogSpec``'s keys
and constraints, the ``simulate`` and ``train`` options of the CLI (one shared set), the Simulate page's widgets,
the Playground's knobs and the clamping of URL values.

>>> PARAM["eta"].field, PARAM["eta"].default, PARAM["eta"].flag
('click.eta', 1.0, '--eta')
>>> PARAM["user_model"].aliases, PARAM["continuation"].aliases
(('user', 'users', 'click_model'), ('gamma',))
>>> resolve_name("gamma"), resolve_name("users"), resolve_name("eta")
('continuation', 'user_model', 'eta')
"""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.clickmodels.registry import DEFAULT_USER_MODEL, MODEL_BY_KEY, USER_MODELS
from ultr_core.constraints import Interval, Options, Rule, validate

__all__ = ["Param", "PARAMS", "PARAM", "CLICK_PARAMS", "resolve_name", "add_options", "values_of", "MAX_CONTEXTS",
           "MAX_SESSIONS"]

#: most context types a simulation may use (each has a 10-dim vector)
MAX_CONTEXTS = 1_000_000
#: most sessions a link may ask for (the app's own limit is checked where the log is built)
MAX_SESSIONS = 6_000_000


@dataclass(frozen=True)
class Param:
    """One simulation parameter (see the module docstring).  ``field``: ``click.<name>`` of the click model's
    configuration or a :class:`LogSpec` field; ``domain``: its constraints (:mod:`ultr_core.constraints`); ``lo``,
    ``hi``, ``step``: the widgets' range, which also clamps URL values (None: the widget is a choice); ``link``:
    carried by links and LogSpec strings; ``cli``: an option of ``simulate`` and ``train``; ``aliases``: older
    spellings still read."""

    name: str
    field: str
    kind: type
    default: object
    domain: tuple
    label: str = ""
    help: str = ""
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    link: bool = True
    cli: bool = True
    aliases: tuple = ()

    CONSTRAINTS = {
        "name": [Rule(lambda n: isinstance(n, str) and n.isidentifier(), "an identifier")],
        "field": [Rule(lambda f: isinstance(f, str) and f.replace(".", "_").isidentifier(), "a (dotted) field")],
        "kind": [Options(int, float, str, bool)], "default": [Rule(lambda v: True, "its value (checked below)")],
        "domain": [Rule(lambda d: isinstance(d, tuple) and d, "constraints")],
        "label": [Rule(lambda s: isinstance(s, str), "text")], "help": [Rule(lambda s: isinstance(s, str), "text")],
        "lo": [None, Interval(float, None, None)], "hi": [None, Interval(float, None, None)],
        "step": [None, Interval(float, 0, None, closed="neither")],
        "link": [Options(True, False)], "cli": [Options(True, False)],
        "aliases": [Rule(lambda a: isinstance(a, tuple) and all(isinstance(x, str) for x in a), "a tuple of names")],
    }

    def __post_init__(self):
        validate(self, where=f"parameter {self.name!r}")
        if not any(c is None if self.default is None else c is not None and c.accepts(self.default)
                   for c in self.domain):
            raise ValueError(f"{self.name}: the default {self.default!r} is outside its own domain")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def attr(self) -> str:
        """The attribute it sets on its object (the click model's configuration or the LogSpec)."""
        return self.field.removeprefix("click.")

    @property
    def on_click(self) -> bool:
        return self.field.startswith("click.")

    @property
    def accepts_none(self) -> bool:
        return None in self.domain


def _users_help() -> str:
    return "; ".join(f"{k}: {MODEL_BY_KEY[k].behaviour}" for k in USER_MODELS)


def _gamma_help() -> str:
    defaults = ", ".join(f"{k} {MODEL_BY_KEY[k].gamma}" for k in USER_MODELS if MODEL_BY_KEY[k].gamma)
    return ("the cascade models' γ in [0, 1]: DCM goes on after a click with λ = γ·(1/r)^η, DBN after any document "
            "with γ, CCM with τ₁ = τ₂ = γ, τ₃ = γ/2; trust bias's strength: a non-relevant result is clicked with "
            f"ε⁻_p = γ/p, at most 0.95 (default: the model's own — {defaults})")


_P = Param
#: every simulation parameter, in the order of the click model's configuration, then the log's
PARAMS = (
    _P("eta", "click.eta", float, 1.0, (Interval(float, 0, 10),), "position-bias severity η",
       "0 = no position bias; o_p = v_p^η (eye tracking) or (1/p)^η", 0.0, 3.0, 0.1),
    _P("convention", "click.convention", str, "eye_tracking", (Options("eye_tracking", "reciprocal"),),
       "observation curve", "eye_tracking: o_p = v_p^η (ULTRA, LBD, identifiability); reciprocal: o_p = (1/p)^η "
       "(CLD eq. 14)"),
    _P("noise", "click.noise", float, 0.1, (Interval(float, 0, 1, closed="left"),), "click noise ε",
       "r(y) = ε + (1 − ε)(2^y − 1)/(2^ymax − 1)", 0.0, 0.5, 0.05),
    _P("topk", "click.topk", int, None, (None, Interval(int, 1, None)), "top-k cut-off k",
       "only the first k candidates are shown (CLD's selection bias); none: all", 1, 20, 1),
    _P("coupling", "click.coupling", float, 0.0, (Interval(float, 0, 5),), "coupling level η_c",
       "LBD individual-level observation: o_p(x) = v_p^{η·max(wᵀx′+1,0)}, w = η_c·u with one direction u ∈ [−1, 1]¹⁰ "
       "and the 10 crux features scaled to [−1, 1] over all splits, as in the official code", 0.0, 1.0, 0.1),
    _P("contexts", "click.n_contexts", int, 0, (Interval(int, 0, MAX_CONTEXTS),), "contexts",
       "contextual PBM with this many context types (0 = off)", 0, 100_000, 1),
    _P("logging", "click.logging", str, "svm", (Options("svm", "given"),), "logging ranker",
       "svm: a ranker trained on 1 % of the labelled queries orders the lists; given: the data's order", cli=False),
    _P("logging_fraction", "click.logging_fraction", float, 0.01, (Interval(float, 0, 1, closed="right"),),
       link=False, cli=False),
    _P("max_list", "click.max_list", int, None, (None, Interval(int, 1, None)), link=False, cli=False),
    _P("crux_scaling", "click.crux_scaling", str, "official", (Options("official", "train01"),), link=False,
       cli=False),
    _P("intervention", "click.intervention", bool, False, (Options(True, False),), link=False, cli=False),
    _P("coupling_seed", "click.coupling_seed", int, 0, (None, Interval(int, 0, 2**32 - 1)), link=False, cli=False),
    _P("shuffle", "click.shuffle", float, 0.0, (Interval(float, 0, 1),), "exploration (shuffled share)",
       "share of sessions shown in a random order; 0: always the logged order", 0.0, 1.0, 0.05, cli=False),
    _P("blocks", "click.shuffle_blocks", int, 1, (Interval(int, 1, 100),), "shuffle blocks",
       "shuffle only within this many contiguous blocks of each list (K blocks → K IG components)", 1, 5, 1,
       cli=False),
    _P("relevance", "click.relevance", str, "graded", (Options("graded", "binary", "binary_official"),),
       link=False, cli=False),
    _P("user_model", "click.user_model", str, DEFAULT_USER_MODEL, (Options(*USER_MODELS),), "users click as",
       _users_help(), aliases=("user", "users", "click_model")),
    _P("continuation", "click.continuation", float, None, (None, Interval(float, 0, 1)), "continuation γ",
       _gamma_help(), 0.0, 1.0, 0.05, aliases=("gamma",)),
    _P("sessions", "n_sessions", int, 20_000, (Interval(int, 1, MAX_SESSIONS),), "sessions",
       "impressions of a ranked list; queries are drawn uniformly", 100, 1_000_000, 1000),
    _P("seed", "seed", int, 0, (Interval(int, 0, 2**32 - 1),), "seed", "seed of the click simulation (and training)",
       0, 10_000, 1),
    _P("data_seed", "data_seed", int, 0, (Interval(int, 0, 2**32 - 1),), "data seed", "seed of generated data",
       0, 10_000, 1),
)
PARAM = {p.name: p for p in PARAMS}
#: the click model's configuration's parameters, in its field order
CLICK_PARAMS = tuple(p for p in PARAMS if p.on_click)
_ALIASES = {a: p.name for p in PARAMS for a in p.aliases}


def resolve_name(name: str) -> str:
    """The one name of a parameter from any spelling links have carried."""
    return _ALIASES.get(name, name)


def add_options(parser) -> None:
    """The ``simulate`` and ``train`` options: one per parameter of the schema offered on the CLI (``cli``), with
    its default, choices and help; older spellings are accepted as further flags (``--click-model``)."""
    from ultr_core.constraints import Options as _Options
    for p in PARAMS:
        if not p.cli:
            continue
        choices = next((list(c.values) for c in p.domain if isinstance(c, _Options)), None)
        flags = [p.flag, *("--" + a.replace("_", "-") for a in p.aliases)]
        parser.add_argument(*flags, dest=p.name, type=p.kind, default=p.default, choices=choices,
                            metavar=p.name.upper(),
                            help=(p.label + (": " + p.help if p.help else "")).replace("%", "%%"))


def values_of(namespace) -> dict:
    """The schema's parameters an argparse namespace (or any object) holds, by their one name; a continuation γ
    given for users who draw none (PBM, UBM, the CTR models) is refused, naming the option, not ignored.

    >>> from types import SimpleNamespace
    >>> values_of(SimpleNamespace(user_model="pbm", continuation=0.5))
    Traceback (most recent call last):
    ultr_core.errors.ConfigError: --continuation: PBM users draw no continuation γ; leave it out or choose users ...
    """
    out = {p.name: getattr(namespace, p.name) for p in PARAMS if hasattr(namespace, p.name)}
    users = MODEL_BY_KEY.get(out.get("user_model", DEFAULT_USER_MODEL))
    if out.get("continuation") is not None and users is not None and users.gamma is None:
        from ultr_core.errors import ConfigError
        takers = ", ".join(k for k in USER_MODELS if MODEL_BY_KEY[k].gamma is not None)
        raise ConfigError("--continuation", f"{users.label} users draw no continuation γ; leave it out or choose "
                                            f"users who do ({takers})")
    return out
