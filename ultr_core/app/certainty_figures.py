"""Figure factories of "How sure?" (issue #46): each factor's 90 % interval span, the IG drawn by information, a
profile likelihood beside the Fisher interval, and the predicted certainty of a repair plan."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ultr_core.app.figures import _layout
from ultr_core.identifiability.uncertainty import WEAK_SPAN, Z90

__all__ = ["factor_span_figure", "information_graph_figure", "profile_figure", "certainty_plan_figure",
           "LEVEL_COLOURS"]

LEVEL_COLOURS = {"identified": "#2ca02c", "weak": "#ff7f0e", "unidentified": "#9e9e9e"}


def _short_labels(labels) -> tuple[list, str]:
    """Labels of one bias column (``position=2``, ``position=3`` …) as their values and the column's name (issue #60:
    at 1024 px every long label was cut to "position"); several columns keep their labels under "factor".

    >>> _short_labels(["position=2", "position=10"]), _short_labels(["context=1, position=2"])
    ((['2', '10'], 'position'), (['context=1, position=2'], 'factor'))
    """
    labels = [str(x) for x in labels]
    names = {x.split("=", 1)[0] for x in labels if "=" in x and "," not in x}
    if len(names) == 1 and all(x.count("=") == 1 and "," not in x for x in labels):
        return [x.split("=", 1)[1] for x in labels], names.pop()
    return labels, "factor"


def factor_span_figure(labels, log_se, levels, *, top: int = 40) -> go.Figure:
    """How many times wider the upper end of each factor's 90 % interval of o_k/o_ref is than its lower end (log
    axis, the ×2 rule dashed); the ``top`` least certain when there are more, unidentified factors left out."""
    se = np.array([np.inf if s is None else s for s in log_se], float)
    labels, axis = _short_labels(labels)               # "position=2" → "2" under the axis title "position"
    finite = np.flatnonzero(np.isfinite(se) & (se > 0))
    shown = finite[np.argsort(-se[finite], kind="stable")[:top]] if len(finite) > top else finite
    fig = go.Figure()
    for level, colour in LEVEL_COLOURS.items():
        sel = [i for i in shown if levels[i] == level]
        if sel:
            fig.add_bar(x=[labels[i] for i in sel], y=np.exp(2 * Z90 * se[sel]), name=level, marker_color=colour,
                        hovertemplate="%{x}: interval spans ×%{y:.2f}<extra></extra>")
    fig.add_hline(y=WEAK_SPAN, line_dash="dash", line_color="#555555",
                  annotation_text=f"×{WEAK_SPAN:g}: weak above", annotation_position="top left")
    title = "90 % interval span" + (f" (the {top} least certain)" if len(finite) > top else "")
    _layout(fig, title, axis, "span (×, log scale)")
    top_span = float(np.exp(2 * Z90 * se[shown]).max()) if len(shown) else WEAK_SPAN
    fig.update_yaxes(type="log", range=[0, np.log10(max(top_span, WEAK_SPAN) * 1.5)])   # from ×1: no exaggeration
    fig.update_xaxes(categoryorder="array", categoryarray=[labels[i] for i in sorted(shown)])
    return fig


def information_graph_figure(graph: dict, seed: int = 0) -> go.Figure:
    """The IG of one component drawn by information: edge width ∝ log conductance (the information a link
    carries, documents eliminated), node colour = the factor's standard error of log(o_k/o_ref), the reference
    ringed (``graph`` from :func:`~ultr_core.identifiability.resistance.information_graph`)."""
    import networkx as nx
    nodes, edges = graph["nodes"], graph["edges"]
    G = nx.Graph()
    G.add_nodes_from(n["factor"] for n in nodes)
    for e in edges:
        G.add_edge(e["a"], e["b"], weight=np.log1p(e["conductance"]))
    pos = nx.spring_layout(G, seed=seed, weight="weight")
    fig = go.Figure()
    cond = np.log1p([e["conductance"] for e in edges]) if edges else np.zeros(0)
    lo, hi = (cond.min(), cond.max()) if len(cond) else (0, 1)
    for e, c in zip(edges, cond):
        width = 0.5 + 7 * (c - lo) / (hi - lo) if hi > lo else 2
        fig.add_scatter(x=[pos[e["a"]][0], pos[e["b"]][0]], y=[pos[e["a"]][1], pos[e["b"]][1]], mode="lines",
                        line=dict(width=width, color="#9ecae1"), hoverinfo="skip", showlegend=False)
    se = [n["log_se"] if n["log_se"] is not None else np.nan for n in nodes]
    short, column = _short_labels([n["label"] for n in nodes])     # "10" beside its node, the column in the title
    xy = np.array([pos[n["factor"]] for n in nodes], float).reshape(-1, 2)
    right = xy[:, 0] <= np.median(xy[:, 0]) if len(xy) else np.zeros(0, bool)    # labels point away from the middle
    fig.add_scatter(x=xy[:, 0], y=xy[:, 1], mode="markers+text", text=short, customdata=[n["label"] for n in nodes],
                    textposition=["middle left" if r else "middle right" for r in right],
                    marker=dict(size=16, color=se, colorscale="Viridis", showscale=True,
                                colorbar=dict(title="se", thickness=12),
                                line=dict(width=[4 if n["reference"] else 0 for n in nodes], color="#d62728")),
                    hovertemplate="%{customdata}: se %{marker.color:.3f}<extra></extra>", showlegend=False)
    _layout(fig, "The graph by information" + (f" ({column})" if column != "factor" else ""), "", "")
    for axis, lo, hi in ((fig.update_xaxes, *_padded(xy[:, 0], 0.25)), (fig.update_yaxes, *_padded(xy[:, 1], 0.1))):
        axis(visible=False, range=[lo, hi])                         # room for the labels at the edges
    return fig


def _padded(v, share: float) -> tuple[float, float]:
    lo, hi = (float(v.min()), float(v.max())) if len(v) else (-1.0, 1.0)
    pad = share * max(hi - lo, 1e-9)
    return lo - pad, hi + pad


def profile_figure(p) -> go.Figure:
    """2 (ℓ̂ − ℓ_p) against o_k/o_ref (log axis) with the χ² bound, the profile interval (solid) and the Fisher
    interval (dashed)."""
    from scipy.stats import chi2
    x, y = zip(*sorted(p.curve)) if p.curve else ((), ())
    fig = go.Figure()
    fig.add_scatter(x=x, y=y, mode="lines+markers", name="profile deviance", line=dict(color="#1f77b4"))
    fig.add_hline(y=chi2.ppf(p.level, 1), line_dash="dot", annotation_text=f"χ²₁ {p.level:.0%}")
    for v, dash, name in ((p.lower, "solid", "profile"), (p.upper, "solid", None),
                          (p.fisher_lower, "dash", "Fisher"), (p.fisher_upper, "dash", None)):
        if v is not None:
            fig.add_vline(x=v, line_dash=dash, line_color="#d62728" if dash == "solid" else "#555555",
                          annotation_text=name or "",      # profile labels on top, Fisher's below: no overlap
                          annotation_position="top left" if dash == "solid" else "bottom right")
    _layout(fig, f"Profile likelihood of o({p.factor}) / o({p.reference})", "ratio (log scale)",
            "2 (ℓ̂ − ℓ_p)")
    fig.update_xaxes(type="log")
    fig.update_yaxes(rangemode="tozero")
    return fig


def certainty_plan_figure(plan) -> go.Figure:
    """Predicted standard error of the weakest factor and the mean over its component after 0…N swaps."""
    n = len(plan.swaps)
    worst = [plan.worst_se_before] + [s.worst_se_after for s in plan.swaps]
    mean = [plan.mean_se_before] + [s.mean_se_after for s in plan.swaps]
    fig = go.Figure()
    fig.add_scatter(x=list(range(n + 1)), y=worst, mode="lines+markers", name=f"{plan.weakest_factor} (weakest)")
    fig.add_scatter(x=list(range(n + 1)), y=mean, mode="lines+markers", name="mean over its component")
    fig.add_hline(y=float(np.log(WEAK_SPAN) / (2 * Z90)), line_dash="dash", annotation_text=f"×{WEAK_SPAN:g} rule")
    # the title's second line is short: at 1024×576 a one-line title ran under plotly's toolbar (top right)
    _layout(fig, f"Predicted standard error<br><sup>after each swap of {plan.impressions_per_swap:,} impressions</sup>",
            "swaps", "se of log(o_k/o_ref)")
    fig.update_layout(margin=dict(t=70))
    fig.update_yaxes(rangemode="tozero")
    return fig
