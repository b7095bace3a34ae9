import os
from dataclasses import dataclass

import streamlit as st

from pages._common import page_title, run_page
from pages._jobs import finished_runs, job_buttons, job_progress, live, partial_runs, submit_job
from pages._links import read_setting, url_notices
from ultr_core.algorithms import TrainConfig
from ultr_core.algorithms.record import formula_lines
from ultr_core.app.figures import HEATMAP_MIN_SPAN, figure_png, heatmap_figure, training_curves_figure
from ultr_core.app.pagestate import HEATMAP_SETTINGS
from ultr_core.app.tables import table3_table
from ultr_core.app.text import escape_markdown
from ultr_core.studies.experiment import ExperimentSpec, grid_job
from ultr_core.studies.validation import (
    FIG4_COUPLING,
    FIG4_LAMBDAS,
    FIG4_QUICK_COUPLING,
    FIG4_TS,
    best_cells,
    fig4_grid,
    table3_agreement,
)

CACHE = os.path.join(os.environ.get("ULTR_CACHE_DIR", ".ultr_cache"), "heatmaps")
SETTING = {s.url: s for s in HEATMAP_SETTINGS}
LAMBDAS, TS = FIG4_LAMBDAS, FIG4_TS



def main():
    _intro()
    with st.sidebar:
        grid = _grid_settings()
    url_notices()
    st.query_params.clear()
    st.query_params.update({k: SETTING[k].to_url(v) for k, v in grid.url_values().items()})
    n_runs = len(grid.levels) * len(LAMBDAS) * len(TS) * grid.seeds
    st.write(f"{n_runs} runs ({len(grid.levels)} coupling levels × 3 λ × 4 t × {grid.seeds} seed(s)); kept in "
             "the server's result cache.")
    job_buttons("heat_job", "▶ Run grid", lambda: _start(grid), disabled=not grid.levels)
    live("heat_job", _show_live)
    job = st.session_state.get("heat_job")
    df = finished_runs(job.result) if job is not None and not job.running and job.result is not None else None
    if df is not None and len(df):
        _results(df, grid.model)


def _intro():
    page_title("LBD heat-maps (Figure 4)")
    st.caption("Chen et al., NeurIPS 2022, Fig. 4: test nDCG@10 of LBD over the gradient-penalty weight λ and the "
               "Bernoulli drop probability t, one panel per coupling level η_c. The paper's focal point moves from "
               "high λ / low t (Lipschitz decoupling works) to low λ / high t (Bernoulli decoupling works) as η_c "
               "grows.")
    st.latex(formula_lines(r"\text{logit}\,\hat c_p = s(x) + \gamma\, h_p(x),\ \gamma\sim\mathrm{Bernoulli}(1-t)",
                           r"\mathcal{L} = \mathcal{L}_{\text{softmax}} + \lambda \big\lVert \nabla_X\, "
                           r"\overline{\mathrm{dropout}_{0.1}(H)} \big\rVert_2^2"))
    st.caption("The penalty as the official code computes it (lbd.py): the squared gradient norm of the batch mean "
               "of all observation heads' raw logits after dropout. The paper's Table 3 picked, per η_c: 0–0.2 → "
               "(λ 100, t 0.1), 0.3 → (1, 0.1), 0.4–0.5 → (1, 0.3), 0.6 → (1, 0.4).")


def _linked_levels(paper: bool, linked: bool) -> list:
    """The coupling levels a link for this grid asks for (its setting: those not on offer left out, with a notice),
    in the grid's order; else the grid's own."""
    s = SETTING["levels"].with_default(FIG4_COUPLING if paper else FIG4_QUICK_COUPLING)
    asked = read_setting(s) if linked else s.default
    return [v for v in FIG4_COUPLING if v in asked]


@dataclass(frozen=True)
class GridChoice:
    """The sidebar's grid: the paper's or the quick one, its coupling levels, seeds, sessions, steps and ranker."""

    paper: bool
    levels: list
    seeds: int
    sessions: int
    steps: int
    model: str

    def url_values(self) -> dict:
        """URL key → value: what the link carries."""
        return {"grid": "paper" if self.paper else "quick", "seeds": self.seeds, "sessions": self.sessions,
                "steps": self.steps, "model": self.model, "levels": self.levels}


def _grid_settings() -> GridChoice:
    """The sidebar's grid: quick or paper, coupling levels, seeds, sessions, steps and ranker (from the URL first)."""
    grids = ["quick (η_c ∈ {0, 0.3, 0.6}, 1 seed)", "paper (η_c ∈ {0, 0.1, …, 0.6}, 3 seeds)"]
    paper = read_setting(SETTING["grid"]) == "paper"
    preset = st.radio("grid", grids, index=int(paper),
                      help="the paper's grid is λ ∈ {1, 100, 10000} × t ∈ {0.1, 0.2, 0.3, 0.4} per coupling level",
                      key="heat_grid")
    paper = preset.startswith("paper")
    linked = st.query_params.get("grid", "quick") == ("paper" if paper else "quick")
    levels = st.multiselect("coupling levels η_c", list(FIG4_COUPLING), _linked_levels(paper, linked),
                            key=f"lv_{paper}", help="one heat-map panel per coupling level (LBD §6.1)")
    s = SETTING["seeds"].with_default(3 if paper else 1)
    seeds = st.slider("seeds", s.lo, s.hi, read_setting(s) if linked else s.default,
                      key=f"sd_{paper}", help="each cell is the mean over these seeds (clicks and initialisation)")
    sessions = st.select_slider("sessions", SETTING["sessions"].options, read_setting(SETTING["sessions"]),
                                help="simulated sessions per run", key="heat_sessions")
    s = SETTING["steps"].with_default(600 if paper else 400)
    steps = st.select_slider("training steps", s.options, read_setting(s) if linked else s.default,
                             key=f"st_{paper}", help="batches of 256 sessions per run")
    model = st.radio("ranking model", SETTING["model"].options, horizontal=True,
                     index=SETTING["model"].options.index(read_setting(SETTING["model"])),
                     help="the paper's Fig. 4 uses the DNN ranker", key="heat_ranking_model")
    return GridChoice(paper, levels, seeds, sessions, steps, model)


