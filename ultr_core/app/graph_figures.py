"""Figure factories of the Identifiability page: the identifiability graph (plotly and an
interactive HTML view), component sizes, the probability of identifiability, estimated bias curves
and observation box plots.  Shared helpers (colours, labels, layout) are in :mod:`.figures`.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ultr_core.app.figures import METHOD_COLORS, PALETTE, _layout, method_color
from ultr_core.app.text import escape_html

__all__ = ["identifiability_graph_figure", "identifiability_graph_html", "component_sizes_figure",
           "probability_figure", "bias_curves_figure", "observation_boxplot_figure"]

def identifiability_graph_figure(view, *, merges: pd.DataFrame | None = None,
                                 swaps: pd.DataFrame | None = None, seed: int = 0) -> go.Figure:
    """Draw an IG display view (see ``IdentifiabilityGraph.display_graph``), nodes coloured by
    component; proposed merges as dashed red links and interventions as dotted green links,
    each labelled with its cost.  For a contracted view the links join component nodes."""
    import networkx as nx
    contracted = view.graph.get("contracted", False)
    pos = nx.spring_layout(view, seed=seed, k=None if view.number_of_nodes() < 30 else 0.3)
    if view.number_of_nodes() and not view.number_of_edges() and not contracted:
        pos = nx.circular_layout(view)
    fig = go.Figure()
    ex, ey = [], []
    for a, b in view.edges():
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
    fig.add_scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbbbbb", width=1), name="IG edge",
                    hoverinfo="skip")

    def node_of(factor, comp):
        return f"C{comp}" if contracted else factor

    for df, a_col, b_col, ca, cb, color, dash, name in (
            (merges, "factor_a", "factor_b", "component_a", "component_b", "#d62728", "dash", "proposed merge"),
            (swaps, "from_factor", "to_factor", "component_from", "component_to", "#2ca02c", "dot",
             "proposed intervention")):
        if df is None or len(df) == 0:
            continue
        lx, ly, tx, ty, tt = [], [], [], [], []
        for r in df.itertuples(index=False):
            a, b = node_of(getattr(r, a_col), getattr(r, ca)), node_of(getattr(r, b_col), getattr(r, cb))
            if a not in pos or b not in pos:
                continue
            lx += [pos[a][0], pos[b][0], None]
            ly += [pos[a][1], pos[b][1], None]
            tx.append((pos[a][0] + pos[b][0]) / 2)
            ty.append((pos[a][1] + pos[b][1]) / 2)
            tt.append(f"{r.cost:.3g}")
        fig.add_scatter(x=lx, y=ly, mode="lines", line=dict(color=color, width=2.5, dash=dash), name=name)
        fig.add_scatter(x=tx, y=ty, mode="text", text=tt, textfont=dict(color=color), showlegend=False,
                        hoverinfo="skip")
    nodes = list(view.nodes(data=True))
    comps = [d.get("component", 0) for _, d in nodes]
    sizes = [d.get("size", 1) for _, d in nodes]
    smax = max(sizes) if sizes else 1
    fig.add_scatter(
        x=[pos[n][0] for n, _ in nodes], y=[pos[n][1] for n, _ in nodes], mode="markers+text",
        text=[escape_html(d.get("label", str(n))) if not contracted else f"C{d.get('component')}" for n, d in nodes],
        textposition="top center", hovertext=[escape_html(d.get("label", str(n))) for n, d in nodes],
        hoverinfo="text",
        marker=dict(size=[12 + 28 * np.sqrt(s / smax) for s in sizes] if contracted else 16,
                    color=[PALETTE[c % len(PALETTE)] if c >= 0 else "#cccccc" for c in comps],
                    line=dict(color="#333333", width=1)),
        name="bias factor" if not contracted else "component (size ∝ factors)")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    title = "Identifiability graph" + (" — components contracted (too many factors to draw)" if contracted else "")
    fig.update_layout(title=title, template="plotly_white", height=480, margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", y=-0.05))
    return fig


def identifiability_graph_html(view, *, merges: pd.DataFrame | None = None, swaps: pd.DataFrame | None = None,
                               height: int = 520) -> str:
    """The interactive IG view (pyvis / vis-network: drag, ctrl + wheel zoom, hover), as one self-contained
    HTML page — vis-network's script and styles are inlined, so it works offline.  Nodes are
    coloured by component; proposed merges are dashed red links and interventions dotted green
    ones, labelled with their cost.

    Labels come from user data.  They never reach HTML as markup: pyvis serialises nodes and
    edges with Jinja's ``tojson`` (``<``, ``>``, ``&`` and quotes become ``\\u003c`` …), and
    vis-network 9 draws labels on a canvas and shows tooltips as text."""
    from pyvis.network import Network
    contracted = view.graph.get("contracted", False)
    net = Network(height=f"{height}px", width="100%", cdn_resources="in_line", bgcolor="#ffffff")
    smax = max([d.get("size", 1) for _, d in view.nodes(data=True)] or [1])
    for n, d in view.nodes(data=True):
        comp = d.get("component", 0)
        text = str(d.get("label", n))
        net.add_node(str(n), label=f"C{comp}" if contracted else text, title=text,
                     color=PALETTE[comp % len(PALETTE)] if comp >= 0 else "#cccccc",
                     size=(10 + 25 * np.sqrt(d.get("size", 1) / smax)) if contracted else 14,
                     font={"size": 17, "strokeWidth": 4, "strokeColor": "#ffffff"})   # a halo: readable over edges
    for a, b in view.edges():
        net.add_edge(str(a), str(b), color="#bbbbbb", width=1)

    def node_of(factor, comp):
        return f"C{comp}" if contracted else str(factor)

    for df, a_col, b_col, ca, cb, color, dashes, what in (
            (merges, "factor_a", "factor_b", "component_a", "component_b", "#d62728", [8, 6], "merge"),
            (swaps, "from_factor", "to_factor", "component_from", "component_to", "#2ca02c", [2, 5], "intervention")):
        if df is None or len(df) == 0:
            continue
        for r in df.itertuples(index=False):
            a, b = node_of(getattr(r, a_col), getattr(r, ca)), node_of(getattr(r, b_col), getattr(r, cb))
            if a in net.get_nodes() and b in net.get_nodes():
                cost = "0" if abs(r.cost) < 1e-9 else f"{r.cost:.3g}"
                font = {"color": color, "size": 16, "strokeWidth": 0, "background": "#ffffff"}   # cost on its line
                net.add_edge(a, b, color=color, width=3, dashes=dashes, label=cost, font=font,
                             title=f"proposed {what}, cost {cost}")
    # vis-network's own wheel zoom is off: over a graph embedded in a long page it would swallow the
    # wheel, and a reader scrolling past the graph would zoom it instead.  Plain wheel scrolls the page;
    # ctrl / ⌘ + wheel (a trackpad pinch sends the same) zooms about the pointer (CTRL_WHEEL_ZOOM).
    # layout.randomSeed: vis-network places nodes at random before the physics settle; a fixed seed
    # draws the same graph the same way on every rerun and for every visitor.
    # barnesHut: a stronger repulsion and avoidOverlap keep labels (drawn under their node) off their neighbours
    net.set_options('{"physics": {"barnesHut": {"springLength": 120, "gravitationalConstant": -3000, '
                    '"avoidOverlap": 0.5}, "stabilization": {"iterations": 150}}, '
                    '"layout": {"randomSeed": 0}, '
                    '"interaction": {"hover": true, "navigationButtons": false, "zoomView": false}}')
    html = net.generate_html()
    # pyvis' template also links bootstrap from a CDN (layout styling only): drop every external
    # resource so the page needs no network at all.
    html = re.sub(r'<script[^>]*src="https?://[^"]*"[^>]*>\s*</script>', "", html)
    html = re.sub(r'<link[^>]*href="https?://[^"]*"[^>]*/?>', "", html)
    # The frame's own document must not scroll (pyvis' empty <center><h1> headings push its card 21 px
    # below the frame's top): a scrollable frame would latch the wheel and the page behind it would not
    # move.  Without the headings and with the border inside the card, the card fits the frame exactly.
    html = html.replace("</head>", "<style>html, body {margin: 0; overflow: hidden;} center {display: none;} "
                                   "#mynetwork {box-sizing: border-box;}</style></head>", 1)
    return html.replace("</body>", CTRL_WHEEL_ZOOM + "</body>", 1)


# Zoom with ctrl / ⌘ + wheel only, about the pointer: the canvas point under the pointer stays put
# (new centre = p + (c − p)·s/s′).  preventDefault keeps the browser's own page zoom out of it.
CTRL_WHEEL_ZOOM = """<script>
(function () {
  var box = document.getElementById("mynetwork");
  if (!box || typeof network === "undefined") { return; }
  box.addEventListener("wheel", function (e) {
    if (!(e.ctrlKey || e.metaKey)) { return; }          // plain wheel: the page scrolls
    e.preventDefault();
    var s = network.getScale(), s2 = Math.min(10, Math.max(0.05, s * Math.exp(-e.deltaY / 400)));
    var r = box.getBoundingClientRect();
    var p = network.DOMtoCanvas({x: e.clientX - r.left, y: e.clientY - r.top}), c = network.getViewPosition();
    network.moveTo({scale: s2, position: {x: p.x + (c.x - p.x) * s / s2, y: p.y + (c.y - p.y) * s / s2}});
  }, {passive: false});
})();
</script>
"""


def component_sizes_figure(sizes, top: int = 50) -> go.Figure:
    sizes = np.asarray(sizes)[:top]
    fig = go.Figure(go.Bar(x=np.arange(len(sizes)), y=sizes, marker_color=[PALETTE[i % 10] for i in range(len(sizes))]))
    return _layout(fig, f"Component sizes (largest {len(sizes)})", "component", "bias factors")


def probability_figure(df: pd.DataFrame, x: str = "n_factors") -> go.Figure:
    """Identifiability probability: formula and Monte Carlo side by side."""
    fig = go.Figure()
    fig.add_scatter(x=df[x], y=df["formula"], name="formula (Example 2)", mode="lines+markers",
                    line=dict(color="#111111"))
    if "monte_carlo" in df:
        fig.add_scatter(x=df[x], y=df["monte_carlo"], name="Monte Carlo", mode="lines+markers",
                        line=dict(color="#d62728", dash="dash"))
    fig.update_yaxes(range=[-0.02, 1.02])
    return _layout(fig, "Probability that the IG is connected", x.replace("_", " "), "P(identifiable)")


def _band(fig: go.Figure, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str) -> None:
    """The band of one curve: a filled polygon over each run of factors that have one (a factor without a band — no
    information reaches it — breaks the run: one polygon through it drew no band at all), an error bar on a factor
    whose neighbours have none."""
    ok = np.isfinite(lo) & np.isfinite(hi)
    edges = np.flatnonzero(np.diff(np.r_[0, ok.astype(np.int8), 0]))
    for start, stop in zip(edges[::2], edges[1::2]):
        xs, bottom, top = x[start:stop], lo[start:stop], hi[start:stop]
        if stop - start == 1:
            fig.add_scatter(x=xs, y=(bottom + top) / 2, mode="markers", marker=dict(size=0.1, color=color),
                            opacity=0.5, error_y=dict(type="data", array=(top - bottom) / 2, color=color, thickness=6,
                                                      width=0), hoverinfo="skip", showlegend=False)
        else:
            fig.add_scatter(x=np.r_[xs, xs[::-1]], y=np.r_[top, bottom[::-1]], fill="toself", mode="lines",
                            line=dict(width=0), fillcolor=color, opacity=0.18, hoverinfo="skip", showlegend=False)


def bias_curves_figure(curves: pd.DataFrame, truth: np.ndarray | None = None, title: str | None = None) -> go.Figure:
    """Estimated observation curves, one line per IG component with its bootstrap band
    (``curves``: the table of :func:`ultr_core.identifiability.estimation.estimate_bias`).
    x is the position when the factors have one, else the factor's rank in its component.
    Labels come from user data: they are HTML-escaped before plotly sees them."""
    fig = go.Figure()
    for i, (comp, grp) in enumerate(curves.groupby("component", sort=True)):
        color = PALETTE[i % len(PALETTE)]
        x = grp["position"].to_numpy(float) if grp["position"].notna().all() and \
            grp["position"].is_unique else np.arange(1, len(grp) + 1, dtype=float)
        labels = [escape_html(v) for v in grp["label"]]
        lo, hi = grp["lower"].to_numpy(float), grp["upper"].to_numpy(float)
        _band(fig, x, lo, hi, color)
        fig.add_scatter(x=x, y=grp["estimate"], mode="lines+markers", name=f"component {comp}",
                        line=dict(color=color), text=labels,
                        customdata=np.c_[[f"interval [{a:.3f}, {b:.3f}]" if np.isfinite(a) and np.isfinite(b)
                                          else "no interval" for a, b in zip(lo, hi)],
                                         [f"{n:,}" for n in grp["impressions"].to_numpy(np.int64)]],
                        hovertemplate="%{text}<br>ô/ô_ref = %{y:.3f}<br>%{customdata[0]}<br>%{customdata[1]} "
                                      "impressions<extra></extra>")
    if truth is not None:
        t = np.asarray(truth, float)
        fig.add_scatter(x=np.arange(1, len(t) + 1), y=t / t[0], mode="lines", name="truth",
                        line=dict(color=METHOD_COLORS["truth"], dash="dash"))
    by_position = len(curves) and curves["position"].notna().all()
    fig = _layout(fig, title or "Observation per component (normalised within each component)",
                  "position" if by_position else "factor (rank in its component)", "ô / ô_reference")
    fig.update_xaxes(dtick=1 if by_position and curves["position"].max() <= 30 else None)
    fig.update_yaxes(rangemode="tozero")          # a ratio of observation probabilities: from 0, not zoomed
    return fig


def observation_boxplot_figure(obs: pd.DataFrame, truth: np.ndarray | None = None,
                               title: str | None = None) -> go.Figure:
    """Identifiability Matters Fig. 6: observation estimates normalised by position 1, one box per
    (position, method) over seeds (``obs``: columns position, method, estimate), the true curve as
    a line.

    >>> df = pd.DataFrame({"position": [1, 2, 1, 2], "method": ["DLA"] * 4, "estimate": [1, 0.5, 1, 0.7]})
    >>> [t.type for t in observation_boxplot_figure(df, np.array([1.0, 0.6])).data]
    ['box', 'scatter']
    """
    fig = go.Figure()
    for i, (name, g) in enumerate(obs.groupby("method", sort=False)):
        color = method_color(str(name)) if str(name) in METHOD_COLORS else PALETTE[i % 10]
        fig.add_box(x=g["position"], y=g["estimate"], name=escape_html(str(name)), marker_color=color,
                    boxpoints="all", jitter=0.3, pointpos=0)
    if truth is not None:
        fig.add_scatter(x=np.arange(1, len(truth) + 1), y=np.asarray(truth) / truth[0], mode="lines+markers",
                        name="truth", line=dict(color="black", dash="dash"))
    fig.update_layout(boxmode="group")
    fig = _layout(fig, title or "Observation estimates ô_p / ô_1 over seeds", "position", "ô_p / ô_1")
    fig.update_xaxes(tickmode="array", tickvals=sorted(obs["position"].unique()))
    fig.update_yaxes(rangemode="tozero")
    return fig


def repair_relevance_figure(docs: pd.DataFrame, max_points: int = 3000) -> go.Figure:
    """Each document's relevance as logged (x) against after node merging (y), one colour per IG component (the
    table of :func:`ultr_core.identifiability.heldout.heldout_repair`; at most ``max_points``, the most shown): as
    logged each component has its own free scale, so its documents lie on their own line through 0 — the merge picks
    one slope per component.

    >>> d = pd.DataFrame({"component": [0, 1], "train_impressions": [5, 3],
    ...                   "relevance (as logged)": [0.5, 0.2], "relevance (after node merging)": [0.5, 0.4]})
    >>> len(repair_relevance_figure(d).data)
    2
    """
    x_col, y_col = "relevance (as logged)", "relevance (after node merging)"
    d = docs.dropna(subset=[x_col, y_col]).nlargest(max_points, "train_impressions")
    fig = go.Figure()
    for i, (comp, grp) in enumerate(d.groupby("component", sort=True)):
        fig.add_scatter(x=grp[x_col], y=grp[y_col], mode="markers", name=f"component {comp}",
                        marker=dict(color=PALETTE[i % len(PALETTE)], size=6, opacity=0.75),
                        hovertemplate="as logged %{x:.3f}<br>after merging %{y:.3f}<extra></extra>")
    fig = _layout(fig, "Relevance per document: as logged vs after node merging", "r̂ as logged (scale free per "
                  "component)", "r̂ after node merging")
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(rangemode="tozero")
    return fig
