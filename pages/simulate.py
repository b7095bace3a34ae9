import hashlib
from dataclasses import dataclass

import streamlit as st

from pages._common import memo, page_title, run_page
from pages._links import read_setting, url_notices
from pages._params import in_url, param_widget
from ultr_core.app.figures import clicks_per_rank_figure, ctr_by_position_figure
from ultr_core.app.pagestate import SIMULATE_SETTINGS
from ultr_core.app.text import escape_markdown
from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.data.loaders import load_svmlight_upload
from ultr_core.data.roots import available_datasets, dataset_spec
from ultr_core.data.sources import load_dataset
from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.logspec import LogSpec
from ultr_core.simulation.params import PARAM
from ultr_core.simulation.simulated import check_app_rows
from ultr_core.simulation.simulator import ClickSimulator, hidden_relevant

SETTING = {s.url: s for s in SIMULATE_SETTINGS}


def _dataset(spec: str, seed: int):
    with st.spinner("Loading the dataset …"):
        return memo(("dataset", spec, seed), lambda: load_dataset(spec, seed))


def _uploaded(name: str, digest: str, data: bytes):
    with st.spinner("Reading the upload …"):
        return memo(("letor-upload", digest), lambda: load_svmlight_upload(name, data))


def _simulate(ds, key, cfg: ClickModelConfig, n_sessions: int, seed: int):
    def run():
        sim = ClickSimulator(cfg, seed=seed).fit(ds)
        return sim, sim.simulate(ds.train, n_sessions, seed=seed)
    with st.spinner("Simulating clicks …"):
        return memo(("simulation", key, cfg, n_sessions, seed), run)




def main():
    page_title("Simulate a click log")
    st.caption("Clicks follow the examination hypothesis P(click) = r(y) · o(t); see the Home page for "
               "the two meanings of η. The settings are in the URL: copy it to share this exact log.")
    with st.sidebar:
        d = _dataset_choice()
        c = _click_model_choice()
    url_notices()
    params = {"dataset": d.source, "data_seed": d.data_seed, **{k: v for k, v in c.items() if v is not None}}
    params.update({k: v for k, v in (("queries", d.queries), ("k", d.k)) if v is not None})
    st.query_params.clear()
    st.query_params.update({k: str(v) for k, v in params.items()})
    if d.source == "upload" and d.upload is None:
        st.info("Upload an SVMlight/LETOR file in the sidebar, or pick a built-in dataset.")
        st.stop()
    try:
        ds, key, cfg, sim, log = _build(d, c)
    except (ConfigError, DataFormatError, ValueError) as e:
        st.error(f"Cannot simulate: {escape_markdown(e)}")
        st.stop()
    _hand_over(log, ds, key, cfg, d, c)
    _show(log, sim, c["topk"], int(c["seed"]))


@dataclass(frozen=True)
class DatasetChoice:
    """The sidebar's data set: its source, seed, the uploaded file (or None), the size knob that applies (queries of
    the synthetic data, components K of the identifiability data; else None) and the data set's spec."""

    source: str
    data_seed: int
    upload: object
    queries: int | None
    k: int | None
    spec: str


def _dataset_choice() -> DatasetChoice:
    """The sidebar's data set: its source, seed, the spec (or the uploaded file) and its size knobs."""
    st.header("Dataset")
    named = sorted(available_datasets())
    sources = ["synthetic", "ig"] + named + ["upload"]
    asked = read_setting(SETTING["dataset"].with_options(tuple(sources)))
    source = st.selectbox("dataset", sources, sources.index(asked),
                          help="synthetic: the built-in LETOR-like default; ig: fully synthetic one-hot data "
                               "with K identifiability-graph components; named datasets come from the configured "
                               "data roots (../shared/data, ULTR_DATA_DIR); upload: an SVMlight/LETOR file "
                               "with qid (split 60/20/20 by query)", key="sim_dataset")
    data_seed = param_widget(PARAM["data_seed"])
    upload = None
    queries = k = None
    if source == "synthetic":
        s = SETTING["queries"]
        queries = st.number_input("queries", s.lo, s.hi, read_setting(s), 50,
                                  help="number of queries (60/20/20 split)", key="sim_queries")
        spec = f"synthetic:{queries}"
    elif source == "ig":
        k = st.number_input("components K", SETTING["k"].lo, SETTING["k"].hi, read_setting(SETTING["k"]),
                            help="IG components of the fully synthetic data", key="sim_components_k")
        spec = f"ig:{k}"
    elif source == "upload":
        upload = st.file_uploader("SVMlight / LETOR file", type=["txt", "svm", "letor", "dat"],
                                  help="lines 'label qid:Q fid:value …'; size limit in .streamlit/config.toml",
                                  key="sim_svmlight_letor_file")
        spec = "upload"
    else:
        spec = dataset_spec(source)        # a name from the data roots, never a typed path

    return DatasetChoice(source, data_seed, upload, queries, k, spec)