def _start(grid: GridChoice):
    base = ExperimentSpec(n_sessions=grid.sessions, train=TrainConfig(algorithm="lbd", steps=grid.steps,
                                                                         model=grid.model))
    cells = fig4_grid(grid.levels)
    st.session_state["heat_model"] = grid.model                  # Table 3's cells depend on the ranker
    return submit_job(("grid", repr(base), repr(cells), grid.seeds, "history"), grid_job, base, cells,
                      list(range(grid.seeds)), n_jobs=1, cache_dir=CACHE, keep_history=True)


def _show_live(job):
    if job is None:
        st.caption("Press Run: the grid runs in the background in one of the server’s shared worker processes; "
                   "cells fill in as their runs finish.")
        return
    job_progress(job)
    if job.error:
        st.error(f"The grid failed — {escape_markdown(job.error)}")
    slot = st.empty()                 # one slot: cleared when the job ends, so no stale live chart stays
    part = partial_runs(job) if job.running else None
    if part is not None and len(part):
        with slot.container():
            st.plotly_chart(heatmap_figure(part), key="heat_live")
            st.caption("Filling in: each cell appears when its runs finish (mean over the seeds done so far).")
    else:
        slot.empty()


def _results(df, model: str):
    fig = heatmap_figure(df)
    event = st.plotly_chart(fig, key="heat", on_select="rerun", selection_mode="points")
    st.caption("Click a cell to see that run's training curves. Cells show test nDCG@10; colours are per panel "
               f"(darker = better) and span at least {HEATMAP_MIN_SPAN:g} nDCG, so a spread within seed noise stays "
               "pale; ★ = the cell with the best validation nDCG@10 (model selection as in the paper, so ★ need not "
               "be the darkest cell).")
    if "valid_ndcg@10" in df:
        _table3_check(df, st.session_state.get("heat_model", model))
    _cell_curves(df, event)
    d1, d2 = st.columns(2)
    d1.download_button("Download cells (CSV)", df.drop(columns=["observation", "true_observation", "history"])
                       .to_csv(index=False), "lbd_heatmap.csv", key="heat_download_cells_csv")
    png = figure_png(fig, width=1400, height=380)
    if png:
        d2.download_button("Download heat-map (PNG)", png, "lbd_heatmap.png", mime="image/png",
                           key="heat_download_heat_map_png")
    else:
        d2.caption("PNG export needs chromium; use the chart's camera button instead.")


def _table3_check(df, model: str):
    best = best_cells(df)
    st.caption("Selected on validation (★), with the test value beside it: " + "; ".join(
        f"η_c = {r['click.coupling']:g} → λ = {r['train.lbd_lambda']:g}, t = {r['train.lbd_t']:g} "
        f"(validation {r['valid_ndcg@10']:.3f}, test {r['ndcg@10']:.3f})" for _, r in best.iterrows()))
    agree = table3_agreement(df, model)
    n_same, n_seeds = int(agree["same"].sum()), df["seed"].nunique()
    st.markdown(f"**Does this run reproduce the paper's Table 3?** {n_same} of {len(agree)} coupling level(s) "
                f"select the paper's (λ, t) on validation ({n_seeds} seed(s); Table 3 was chosen on Yahoo! "
                "with the paper's scale, so a different cell here is a finding about this data, not an error; "
                "with one seed, validation gaps under ≈ 0.01 are within seed noise: over seeds 0–4 a single seed of "
                "the quick grid picked Table 3's cell 2, 2 and 1 times in 5 — docs/results/lbd_study_fig4_quick.md).")
    st.dataframe(table3_table(agree), hide_index=True)


def _cell_curves(df, event):
    """The training curves of the cell a user clicked (every seed)."""
    pts = ((event or {}).get("selection") or {}).get("points") or []
    pts = [p for p in pts if p.get("customdata") is not None]     # the clickable cell centres
    if not pts:
        return
    cd = pts[0]["customdata"]          # a list, or a {"0": …, "1": …} mapping from the browser
    cd = [cd[k] for k in sorted(cd, key=int)] if isinstance(cd, dict) else list(cd)
    lv, lam, t = (float(v) for v in cd[:3])
    cell = df[(df["train.lbd_lambda"] == lam) & (df["train.lbd_t"] == t) & (df["click.coupling"] == lv)]
    recs = [{"algorithm": f"seed {r.seed}", **h} for r in cell.itertuples() for h in r.history]
    st.subheader(f"η_c = {lv:g}, λ = {lam:g}, t = {t:g}")
    a, b = st.columns(2)
    a.plotly_chart(training_curves_figure(recs, key="loss", title="training loss"), key="cell_loss")
    b.plotly_chart(training_curves_figure(recs, key="valid_ndcg@10", title="validation nDCG@10"), key="cell_ndcg")


run_page(main)
