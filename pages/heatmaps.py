import os

import streamlit as st

from ultr_core.text import escape_markdown

from ultr_core.algorithms import TrainConfig
from ultr_core.experiment import ExperimentSpec, grid_job
from ultr_core.figures import figure_png, heatmap_figure, training_curves_figure
from ultr_core.jobs import Job
from pages._common import finished_runs, job_buttons, job_progress, live, run_page

CACHE = os.path.join(os.environ.get("ULTR_CACHE_DIR", ".ultr_cache"), "heatmaps")
LAMBDAS, TS = [1.0, 100.0, 10000.0], [0.1, 0.2, 0.3, 0.4]



def main():
    st.title("LBD heat-maps (Figure 4)")
    st.caption("Chen et al., NeurIPS 2022, Fig. 4: test nDCG@10 of LBD over the gradient-penalty weight λ and the "
               "Bernoulli drop probability t, one panel per coupling level η_c. The paper's focal point moves from "
               "high λ / low t (Lipschitz decoupling works) to low λ / high t (Bernoulli decoupling works) as η_c grows.")
    st.latex(r"\text{logit}\,\hat c_p = s(x) + \gamma\, h_p(x),\ \gamma\sim\mathrm{Bernoulli}(1-t),\qquad "
             r"\mathcal{L} = \mathcal{L}_{\text{softmax}} + \lambda \big\lVert \nabla_X\, \overline{\mathrm{dropout}_{0.1}(H)} \big\rVert_2^2")
    st.caption("The penalty as the official code computes it (lbd.py): the squared gradient norm of the batch mean "
               "of all observation heads' raw logits after dropout. The paper's Table 3 picked, per η_c: 0–0.2 → "
               "(λ 100, t 0.1), 0.3 → (1, 0.1), 0.4–0.5 → (1, 0.3), 0.6 → (1, 0.4).")

    with st.sidebar:
        preset = st.radio("grid", ["quick (η_c ∈ {0, 0.3, 0.6}, 1 seed)", "paper (η_c ∈ {0, 0.1, …, 0.6}, 3 seeds)"],
                          help="the paper's grid is λ ∈ {1, 100, 10000} × t ∈ {0.1, 0.2, 0.3, 0.4} per coupling level")
        paper = preset.startswith("paper")
        levels = st.multiselect("coupling levels η_c", [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                                [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6] if paper else [0.0, 0.3, 0.6], key=f"lv_{paper}",
                                help="one heat-map panel per coupling level (LBD §6.1)")
        seeds = st.slider("seeds", 1, 5, 3 if paper else 1, key=f"sd_{paper}",
                          help="each cell is the mean over these seeds (clicks and initialisation)")
        sessions = st.select_slider("sessions", [5_000, 10_000, 20_000, 50_000], 20_000,
                                    help="simulated sessions per run")
        steps = st.select_slider("training steps", [100, 200, 400, 600], 400 if not paper else 600, key=f"st_{paper}",
                                 help="batches of 256 sessions per run")
        model = st.radio("ranking model", ["dnn", "linear"], horizontal=True,
                         help="the paper's Fig. 4 uses the DNN ranker")
    n_runs = len(levels) * len(LAMBDAS) * len(TS) * seeds
    st.write(f"{n_runs} runs ({len(levels)} coupling levels × 3 λ × 4 t × {seeds} seed(s)); cached under `{CACHE}/`.")

    def start():
        base = ExperimentSpec(n_sessions=sessions, train=TrainConfig(algorithm="lbd", steps=steps, model=model))
        grid = {"click.coupling": levels, "train.lbd_lambda": LAMBDAS, "train.lbd_t": TS}
        return Job(grid_job, base, grid, list(range(seeds)), cache_dir=CACHE, keep_history=True).start()


    job_buttons("heat_job", "▶ Run grid", start, disabled=not levels)


    def show(job):
        if job is None:
            st.caption("Press Run: the grid runs in the background (2 processes) and the heat-maps appear when it is done.")
            return
        job_progress(job)
        if job.error:
            st.error(f"The grid failed — {escape_markdown(job.error)}")


    live("heat_job", show)
    job = st.session_state.get("heat_job")

    df = finished_runs(job.result) if job is not None and not job.running and job.result is not None else None
    if df is not None and len(df):
        fig = heatmap_figure(df)
        event = st.plotly_chart(fig, key="heat", on_select="rerun", selection_mode="points")
        st.caption("Click a cell to see that run's training curves. Cells show test nDCG@10; colours are per panel "
                   "(darker = better); ★ = the cell with the best validation nDCG@10 (model selection as in the paper, "
                   "so ★ need not be the darkest cell).")
        pts = ((event or {}).get("selection") or {}).get("points") or []
        pts = [p for p in pts if p.get("customdata") is not None]     # the clickable cell centres
        if pts:
            cd = pts[0]["customdata"]          # a list, or a {"0": …, "1": …} mapping from the browser
            cd = [cd[k] for k in sorted(cd, key=int)] if isinstance(cd, dict) else list(cd)
            lv, lam, t = (float(v) for v in cd[:3])
            cell = df[(df["train.lbd_lambda"] == lam) & (df["train.lbd_t"] == t) & (df["click.coupling"] == lv)]
            recs = [{"algorithm": f"seed {r.seed}", **h} for r in cell.itertuples() for h in r.history]
            st.subheader(f"η_c = {lv:g}, λ = {lam:g}, t = {t:g}")
            a, b = st.columns(2)
            a.plotly_chart(training_curves_figure(recs, "loss", "training loss"), key="cell_loss")
            b.plotly_chart(training_curves_figure(recs, "valid_ndcg@10", "validation nDCG@10"), key="cell_ndcg")
        d1, d2 = st.columns(2)
        d1.download_button("Download cells (CSV)", df.drop(columns=["observation", "true_observation", "history"])
                           .to_csv(index=False), "lbd_heatmap.csv")
        png = figure_png(fig, width=1400, height=380)
        if png:
            d2.download_button("Download heat-map (PNG)", png, "lbd_heatmap.png", mime="image/png")
        else:
            d2.caption("PNG export needs chromium; use the chart's camera button instead.")


run_page(main)
