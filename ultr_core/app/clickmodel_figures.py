"""Figures of fitted click models' bias parameters (issue #34, item 3), from
:func:`ultr_core.clickmodels.compare.compare_click_models`'s ``models`` (key →
:class:`~ultr_core.clickmodels.compare.ModelFit`, each with its ``bias`` dict): the
per-rank parameters as lines (PBM's examination, DCM's continuation after a click, RCTR's CTR), UBM's examination
by (rank, rank of the last click) as a heat-map, and the scalar continuation parameters (DBN's γ, CCM's τ) as a
table.  Colours come from the click-model table.

>>> from ultr_core.clickmodels.compare import ModelFit
>>> fit = lambda label, bias: ModelFit.scored(label, {}, log_likelihood=0.0, perplexity=1.0, perplexity_by_rank=(),
...                                           conditional_perplexity=1.0, conditional_perplexity_by_rank=(),
...                                           bias=bias, seconds=0.0)
>>> models = {"pbm": fit("PBM", {"examination": [0.9, 0.5]}),
...           "ubm": fit("UBM", {"examination_by_rank_and_last_click": [[0.9, 0.5], [0.8, 0.6]]}),
...           "dbn": fit("DBN", {"continuation": 0.95})}
>>> [t.name for t in rank_parameters_figure(models).data]
['PBM: examination']
>>> [(key, [list(row) for row in fig.data[0].z]) for key, fig in matrix_figures(models)]
[('ubm', [[None, 0.5], [0.8, 0.6]])]
>>> continuation_table(models).to_dict("records")
[{'model': 'DBN', 'parameter': 'continuation', 'value': 0.95}]
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["RANK_PARAMETERS", "rank_parameters_figure", "matrix_figures", "continuation_table"]

#: bias entries that hold one value per rank, and what they are called on the chart
RANK_PARAMETERS = {"examination": "examination", "continuation_after_click": "continuation after a click",
                   "ctr_by_rank": "CTR"}
_UBM = "examination_by_rank_and_last_click"


def rank_parameters_figure(models: dict) -> go.Figure:
    """Every per-rank bias parameter of every fitted model, one line each in the model's colour; probabilities on
    a 0–1 axis."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    fig = go.Figure()
    for key, m in models.items():
        for name, label in RANK_PARAMETERS.items():
            values = m.bias.get(name)
            if values is None:
                continue
            fig.add_trace(go.Scatter(x=list(range(1, len(values) + 1)), y=values, mode="lines+markers",
                                     name=f"{m.label}: {label}",
                                     line=dict(color=MODEL_BY_KEY[key].colour if key in MODEL_BY_KEY else None,
                                               dash="dot" if name != "examination" else None)))
    fig.update_layout(title="Bias parameters by rank", xaxis_title="rank", yaxis_title="probability",
                      yaxis_range=[0, 1.02], height=320, margin=dict(l=50, r=20, t=50, b=40))
    return fig


def matrix_figures(models: dict) -> list[tuple[str, go.Figure]]:
    """(model key, heat-map) for every fitted model with a bias matrix (by the parameter, not the model: today UBM)."""
    return [(key, _matrix_figure(m.label, m.bias[_UBM])) for key, m in models.items() if _UBM in m.bias]


def _matrix_figure(label: str, values) -> go.Figure:
    """Examination γ(r, r′): rows the rank r, columns the rank r′ of the last click above it (the last
    column: no click above, PyClick's convention); cells with r′ ≥ r cannot occur and stay empty."""
    gamma = np.asarray(values, dtype=float)
    d = gamma.shape[0]
    r, rp = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    z = np.where((rp < r) | (rp == d - 1), gamma, np.nan)
    cols = [str(c + 1) for c in range(d - 1)] + ["none"]
    fig = go.Figure(go.Heatmap(z=np.where(np.isnan(z), None, z).tolist(), x=cols, y=[str(i + 1) for i in range(d)],
                               zmin=0, zmax=1, colorscale="Blues", colorbar=dict(title="γ")))
    fig.update_layout(title=f"{label}: examination by rank and last click above", xaxis_title="rank of the last click",
                      yaxis_title="rank", yaxis_autorange="reversed", height=340, margin=dict(l=50, r=20, t=50, b=40))
    return fig