def _click_model_choice() -> dict:
    """The sidebar's click model and log size: one widget per parameter of the simulation schema, by its name."""
    st.header("Click model")
    c = {name: param_widget(PARAM[name]) for name in ("convention", "eta", "noise")}
    use_topk = st.checkbox("top-k cut-off", in_url(PARAM["topk"]), help=PARAM["topk"].help, key="sim_top_k_cut_off")
    c["topk"] = param_widget(PARAM["topk"], default=5) if use_topk else None
    c |= {name: param_widget(PARAM[name]) for name in ("coupling", "contexts")}
    c["user_model"] = param_widget(PARAM["user_model"], format_func=lambda k: MODEL_BY_KEY[k].label)
    default = MODEL_BY_KEY[c["user_model"]].gamma       # only a model with a continuation has the knob
    c["continuation"] = None if default is None else param_widget(PARAM["continuation"], default=default)
    return c | {name: param_widget(PARAM[name]) for name in ("sessions", "seed")}


def _build(d: DatasetChoice, c: dict):
    """(data set, its cache key, click model, simulator, log), or a ConfigError naming the knob."""
    upload, source, spec = d.upload, d.source, d.spec
    if upload is not None:
        data = upload.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        ds, key = _uploaded(upload.name, digest, data), ("upload", digest)
    else:
        ds, key = _dataset(spec, int(d.data_seed)), (spec, int(d.data_seed))
    n_sessions, seed = c["sessions"], c["seed"]
    cfg = ClickModelConfig.from_values(c, logging="given" if source == "ig" else "svm")
    check_app_rows(int(n_sessions), ds.train)
    sim, log = _simulate(ds, key, cfg, int(n_sessions), int(seed))
    return ds, key, cfg, sim, log


def _hand_over(log, ds, key, cfg, d: DatasetChoice, c: dict) -> None:
    """The log other pages analyse, and the reproducible spec they put in their links (none for uploaded data)."""
    n_sessions, seed, source = int(c["sessions"]), int(c["seed"]), d.source
    st.session_state["log"] = log
    st.session_state.pop("log_notes", None)          # a simulated log has nothing dropped or repaired
    st.session_state["log_key"] = ("simulation", key, cfg, n_sessions, seed)
    st.session_state["dataset"] = ds
    st.session_state["log_spec"] = (st.session_state["log_key"], None if d.upload is not None else LogSpec(
        dataset=d.spec if source in ("synthetic", "ig") else source, click=cfg, n_sessions=n_sessions,
        seed=seed, data_seed=int(d.data_seed)).to_string())


def _show(log, sim, topk, seed: int) -> None:
    ctr = sim.true_ctr(log, log.ctr_by_position())
    hid = hidden_relevant(log)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("sessions", f"{log.n_sessions:,}")
    c2.metric("rows", f"{len(log):,}")
    c3.metric("clicks", f"{int(log.frame['click'].sum()):,}")
    spread = log.meta.get("coupling_exponent")
    if spread:
        st.caption(f"Coupling exponent 1 + wᵀx′ over the training documents: std **{spread['std']:.2f}**, "
                   f"5–95 % range **{spread['p5']:.2f} … {spread['p95']:.2f}** (mean {spread['mean']:.2f}); "
                   "the observation of a document at position p is v_p to the power η × max(that, 0). "
                   "The official scaling gives a std of ≈ 0.7 at η_c = 0.6 on the Yahoo! sample.")
    if hid["relevant"] is not None and topk is not None:
        c4.metric("relevant documents hidden by top-k", f"{hid['hidden']:,} / {hid['relevant']:,}",
                  help="distinct (query, document) pairs with label ≥ 1 below the cut-off")

    n_pos = int(ctr["position"].max())
    st.plotly_chart(ctr_by_position_figure(ctr, *sim.examination_shown(log, n_pos)), key="ctr")
    st.caption("Bars: observed CTR with 95 % binomial intervals. Black: the users' true click probability at each "
               "rank (r·o; under trust bias o·(ε⁻ + (ε⁺ − ε⁻)·r)). Dashed red: the position's observation probability "
               "(right axis).")
    st.plotly_chart(clicks_per_rank_figure(log.frame), key="clicks")
    st.subheader("A sample of the log")
    st.dataframe(log.sample(50, seed=seed), hide_index=True)
    d1, d2 = st.columns(2)
    d1.download_button("Download Parquet", log.to_parquet_bytes, "clicks.parquet",
                       help="the log with its metadata (click model, seed); built when you click",
                       key="sim_download_parquet")
    d2.download_button("Download CSV", lambda: log.to_csv(), "clicks.csv", help="built when you click",
                       key="sim_download_csv")


run_page(main)
