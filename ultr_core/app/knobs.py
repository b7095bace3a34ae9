"""The Playground's knobs as one table (:data:`KNOBS`): for each, the :class:`PlaygroundSettings` field it sets,
its URL key, its widget key, its domain and the conversions between widget, setting and URL.  The page loops over
it for URL → state, state → settings (:func:`settings_from_state`), settings → URL and preset → state — adding a
knob is one :class:`Knob` here and its widget on the page (``tests/app/test_playground.py`` checks every field has one).
"""
from __future__ import annotations

from dataclasses import replace

from ultr_core.algorithms.config import ALGORITHMS
from ultr_core.app.knob import Knob
from ultr_core.app.playground import PlaygroundSettings, algorithm_names
from ultr_core.clickmodels.registry import USER_MODELS
from ultr_core.errors import ConfigError
from ultr_core.extensions import extra
from ultr_core.simulation.params import PARAM

__all__ = ["Knob", "KNOBS", "KNOB_BY_FIELD", "settings_from_state", "knob_value", "trainable", "TOPK", "CONTEXTS",
           "STEPS", "SESSIONS", "LRS", "SEEDS", "reconcile", "PBM_ONLY"]


TOPK = ("all", 1, 2, 3, 5, 8, 10)
CONTEXTS = (0, 5, 20, 100, 500)
STEPS = (100, 200, 300, 500, 1000)
SESSIONS = (5_000, 10_000, 20_000, 50_000, 100_000)
LRS = (0.003, 0.01, 0.03)
SEEDS = (1, 3, 5)
_SYNTHETIC = PlaygroundSettings().dataset          # the built-in default data set


def _topk_parse(raw: str):
    return "all" if raw == "all" else next((k for k in TOPK[1:] if str(k) == raw), None)


#: the users' γ the Playground offers: "default" (the user model's own) or a value (trust bias: ε⁻_p = γ/p, ≤ 0.95)
GAMMAS = ("default", 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95)


def _gamma_parse(raw: str):
    return "default" if raw in ("default", "None", "") else next((g for g in GAMMAS[1:] if str(g) == raw),
                                                                        None)


def _methods_parse(raw: str):
    """Method keys (what links store) or labels (what older links stored) → the widget's labels."""
    labels = algorithm_names()
    by_key = {k: label for label, k in labels.items()}
    return [by_key.get(m, m) for m in raw.split(",") if m in labels or m in by_key] or None


#: every knob of the Playground, in the order the page shows them
KNOBS = (
    Knob("dataset", "dataset", str, widget_of=lambda v: "synthetic" if v == _SYNTHETIC else v,
         setting_of=lambda v: _SYNTHETIC if v == "synthetic" else v, url_parse=lambda raw: raw or None),
    Knob.of("eta", step=0.25, label="pos. bias η",
            help="position-bias severity: o_p = v_p^η with the eye-tracking curve v (CLD's η; not LBD's η_c)"),
    Knob.of("noise", label="click noise ε"),
    Knob.of("topk", options=TOPK, widget_of=lambda v: "all" if v is None else v,
            setting_of=lambda v: None if v == "all" else int(v), url_parse=_topk_parse, label="shown top-k",
            help="only the first k candidates are shown (selection bias)"),
    Knob.of("coupling", label="coupling η_c",
            help="LBD's coupling level: observation o = v_p^max(1 + wᵀx, 0) depends on the document"),
    Knob.of("contexts", options=CONTEXTS,
            help="context types of a contextual PBM: each (query, position) gets one, and it scales observation"),
    Knob.of("shuffle", label="exploration",
            help="share of sessions shown in a random order: it puts documents at several positions and so connects "
                 "the identifiability graph"),
    Knob.of("blocks", label="blocks",
            help="shuffle only within this many blocks of positions: K blocks → K graph components"),
    Knob.of("user_model", options=USER_MODELS, label="users click as"),
    Knob.of("continuation", options=GAMMAS, widget_of=lambda v: "default" if v is None else v,
            setting_of=lambda v: None if v == "default" else float(v), url_parse=_gamma_parse,
            label="users' γ", help="the user model's γ (default: the model's own): DCM's continuation after a "
            "click, DBN's and CCM's continuation; trust bias's strength — a non-relevant result is clicked with "
            "ε⁻_p = γ/p (0.65: Vardasbi et al.'s trust_1); no effect on PBM, UBM, CM and SDBN users"),
    Knob("methods", "methods", tuple, widget_of=lambda v: [ALGORITHMS[m] for m in v],
         setting_of=lambda v: tuple(algorithm_names()[m] for m in v), url_parse=_methods_parse,
         url_of=lambda v: ",".join(algorithm_names()[m] for m in v)),
    Knob("steps", "steps", int, options=STEPS, label="steps", help="batches of 256 sessions per method"),
    Knob("sessions", "sessions", int, options=SESSIONS),
    Knob("lr", "lr", float, options=LRS),
    Knob.of("seed"),
    Knob("seeds", "seeds", int, options=SEEDS),
)
KNOBS += extra("KNOBS")                          # knobs of extension modules (ultr_core.extensions)
KNOB_BY_FIELD = {k.field: k for k in KNOBS}
_OWN = PlaygroundSettings.__dataclass_fields__
for _k in KNOBS:
    if _k.field not in _OWN and _k.field not in PARAM:
        raise ConfigError(f"knob {_k.field!r}.field", "must be a PlaygroundSettings field or a simulation parameter")


#: knobs that change PBM's examination; the cascade models have their own, so they apply to PBM users only
PBM_ONLY = {"coupling": "coupling η_c", "contexts": "contexts"}
#: the shown top-k a top-k method gets when a link or a knob asks for it without one
TOPK_FOR_SELECTION = 3