def continuation_table(models: dict) -> pd.DataFrame:
    """The scalar bias parameters (DBN's γ, CCM's τ₁–τ₃): one row each."""
    rows = [{"model": m.label, "parameter": name, "value": float(v)}
            for m in models.values() for name, v in m.bias.items() if np.ndim(v) == 0]
    return pd.DataFrame(rows, columns=["model", "parameter", "value"])


def judges_figure(models: dict, report) -> go.Figure:
    """Click fit beside ranking quality (issue #47): each click model at its held-out log-likelihood (x) and its
    Spearman correlation with the judges (y) with the 90 % interval over queries; raw CTR and the logged order as
    horizontal reference lines (they have no click fit; ``report``: the
    :class:`~ultr_core.clickmodels.agreement_records.JudgementReport`); a ranker (a
    :class:`~ultr_core.clickmodels.compare.ModelFit` with ``kind`` "ranker" and its own ``colour``,
    :mod:`~ultr_core.studies.rankers`) as a diamond.  The y axis spans −1 … 1 — a correlation's whole range."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    fig = go.Figure()
    drawn = {k: m for k, m in models.items()          # a constant estimate ranks nothing: no point to draw
             if m.judgements is not None and m.judgements.spearman.estimate is not None}
    lo, hi = _robust_range([m.log_likelihood for m in drawn.values()])
    for key, m in drawn.items():
        s, x = m.judgements.spearman, m.log_likelihood
        off = not lo <= x <= hi                      # far from the rest: at the axis's edge, pointing to its value
        err = dict(type="data", symmetric=False, array=[s.upper - s.estimate],
                   arrayminus=[s.estimate - s.lower]) if s.lower is not None else None
        fig.add_trace(go.Scatter(x=[min(max(x, lo), hi)], y=[s.estimate], mode="markers",
                                 name=m.label + (f" (at {x:.3f}, off the axis)" if off else ""),
                                 customdata=[x], hovertemplate="%{fullData.name}: log-likelihood %{customdata:.4f}, "
                                 "Spearman %{y:+.3f}<extra></extra>",
                                 marker=dict(size=10, symbol=("triangle-left" if x < lo else "triangle-right") if off
                                             else "diamond" if m.kind == "ranker" else "circle",
                                             color=m.colour or MODEL_BY_KEY[key].colour), error_y=err))
    for name, ref, dash in (("raw CTR", report.ctr, "dot"), ("logged order", report.logged_order, "dash")):
        if ref and ref.spearman.estimate is not None:
            fig.add_hline(y=ref.spearman.estimate, line_dash=dash, line_color="#777",
                          annotation_text=name, annotation_position="bottom right")
    fig.update_layout(title="Click fit (x) beside agreement with the judges (y)", showlegend=True, height=380,
                      xaxis_title="held-out log-likelihood (higher fits the clicks better)",
                      yaxis_title="Spearman with the judges", yaxis_range=[-1, 1], margin=dict(l=50, r=20, t=50, b=40))
    if np.isfinite(lo) and np.isfinite(hi):
        pad = 0.06 * (hi - lo)
        fig.update_xaxes(range=[lo - pad, hi + pad])
    return fig


def _robust_range(xs, reach: float = 3.0) -> tuple[float, float]:
    """The x range that keeps the bulk of ``xs`` readable (issue #60: one model at −0.94 squeezed the rest into a
    blob): the quartiles widened by ``reach`` interquartile ranges (at least 2 % of the median's size), cut to the
    values; points beyond are drawn at the edge.

    >>> lo, hi = _robust_range([-0.345, -0.3453, -0.3454, -0.3473, -0.3481, -1.1292, -0.422])
    >>> round(lo, 4), round(hi, 4)
    (-0.422, -0.345)
    """
    x = np.asarray([v for v in xs if v is not None and np.isfinite(v)], float)
    if len(x) == 0:
        return -np.inf, np.inf
    q1, q3 = np.quantile(x, [0.25, 0.75])
    iqr = max(q3 - q1, 0.02 * abs(float(np.median(x))), 1e-6)
    inside = x[(x >= q1 - reach * iqr) & (x <= q3 + reach * iqr)]
    return float(inside.min()), float(inside.max())
