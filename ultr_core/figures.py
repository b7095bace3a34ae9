"""Plotly figure factories: pure functions from results to figures (no Streamlit).

Every method keeps one colour on every page (:data:`METHOD_COLORS`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["METHOD_COLORS", "method_color", "ctr_by_position_figure", "clicks_per_rank_figure",
           "observation_curve_figure"]

METHOD_COLORS = {
    "Naive": "#7f7f7f", "Oracle": "#2ca02c", "IPS": "#ff7f0e", "DLA": "#1f77b4",
    "RegressionEM": "#9467bd", "TwoTower": "#8c564b", "PairDebias": "#e377c2",
    "LBD": "#d62728", "LBD_Lips": "#ff9896", "LBD_Ber": "#f7b6d2", "Unlimited": "#bcbd22",
    "CLD": "#17becf", "CLD_pair": "#0b7285", "Heckman": "#c49c94", "RankAgg": "#dbdb8d",
    "truth": "#111111",
}


def method_color(name: str) -> str:
    return METHOD_COLORS.get(name, "#444444")


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, template="plotly_white",
                      margin=dict(l=50, r=20, t=50, b=45), legend=dict(orientation="h", y=-0.2))
    return fig


def ctr_by_position_figure(ctr: pd.DataFrame, observation: np.ndarray | None = None) -> go.Figure:
    """Observed CTR per position (±1.96 binomial s.e.) against the true r·o and, if given,
    the true observation curve o_p (dashed, right axis)."""
    fig = go.Figure()
    fig.add_bar(x=ctr["position"], y=ctr["ctr"], name="observed CTR",
                error_y=dict(type="data", array=1.96 * ctr["se"]), marker_color="#1f77b4")
    if "expected_ctr" in ctr:
        fig.add_scatter(x=ctr["position"], y=ctr["expected_ctr"], name="true E[click] = r·o",
                        mode="lines+markers", line=dict(color="#111111"))
    if observation is not None:
        fig.add_scatter(x=np.arange(1, len(observation) + 1), y=observation, yaxis="y2",
                        name="true observation o_p", mode="lines", line=dict(dash="dash", color="#d62728"))
        fig.update_layout(yaxis2=dict(overlaying="y", side="right", range=[0, 1.05], title="o_p"))
    return _layout(fig, "Click-through rate by position", "position", "CTR")


def clicks_per_rank_figure(log_frame: pd.DataFrame) -> go.Figure:
    """Clicks per rank, split by the true label of the clicked document when known."""
    df = log_frame[log_frame["click"] == 1]
    fig = go.Figure()
    if "label" in df:
        for lab, part in df.groupby("label"):
            counts = part.groupby("position").size()
            fig.add_bar(x=counts.index, y=counts.values, name=f"label {lab}")
        fig.update_layout(barmode="stack")
    else:
        counts = df.groupby("position").size()
        fig.add_bar(x=counts.index, y=counts.values, name="clicks")
    return _layout(fig, "Clicks per rank", "position", "clicks")


def observation_curve_figure(curves: dict[str, np.ndarray], normalise: bool = True) -> go.Figure:
    """Observation curves (ô_p/ô_1 when ``normalise``), one line per method plus 'truth'."""
    fig = go.Figure()
    for name, c in curves.items():
        c = np.asarray(c, float)
        y = c / c[0] if normalise and c[0] > 0 else c
        fig.add_scatter(x=np.arange(1, len(c) + 1), y=y, name=name, mode="lines+markers",
                        line=dict(color=method_color(name), dash="dash" if name == "truth" else None))
    return _layout(fig, "Observation curve" + (" (normalised at position 1)" if normalise else ""),
                   "position", "ô_p / ô_1" if normalise else "ô_p")