def reconcile(values: dict, changed: str | None = None) -> tuple[dict, list[str]]:
    """Knob settings (by field) made consistent, and one plain sentence per change, so that no combination of
    knobs or link can leave the Playground without its tiles (issue #49).  The knob the user just moved
    (``changed``) wins; a link's values (``changed`` None) keep the user model and the methods.

    >>> v, notes = reconcile({"user_model": "dbn", "coupling": 0.5, "contexts": 20, "methods": ("dla",), "topk": None})
    >>> v["user_model"], v["coupling"], v["contexts"], notes
    ('dbn', 0.0, 0, ['DBN users have their own examination: coupling η_c and contexts are for PBM users and were turned
    off.'])
    >>> v = {"user_model": "dbn", "coupling": 0.5, "contexts": 0, "methods": (), "topk": None}
    >>> reconcile(v, "coupling")[0]["user_model"]
    'pbm'
    >>> reconcile({"user_model": "pbm", "coupling": 0, "contexts": 0, "methods": ("cld",), "topk": None})[1]
    ['CLD models top-k selection: the shown top-k was set to 3.']
    >>> reconcile({"user_model": "trust", "continuation": 1.0, "methods": (), "topk": None})[0]["continuation"]
    0.95
    >>> reconcile({"dataset": "synthetic:300", "methods": ("dla", "cld"), "topk": 10}, "topk")[0]["methods"]
    ('dla',)
    """
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    from ultr_core.clickmodels.registry import DEFAULT_USER_MODEL, MODEL_BY_KEY
    v, notes = dict(values), []
    on = [f for f in PBM_ONLY if v.get(f)]
    if not MODEL_BY_KEY[v.get("user_model", DEFAULT_USER_MODEL)].position_only and on:
        if changed in PBM_ONLY:
            notes.append(f"{PBM_ONLY[changed]} changes PBM's examination: users now click as PBM "
                         f"(not {MODEL_BY_KEY[v['user_model']].label}).")
            v["user_model"] = DEFAULT_USER_MODEL
        else:
            notes.append(f"{MODEL_BY_KEY[v['user_model']].label} users have their own examination: "
                         f"{' and '.join(PBM_ONLY[f] for f in on)} {'is' if len(on) == 1 else 'are'} for PBM users "
                         "and " + ("was" if len(on) == 1 else "were") + " turned off.")
            v.update({f: type(v[f])(0) for f in on})
    users = MODEL_BY_KEY[v.get("user_model", DEFAULT_USER_MODEL)]
    if users.continuation_problem(v.get("continuation")):
        notes.append(f"{users.continuation_problem(v['continuation'])}: γ was set to {users.cls.MAX_GAMMA:g}.")
        v["continuation"] = users.cls.MAX_GAMMA
    selection = [m for m in v.get("methods", ()) if SPECS_BY_KEY[m].needs_topk]
    if selection and _cuts_nothing(v):
        names = ", ".join(SPECS_BY_KEY[m].label for m in selection)
        if changed == "topk":
            notes.append(f"{names} model{'s' if len(selection) == 1 else ''} top-k selection, which needs a shown "
                         f"top-k that hides some candidates: {names} was left out.")
            v["methods"] = tuple(m for m in v["methods"] if m not in selection)
        else:
            notes.append(f"{names} model{'s' if len(selection) == 1 else ''} top-k selection: the shown top-k was "
                         f"set to {TOPK_FOR_SELECTION}.")
            v["topk"] = TOPK_FOR_SELECTION
    return v, notes


def _cuts_nothing(v: dict) -> bool:
    """No shown top-k, or one that shows every candidate of the built-in synthetic lists (k ≥ their length)."""
    from ultr_core.data.synthetic import LIST_SIZE
    k = v.get("topk")
    return k is None or (str(v.get("dataset", "synthetic")).startswith("synthetic") and int(k) >= LIST_SIZE)


def trainable(settings: PlaygroundSettings, log) -> tuple[PlaygroundSettings, str | None]:
    """The settings with the top-k selection methods (CLD and kin) left out where ``log`` shows every candidate in
    some session — exploration showed them all, so there is no selection to model and their fit would refuse — and
    the sentence that says so (None when nothing is left out): refused before training, never a failed job."""
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    from ultr_core.app.igverdict import unshown_candidates
    chosen = [m for m in settings.methods if SPECS_BY_KEY[m].needs_topk]
    if not chosen or unshown_candidates(log):
        return settings, None
    names = ", ".join(SPECS_BY_KEY[m].label for m in chosen)
    return replace(settings, methods=tuple(m for m in settings.methods if m not in chosen)), (
        f"{names} model{'s' if len(chosen) == 1 else ''} top-k selection, but this log shows every candidate in some "
        f"session (exploration {settings.shuffle:g}): there is no selection to model, so {names} "
        f"{'is' if len(chosen) == 1 else 'are'} left out of this run — lower exploration to bring "
        f"{'it' if len(chosen) == 1 else 'them'} back.")


def settings_from_state(state) -> PlaygroundSettings:
    """The settings a page's widget state holds (``state[knob.key]`` for every knob; an extension's knob of a
    simulation parameter goes to ``extra``)."""
    own = {k.field: k.to_setting(state[k.key]) for k in KNOBS if k.field in _OWN}
    more = tuple((k.field, k.to_setting(state[k.key])) for k in KNOBS if k.field not in _OWN)
    return PlaygroundSettings(**own, extra=more)


def knob_value(settings: PlaygroundSettings, knob: Knob):
    """The setting a knob shows: its field, or an extension's simulation parameter (``extra``, else its default)."""
    if knob.field in _OWN:
        return getattr(settings, knob.field)
    return dict(settings.extra).get(knob.field, PARAM[knob.field].default)
