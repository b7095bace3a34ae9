import streamlit as st

from ultr_core.errors import ConfigError, DataFormatError
from ultr_core.figures import clicks_per_rank_figure, ctr_by_position_figure
from ultr_core.simulation import ClickModelConfig, ClickSimulator, hidden_relevant
from ultr_core.sources import load_dataset


@st.cache_resource(show_spinner="Loading the dataset …", max_entries=4)
def _dataset(spec: str, seed: int):
    return load_dataset(spec, seed)


@st.cache_resource(show_spinner="Simulating clicks …", max_entries=8)
def _simulate(spec: str, data_seed: int, cfg: ClickModelConfig, n_sessions: int, seed: int):
    ds = _dataset(spec, data_seed)
    sim = ClickSimulator(cfg, seed=seed).fit(ds)
    return sim, sim.simulate(ds.train, n_sessions, seed=seed)


st.title("Simulate a click log")
st.caption("Clicks follow the examination hypothesis P(click) = r(y) · o(t); see the Home page for "
           "the two meanings of η.")

with st.sidebar:
    st.header("Dataset")
    source = st.selectbox("dataset", ["synthetic", "ig", "mq2008", "yahoo", "ultra"],
                          help="synthetic: the built-in LETOR-like default; ig: fully synthetic one-hot data "
                               "with K identifiability-graph components; the others read files by path.")
    spec = source
    if source == "synthetic":
        spec = f"synthetic:{st.number_input('queries', 50, 5000, 500, 50, help='number of queries (60/20/20 split)')}"
    elif source == "ig":
        spec = f"ig:{st.number_input('components K', 1, 10, 1, help='IG components of the fully synthetic data')}"
    else:
        path = st.text_input("folder", "../shared/data/" + {"mq2008": "mq2008", "yahoo": "yahoo_sample",
                                                             "ultra": ""}[source],
                             help="a folder on the server holding the files")
        spec = f"{source}:{path}"
    data_seed = st.number_input("dataset seed", 0, 10_000, 0, help="seed of the generated data")

    st.header("Click model")
    convention = st.radio("observation curve", ["eye_tracking", "reciprocal"], horizontal=True,
                          help="eye_tracking: o_p = v_p^η (ULTRA, LBD, identifiability); "
                               "reciprocal: o_p = (1/p)^η (CLD eq. 14)")
    eta = st.slider("position-bias severity η", 0.0, 2.0, 1.0, 0.1, help="0 = no position bias")
    noise = st.slider("click noise ε", 0.0, 0.5, 0.1, 0.05, help="r(y) = ε + (1 − ε)(2^y − 1)/(2^ymax − 1)")
    use_topk = st.checkbox("top-k cut-off", help="only the first k candidates are shown (CLD's selection bias)")
    topk = st.slider("k", 1, 20, 5, help="number of shown documents") if use_topk else None
    coupling = st.slider("coupling level η_c", 0.0, 0.6, 0.0, 0.1,
                         help="LBD individual-level observation: o_p(x) = v_p^{η·max(wᵀx′+1,0)}, w ~ U[−η_c, η_c]")
    n_contexts = st.number_input("contexts", 0, 100_000, 0, help="contextual PBM with this many context types (0 = off)")
    n_sessions = st.number_input("sessions", 100, 2_000_000, 20_000, 1000)
    seed = st.number_input("seed", 0, 10_000, 0, help="seed of the click simulation")

try:
    cfg = ClickModelConfig(eta=eta, convention=convention, noise=noise, topk=topk, coupling=coupling,
                           n_contexts=int(n_contexts),
                           logging="given" if source == "ig" else "svm")
    sim, log = _simulate(spec, int(data_seed), cfg, int(n_sessions), int(seed))
except (ConfigError, DataFormatError, ValueError) as e:
    st.error(f"Cannot simulate: {e}")
    st.stop()

st.session_state["log"] = log
st.session_state["dataset_spec"] = (spec, int(data_seed))

ctr = log.ctr_by_position()
hid = hidden_relevant(log)
c1, c2, c3, c4 = st.columns(4)
c1.metric("sessions", f"{log.n_sessions:,}")
c2.metric("rows", f"{len(log):,}")
c3.metric("clicks", f"{int(log.frame['click'].sum()):,}")
if hid["relevant"] is not None and topk is not None:
    c4.metric("relevant documents hidden by top-k", f"{hid['hidden']:,} / {hid['relevant']:,}",
              help="distinct (query, document) pairs with label ≥ 1 below the cut-off")

n_pos = int(ctr["position"].max())
st.plotly_chart(ctr_by_position_figure(ctr, sim.observation_curve(n_pos)), key="ctr")
st.plotly_chart(clicks_per_rank_figure(log.frame), key="clicks")
st.subheader("A sample of the log")
st.dataframe(log.sample(50, seed=int(seed)), hide_index=True)
d1, d2 = st.columns(2)
d1.download_button("Download Parquet", log.to_parquet_bytes(), "clicks.parquet",
                   help="the log with its metadata (click model, seed)")
d2.download_button("Download CSV", log.to_csv(), "clicks.csv")
