"""Plotly figure factories: pure functions from results to figures (no Streamlit).

Every method keeps one colour on every page (:data:`METHOD_COLORS`).

Identifiability-graph and bias-curve figures are in :mod:`.graph_figures`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ultr_core.algorithms.specs import ALGORITHM_SPECS
from ultr_core.app.text import escape_html

__all__ = [
    "METHOD_COLORS",
    "LABELS",
    "PALETTE",
    "label",
    "metric_range",
    "clip_interval",
    "compact",
    "method_color",
    "ctr_by_position_figure",
    "clicks_per_rank_figure",
    "observation_curve_figure",
    "interval_bar_figure",
    "sweep_figure",
    "heatmap_figure",
    "figure_png",
    "training_curves_figure",
]


METHOD_COLORS = {s.label: s.colour for s in ALGORITHM_SPECS} | {    # methods: from ultr_core.algorithms.specs
    "truth": "#111111",
    # identifiability repairs (before / after)
    "none": "#7f7f7f", "node merging": "#d62728", "node intervention": "#2ca02c",
}

#: human names for swept parameters and metrics (axis titles)
LABELS = {
    "click.topk": "top-k cut-off k", "click.eta": "position-bias severity η", "click.noise": "click noise ε",
    "click.coupling": "coupling level η_c", "click.n_contexts": "context types", "n_sessions": "sessions",
    "train.ips_eta,train.cld_rho_eta": "assumed η′ of the propensities", "train.lbd_lambda": "LBD penalty λ",
    "train.lbd_t": "LBD Bernoulli t", "train.cld_gamma": "CLD selection coupling ρ (γ; 0: none)",
    "clicks": "clicks per (document, position) row", "ndcg@10": "nDCG@10", "ndcg@5": "nDCG@5", "ndcg@3": "nDCG@3",
    "ndcg@1": "nDCG@1", "map": "MAP", "mcc": "MCC", "K": "IG components K", "strategy": "repair",
    "algorithm": "method", "valid_ndcg@10": "validation nDCG@10",
    "valid_ndcg@3": "validation nDCG@3", "loss": "training loss",
}
#: swept parameters whose values are whole numbers (integer ticks)
INTEGER_AXES = {"click.topk", "click.n_contexts", "n_sessions", "K"}

#: colours of items without a method colour (components, categories)
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def label(name: str) -> str:
    """The human name of a parameter or metric (itself when unknown)."""
    return LABELS.get(str(name), str(name))


def metric_range(metric: str) -> tuple[float, float] | None:
    """The values a metric can take (nDCG, MAP, precision, CTR: [0, 1]; MCC, a correlation: [−1, 1]),
    or None when unbounded (ARP, losses, click MSE has no upper bound worth drawing)."""
    m = str(metric).lower()
    if m.startswith(("ndcg", "map", "precision", "p@", "ctr", "identifiable")):
        return (0.0, 1.0)
    if m.startswith(("mcc", "pearson", "spearman", "kendall")):
        return (-1.0, 1.0)
    return None


def clip_interval(metric: str, lo, hi):
    """Interval ends clipped to the metric's range (a t-interval of a bounded metric can cross the
    bound; the figure must not draw nDCG 1.02)."""
    r = metric_range(metric)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return (lo, hi) if r is None else (np.clip(lo, *r), np.clip(hi, *r))


def compact(fig: go.Figure, *, height: int = 230, title_size: int = 14, font_size: int = 10) -> go.Figure:
    """``fig`` for a dashboard tile: fixed ``height`` in pixels, small margins and title, the
    legend in rows at the foot of the tile (the playground shows four of these on one screen).

    The legend is placed against the figure's bottom edge (``yref="container"``), not at a
    fraction of the plot area: a fraction moves it onto the x-axis title whenever the plot area
    shrinks (a narrow projector tile, a legend that wraps).  The bottom margin holds the tick
    labels, the axis title and two legend rows, so neither can meet the other.

    >>> f = compact(go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a")))
    >>> f.layout.legend.yref, f.layout.legend.y, f.layout.margin.b >= 2 * 1.8 * 10 + 3.8 * 10
    ('container', 0, True)
    """
    row = 1.8 * font_size                      # one legend row
    fig.update_layout(height=height, margin=dict(l=45, r=10, t=30, b=round(3.8 * font_size + 2 * row)),
                      title_font_size=title_size,
                      legend=dict(orientation="h", yref="container", yanchor="bottom", y=0, font_size=font_size),
                      font_size=font_size)     # legend entries sized by their text: none overlap
    fig.update_xaxes(title_standoff=2)
    return fig


def method_color(name: str) -> str:
    return METHOD_COLORS.get(name, "#444444")


def _layout(fig: go.Figure, title: str, x: str, y: str) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, template="plotly_white",
                      margin=dict(l=50, r=20, t=50, b=45), legend=dict(orientation="h", y=-0.2))
    return fig


def ctr_by_position_figure(ctr: pd.DataFrame, observation: np.ndarray | None = None, label: str = "o_p") -> go.Figure:
    """Observed CTR per position (±1.96 binomial s.e.) against the true click probability (r·o; under trust bias
    o·(ε⁻ + (ε⁺ − ε⁻)·r)) and, if given,
    the true observation curve (dashed, right axis): PBM's o_p, or under another user model the mean examination
    per position of the log (``label`` names it)."""
    fig = go.Figure()
    fig.add_bar(x=ctr["position"], y=ctr["ctr"], name="observed CTR",
                error_y=dict(type="data", array=1.96 * ctr["se"]), marker_color="#1f77b4")
    if "expected_ctr" in ctr:
        fig.add_scatter(x=ctr["position"], y=ctr["expected_ctr"], name="true P(click)",
                        mode="lines+markers", line=dict(color="#111111"))
    if observation is not None:
        fig.add_scatter(x=np.arange(1, len(observation) + 1), y=observation, yaxis="y2",
                        name=f"{label} (right axis)", mode="lines", line=dict(dash="dash", color="#d62728"))
        fig.update_layout(yaxis2=dict(overlaying="y", side="right", range=[0, 1.05], title=label,
                                      tickvals=[0, 0.5, 1], showgrid=False))
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
    """Observation curves (ô_p/ô_1 when ``normalise``), one line per method plus 'truth'; the y-axis
    starts at 0 (an observation probability: never a zoomed axis that makes a flat curve look steep).

    >>> f = observation_curve_figure({"truth": np.array([1.0, 0.5, 0.3])})
    >>> f.layout.yaxis.rangemode, f.data[0].y.tolist()
    ('tozero', [1.0, 0.5, 0.3])
    """
    fig = go.Figure()
    for name, c in curves.items():
        c = np.asarray(c, float)
        y = c / c[0] if normalise and c[0] > 0 else c
        fig.add_scatter(x=np.arange(1, len(c) + 1), y=y, name=name, mode="lines+markers",
                        line=dict(color=method_color(name), dash="dash" if name == "truth" else None))
    n = max((len(c) for c in curves.values()), default=0)
    if n <= 12:                                   # positions are whole numbers: no 1.5 ticks
        fig.update_xaxes(dtick=1)
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, "Observation curve" + (" (÷ position 1)" if normalise else ""),
                   "position", "ô_p / ô_1" if normalise else "ô_p")


def interval_bar_figure(summary: pd.DataFrame, by: str, metric: str, *, title: str) -> go.Figure:
    """Means with t-interval error bars (columns metric, metric_lo, metric_hi from stats.summarise),
    clipped to the metric's range; bars start at 0 (a bar's length is its value — a zoomed axis
    would make a 0.014 gap look ten times taller), the values are printed on the bars."""
    lo_c, hi_c = clip_interval(metric, summary[f"{metric}_lo"], summary[f"{metric}_hi"])
    mean = summary[metric].to_numpy(float)
    err_hi = pd.Series(hi_c - mean).fillna(0).clip(lower=0)
    err_lo = pd.Series(mean - lo_c).fillna(0).clip(lower=0)
    colors = [method_color(str(v)) if str(v) in METHOD_COLORS else PALETTE[i % 10]
              for i, v in enumerate(summary[by])]
    fig = go.Figure(go.Bar(x=summary[by].astype(str), y=summary[metric], marker_color=colors,
                           error_y=dict(type="data", array=err_hi, arrayminus=err_lo),
                           text=[f"{v:.3f}" for v in summary[metric]], textposition="outside",
                           hovertemplate="%{x}: %{y:.4f}<extra></extra>"))
    fig = _layout(fig, title, label(by), label(metric))
    ends = np.r_[mean - err_lo.to_numpy(), mean + err_hi.to_numpy(), 0.0]
    bottom, top = float(np.nanmin(ends)), float(np.nanmax(ends))
    pad = 0.12 * max(top - bottom, 1e-6)                           # room for the printed values
    fig.update_yaxes(range=[bottom - (pad if bottom < 0 else 0.0), top + pad], zeroline=True)
    return fig


def sweep_figure(summary: pd.DataFrame, x: str, metric: str, *, by: str = "algorithm", title: str | None = None,
                 level: str = "90 %") -> go.Figure:
    """Metric against a swept parameter, one line per method with its t-interval as a band
    (columns metric, metric_lo, metric_hi from ``stats.summarise``).  A sweep of one value is drawn
    as :func:`interval_bar_figure` — a lone point per method on a line chart shows no comparison."""
    if summary[x].nunique() == 1:
        value = summary[x].iloc[0]
        return interval_bar_figure(summary, by, metric, title=title or f"{label(metric)} at {label(x)} = {value:g} "
                                                                  f"(mean, {level} t-interval)")
    fig = go.Figure()
    for i, (name, g) in enumerate(summary.groupby(by, sort=False)):
        g = g.sort_values(x)
        color = method_color(str(name)) if str(name) in METHOD_COLORS else PALETTE[i % 10]
        if g[f"{metric}_lo"].notna().any():
            lo, hi = clip_interval(metric, g[f"{metric}_lo"], g[f"{metric}_hi"])
            fig.add_scatter(x=np.r_[g[x], g[x][::-1]], y=np.r_[hi, lo[::-1]],
                            fill="toself", fillcolor=color, opacity=0.15, line=dict(width=0), hoverinfo="skip",
                            showlegend=False, legendgroup=str(name))
        fig.add_scatter(x=g[x], y=g[metric], mode="lines+markers", name=str(name), line=dict(color=color),
                        legendgroup=str(name), hovertemplate=f"{name}: %{{y:.4f}}<extra></extra>")
    fig = _layout(fig, title or f"{label(metric)} vs {label(x)} (mean, {level} t-interval band)", label(x),
                  label(metric))
    vals = summary[x]
    whole = pd.api.types.is_numeric_dtype(vals) and bool(np.all(np.mod(vals.astype(float), 1) == 0))
    if x in INTEGER_AXES or (whole and vals.nunique() <= 12):     # counts (k, sessions) also when renamed
        fig.update_xaxes(tickmode="array", tickvals=sorted(vals.unique()))
    return fig


#: the smallest metric range one heat-map panel's colours span (nDCG): gaps under ≈ 0.01 are seed noise on these
#: runs (the Heat-maps page says so), so they must not look like the difference between white and dark blue
HEATMAP_MIN_SPAN = 0.05


def colour_range(z) -> dict:
    """``zmin``/``zmax`` of a heat-map panel: its own range, widened about its middle to at least
    :data:`HEATMAP_MIN_SPAN`.

    >>> colour_range(np.array([[0.80, 0.815]]))
    {'zmin': 0.7825, 'zmax': 0.8325}
    >>> colour_range(np.array([[0.7, 0.9]]))
    {'zmin': 0.7, 'zmax': 0.9}
    """
    lo, hi = float(np.nanmin(z)), float(np.nanmax(z))
    half = max(hi - lo, HEATMAP_MIN_SPAN) / 2
    mid = (lo + hi) / 2
    return {"zmin": round(mid - half, 10), "zmax": round(mid + half, 10)}


def heatmap_figure(cells: pd.DataFrame, *, metric: str = "ndcg@10", panel: str = "click.coupling",
                   row: str = "train.lbd_lambda", col: str = "train.lbd_t", select: str | None = None) -> go.Figure:
    """LBD Figure 4: one λ × t heat-map per coupling level, colour = mean ``metric`` over seeds
    (each panel on its own scale, darker = better, as in the paper — but spanning at least
    :data:`HEATMAP_MIN_SPAN`, so that a spread within seed noise stays pale instead of filling the whole colour
    range).  The cell marked ★ is the best
    by ``select`` (default: validation nDCG@10 when the cells have it — model selection as in the
    paper — else ``metric``)."""
    from plotly.subplots import make_subplots
    if select is None:
        select = "valid_ndcg@10" if "valid_ndcg@10" in cells and cells["valid_ndcg@10"].notna().any() else metric
    levels = sorted(cells[panel].unique())
    means = cells.groupby([panel, row, col])[metric].mean()
    titles = [f"η_c = {v:g}<br><sub>{means[v].min():.3f}–{means[v].max():.3f}</sub>" for v in levels]
    fig = make_subplots(rows=1, cols=len(levels), subplot_titles=titles, horizontal_spacing=0.07)
    for i, lv in enumerate(levels, start=1):
        part = cells[cells[panel] == lv].groupby([row, col])[metric].mean().unstack(col)
        part = part.sort_index(ascending=False)
        z = part.to_numpy()
        ys = [f"λ={v:g}" for v in part.index]
        xs = [f"t={v:g}" for v in part.columns]
        fig.add_heatmap(z=z, x=xs, y=ys, colorscale="Blues", showscale=True,
                        colorbar=dict(len=0.8, thickness=8, tickformat=".3f", tickfont=dict(size=9),
                                      x=fig.layout[f"xaxis{i if i > 1 else ''}"].domain[1] + 0.004),
                        **colour_range(z), customdata=np.full(z.shape, lv),
                        text=np.vectorize(lambda v: "" if not np.isfinite(v) else f"{v:.3f}")(z),
                        texttemplate="%{text}", textfont=dict(size=10),
                        hoverinfo="skip", row=1, col=i)      # hover and clicks go to the cell markers below
        gx, gy = np.meshgrid(np.arange(len(xs)), np.arange(len(ys)))
        fig.add_scatter(                                 # clickable cell centres (heat-map traces cannot be selected)
            x=[xs[j] for j in gx.ravel()], y=[ys[k] for k in gy.ravel()], mode="markers", showlegend=False,
            marker=dict(size=34, symbol="square", color="rgba(0,0,0,0)"), name="cell",
            customdata=np.c_[np.full(z.size, lv), part.index.to_numpy()[gy.ravel()],
                             part.columns.to_numpy()[gx.ravel()],
                             z.ravel()],
            hovertemplate="%{y}, %{x}<br>" + label(metric) + " = %{customdata[3]:.4f}<br>click for its curves"
                          "<extra>η_c=%{customdata[0]}</extra>", row=1, col=i)
        zsel = (cells[cells[panel] == lv].groupby([row, col])[select].mean().unstack(col)
                .reindex(index=part.index, columns=part.columns).to_numpy())
        bi, bj = np.unravel_index(np.nanargmax(zsel), zsel.shape)
        fig.add_scatter(x=[xs[bj]], y=[ys[bi]], mode="markers+text", text=["★"], textposition="top center",
                        textfont=dict(size=14, color="#d62728"),
                        marker=dict(size=1, color="#d62728"), showlegend=False, hoverinfo="skip", row=1, col=i)
        if i > 1:
            fig.update_yaxes(showticklabels=False, row=1, col=i)
    fig.update_layout(title=f"LBD (λ, t): {label(metric)} per coupling level (own colour scale per panel; "
                            f"★ = best {label(select)})",
                      template="plotly_white", height=370, margin=dict(l=60, r=20, t=120, b=40),
                      title_y=0.97)
    return fig


def figure_png(fig: go.Figure, width: int = 1100, height: int | None = None) -> bytes | None:
    """PNG bytes of a figure through kaleido (which drives the system chromium); None if
    no browser is available."""
    try:
        return fig.to_image(format="png", width=width, height=height or fig.layout.height or 450)
    except Exception:        # kaleido missing or no browser: the chart's own camera button still works
        return None


def training_curves_figure(records: list[dict], *, key: str = "loss", title: str | None = None,
                           references: tuple = (), empty: str = "waiting for the first evaluation …") -> go.Figure:
    """One line per algorithm of ``key`` against the training step (records carry 'algorithm').
    Algorithms named in ``references`` (e.g. Naive and Oracle as bounds) are drawn dashed, without
    markers, and labelled "(reference)".  Before the first record: no axes, only ``empty``.

    >>> fig = training_curves_figure([])
    >>> fig.layout.xaxis.visible, fig.layout.annotations[0].text
    (False, 'waiting for the first evaluation …')
    """
    fig = go.Figure()
    df = pd.DataFrame([r for r in records if key in r])
    if not len(df):
        fig = _layout(fig, title or label(key), "step", label(key))
        fig.update_xaxes(visible=False).update_yaxes(visible=False)
        fig.add_annotation(text=escape_html(empty), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                           font=dict(color="#777"))
        return fig
    if len(df):
        for name, g in df.groupby("algorithm", sort=False):
            ref = str(name) in references
            fig.add_scatter(x=g["step"], y=g[key], mode="lines" if ref else "lines+markers",
                            name=f"{name} (reference)" if ref else str(name),
                            line=dict(color=method_color(str(name)), dash="dash" if ref else "solid",
                                      width=1.5 if ref else 2))
    return _layout(fig, title or label(key), "step", label(key))


def perplexity_by_rank_figure(models: dict) -> go.Figure:
    """Held-out perplexity at each rank per click model (``compare_click_models(...).models``), one line each in
    the model's registry colour; 1 is a perfect prediction, 2 a coin — the axis starts at 1."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    fig = go.Figure()
    for key, m in models.items():
        ranks = list(range(1, len(m.perplexity_by_rank) + 1))
        fig.add_trace(go.Scatter(x=ranks, y=list(m.perplexity_by_rank), mode="lines+markers", name=m.label,
                                 line=dict(color=MODEL_BY_KEY[key].colour)))
    top = max(max(m.perplexity_by_rank) for m in models.values())
    fig.update_layout(title="Held-out perplexity by rank (lower is better)", xaxis_title="rank",
                      yaxis_title="perplexity", yaxis_range=[1, max(top * 1.05, 1.1)], height=340,
                      margin=dict(l=50, r=20, t=50, b=40))
    return fig
