"""Widgets of the simulation schema (:mod:`ultr_core.simulation.params`): one widget per parameter, its label,
help, range and default from the schema, its first value from the URL under the parameter's name or an older
spelling (clamped to the widget's range, with a notice)."""
import streamlit as st

from pages._links import qp
from ultr_core.constraints import Options
from ultr_core.simulation.params import Param


def url_name(name: str, aliases: tuple = ()) -> str:
    """The key a link carries a setting under: its own ``name``, else the first older spelling present (for the
    simulation's parameters, the Playground's knobs and the Train page's hyper-parameters alike)."""
    return next((n for n in (name, *aliases) if n in st.query_params), name)


def _url_name(p: Param) -> str:
    return url_name(p.name, p.aliases)


def _choices(p: Param):
    return next((list(c.values) for c in p.domain if isinstance(c, Options)), None)


def param_widget(p: Param, default=None, **kw):
    """The widget of ``p`` (a radio or select for a choice, a slider for a short range, else a number input),
    keyed ``sim_<name>``; ``default`` overrides the schema's (a value of the right type)."""
    default = p.default if default is None else default
    choices = _choices(p)
    common = dict(help=p.help, key=f"sim_{p.name}", **kw)
    if choices is not None:
        value = qp(_url_name(p), default, options=choices)
        make = st.radio if len(choices) <= 3 and "format_func" not in kw else st.selectbox
        extra = {"horizontal": True} if make is st.radio else {}
        return make(p.label, choices, choices.index(value), **extra, **common)
    value = qp(_url_name(p), p.kind(default), p.kind, p.lo, p.hi)
    lo, hi, step = p.kind(p.lo), p.kind(p.hi), p.kind(p.step)
    if (p.hi - p.lo) / p.step <= 200:
        return st.slider(p.label, lo, hi, value, step, **common)
    return st.number_input(p.label, lo, hi, value, step, **common)


def in_url(p: Param) -> bool:
    return _url_name(p) in st.query_params
