"""Figures and tables of a counterfactual evaluation (issue #47, item 4): the candidate's value by every estimator
beside the log's own value — from :func:`ultr_core.counterfactual.evaluate.evaluate_ranking`'s result."""
from __future__ import annotations

import plotly.graph_objects as go

from ultr_core.counterfactual.estimators import ESTIMATOR_BY_KEY

__all__ = ["value_figure", "estimator_rows"]


def _bounds(x) -> str:
    """``lower … upper`` of an :class:`~ultr_core.evaluation.intervals.Interval` or an estimator's result, or why
    there is no interval."""
    if x.lower is None:
        return "no interval: " + (x.note or "not supported")
    return f"{x.lower:.4f} … {x.upper:.4f}"


def estimator_rows(out) -> list[dict]:
    """One row per estimator: estimate, its 90 % interval, support, and why it was refused."""
    rows = [{"estimator": "logged (observed)", "estimate": out.logged.estimate,
             "90 % interval": _bounds(out.logged), "support": "",
             "note": "the log's own clicks in the top k per session"}]
    for e in out.estimators.values():
        ok = e.estimate is not None
        rows.append({"estimator": e.label, "estimate": e.estimate, "90 % interval": _bounds(e) if ok else "refused",
                     "support": f"{e.support:.0%} ({e.support_kind})", "note": e.refused or e.note or e.formula})
    return rows


def value_figure(out) -> go.Figure:
    """Each estimator's value with its 90 % interval (refused ones named at 0), the log's own value as a line; the x
    axis starts at 0 (clicks per session)."""
    fig = go.Figure()
    logged = out.logged
    top = logged.upper if logged.lower is not None else logged.estimate or 0.0
    for key, e in out.estimators.items():
        colour = ESTIMATOR_BY_KEY[key].colour if key in ESTIMATOR_BY_KEY else "#555"
        if e.estimate is None:
            fig.add_trace(go.Scatter(x=[0], y=[e.label], mode="markers+text", text=["refused"],
                                     textposition="middle right", marker=dict(symbol="x", color="#999", size=9),
                                     name=f"{e.label} (refused)"))
            continue
        bounded = e.lower is not None
        top = max(top, e.upper if bounded else e.estimate)
        err = dict(type="data", symmetric=False, array=[e.upper - e.estimate],
                   arrayminus=[e.estimate - e.lower]) if bounded else None
        fig.add_trace(go.Scatter(x=[e.estimate], y=[e.label], mode="markers", name=e.label,
                                 marker=dict(size=11, color=colour), error_x=err))
    fig.add_vline(x=logged.estimate, line_dash="dash", line_color="#555",
                  annotation_text="logged", annotation_position="top")
    fig.update_layout(title=f"{out.candidate.label}: expected clicks in the top {out.k} per session",
                      xaxis_title=f"clicks per session (90 % intervals, {out.n_boot} resamples of the sessions)",
                      xaxis_range=[0, top * 1.1], height=320, showlegend=False,
                      margin=dict(l=60, r=20, t=50, b=40))
    return fig
