"""CLD Figs. 4–7 under a Table 2 protocol (official or paper text) and the first curves on the synthetic default.
Run through ``experiments/cld_study.py --figure k_paper|eta_paper|…|k|eta|noise|sessions|misspec|k_mq2008``."""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from _common import data_spec, frame_md, save as _save, table
from cld_common import CACHE, TABLE2_DATA, VARIANTS, _pair_table, grid_methods, official_variants

from ultr_core.algorithms import TrainConfig
from ultr_core.app.figures import sweep_figure
from ultr_core.evaluation.stats import paired_differences, summarise
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.studies.experiment import ExperimentSpec, run_grid

ROOT = Path(__file__).resolve().parents[1]


#: Figs. 4–7 under the Table 2 protocol (synthetic, 500 queries × 24 candidates, binarised relevance, the
#: paper's rankers): name → (swept column, values, fixed changes of the click model, methods, x-axis title,
#: what the paper's figure is).  Every sweep has CLD with γ tuned per seed beside γ = 0.
PAPER_SWEEPS = {
    "k_paper": ("click.topk", [2, 3, 5, 10, 15], {}, ("Naive", "IPS", "Heckman_rank", "CLD"),
                "cut-off k", "Fig. 4 (left): cut-off k, η = 1"),
    "eta_paper": ("click.eta", [0.0, 0.5, 1.0, 1.5, 2.0], {"topk": 5},
                  ("Naive", "IPS", "Heckman_rank", "RankAgg", "CLD", "CLD_pair (mixed pairs random)"),
                  "position-bias severity η", "Fig. 4 (right): η from 0 to 2, top-5"),
    "sessions_paper": ("n_sessions", [2_000, 5_000, 20_000, 50_000], {"topk": 5},
                       ("Naive", "IPS", "Heckman_rank", "RankAgg", "CLD", "CLD_pair (mixed pairs random)"),
                       "click sessions", "Fig. 5: click sessions, top-5, η = 1"),
    "noise_paper": ("click.noise", [0.0, 0.1, 0.2, 0.3, 0.5], {"topk": 5},
                    ("Naive", "IPS", "Heckman_rank", "RankAgg", "CLD", "CLD_pair (mixed pairs random)"),
                    "click noise ε (clicks on irrelevant documents)", "Fig. 6: click noise ε from 0 to 0.5, top-5"),
    "misspec_paper": ("train.ips_eta,train.cld_rho_eta", [0.0, 0.5, 1.0, 1.5, 2.0], {"topk": [3, 5]},
                      ("IPS", "RankAgg", "CLD", "CLD_pair (mixed pairs random)"),
                      "assumed η′ of the propensities (true η = 1)",
                      "Fig. 7: misspecified propensities η′, true η = 1, k = 3 and 5"),
}


def paper_sweep(figure, seeds, jobs, t0, dataset="synthetic", protocol="official", only=None):
    """CLD Figs. 4–7 under a Table 2 protocol (η = 1, ε = 0.1 unless swept) on ``dataset`` — a key of
    :data:`TABLE2_DATA`, by default the 24-candidate synthetic data: the methods of :data:`PAPER_SWEEPS`
    and paired differences of CLD against each other method at every swept value.  ``official``
    (default): the official code's protocol, CLD with ρ = 0.5 (its default) beside ρ = 0, written as
    ``cld_study_<figure>_official[_<dataset>].md`` (``k_paper`` → ``k_official``); ``paper_text``: CLD
    with γ tuned per seed on validation beside γ = 0, written as ``cld_study_<figure>[_<dataset>].md``."""
    from ultr_core.studies.cld_protocols import protocol_click
    from ultr_core.studies.validation import tuned_per_seed
    key, values, fixed, methods, xtitle, what = PAPER_SWEEPS[figure]
    if only:                                    # --methods: a subset of the figure's methods (exact labels)
        methods = tuple(m for m in methods if m in only or (m.startswith("CLD_pair") and "CLD_pair" in only))
    official = protocol == "official"
    metrics = ["ndcg@1", "ndcg@3", "map"]
    topk = fixed.get("topk")
    grid_k = {"click.topk": topk} if isinstance(topk, list) else {}
    by_cols = (["click.topk"] if grid_k else []) + [key]
    if official:
        methods = tuple("CLD_pair" if m.startswith("CLD_pair") else m for m in methods)
        variants = [(lab, c, {"train.cld_gamma": [0.0, 0.5]} if lab == "CLD" else g)
                    for lab, c, g in official_variants() if lab in methods]
        click_kw = dict(eta=1.0, noise=0.1, **protocol_click("official"))
        main, zero = "CLD (ρ = 0.5)", "CLD (ρ = 0)"
    else:
        variants = [v for v in VARIANTS if v[0] in methods]
        click_kw = dict(convention="reciprocal", eta=1.0, noise=0.1, relevance="binary")
        main, zero = "CLD (γ tuned)", "CLD (γ = 0)"
    raw = _sweep_runs(figure, variants, click_kw, topk, grid_k, key, values, dataset, seeds, jobs, t0)
    cld = raw[raw.method == "CLD"]
    gamma = cld["train.cld_gamma"]
    top = (cld[gamma == 0.5] if official else tuned_per_seed(cld[gamma > 0], by_cols, ["train.cld_gamma"]))
    df = pd.concat([raw[raw.method != "CLD"], cld[gamma == 0.0].assign(method=zero), top.assign(method=main)],
                   ignore_index=True)
    df = df.rename(columns={key: xtitle})
    by_cols = [xtitle if c == key else c for c in by_cols]
    s = summarise(df, by_cols + ["method"], metrics)
    pairs = _pair_table(paired_differences(df.sort_values(by_cols), main,
                                           [m for m in (zero, *methods) if m != "CLD"], by=by_cols),
                        fmt={c: "{:g}" for c in by_cols})
    _write_sweep(figure, df, s, pairs, by_cols, xtitle, what, grid_k, dataset, protocol, official, seeds, t0)


def _sweep_runs(figure, variants, click_kw, topk, grid_k, key, values, dataset, seeds, jobs, t0):
    """One grid per variant over the swept values (and k, when the figure has two), on ``dataset``."""
    frames = []
    for label, changes, grid in variants:
        click = ClickModelConfig(**click_kw, **({"topk": topk} if isinstance(topk, int) else {}))
        spec, n_sessions = TABLE2_DATA[dataset]
        base = ExperimentSpec(dataset=spec, click=click, n_sessions=n_sessions,
                              train=TrainConfig(**{"steps": 600, **changes}))
        df = run_grid(base, {**grid_k, key: values, **grid}, seeds=seeds, n_jobs=jobs, cache_dir=CACHE)
        frames.append(df.assign(method=label))
        print(f"{figure} {label}: {time.time() - t0:.0f} s", flush=True)
    return pd.concat(frames, ignore_index=True)


def _write_sweep(figure, df, s, pairs, by_cols, xtitle, what, grid_k, dataset, protocol, official, seeds, t0):
    metrics = ["ndcg@1", "ndcg@3", "map"]
    data_txt = {"synthetic": "synthetic, 500 queries × 24 candidates, 20,000 sessions",
                "mq2008": "MQ2008 fold 1, 50,000 sessions", "yahoo": "the 251-query Yahoo! sample, 50,000 sessions"}
    stem = figure.replace("_paper", "_official") if official else figure
    name = stem if dataset == "synthetic" else f"{stem}_{dataset}"
    how = ("the official code's protocol as `cld_study_table2_official.md` (official binarisation, estimated "
           "propensities, pairwise Naive / IPS, the official Heckman_rank, CLD on per-session rows with the "
           "logistic link, ρ = 0.5 — its default — beside ρ = 0, CLD_pair on per-session Δ-weighted pairs; "
           "model selection on validation)" if official else
           "the paper's text as `cld_study_table2.md` (binarised relevance, the paper's rankers and optimiser, γ "
           "tuned per seed on validation over {0.05, …, 0.30} beside γ = 0)")
    md = (f"# CLD {what} — {protocol.replace('_', ' ')} protocol, {dataset}, {len(seeds)} seeds\n\n"
          f"Under {how}; {data_txt[dataset]} unless swept, o_p = (1/p)^η, η = 1 and ε = 0.1 unless swept.  "
          "Mean [90 % t-interval] on the test split.\n\n"
          + table(s, by_cols + ["method"], metrics)
          + "\n\n## Paired differences over seeds (nDCG@1)\n\n" + frame_md(pairs, index=False)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure {figure}"
          + ("" if official else " --protocol paper_text")
          + ("" if dataset == "synthetic" else f" --datasets {dataset} --seeds {len(seeds)}")
          + f"` ({time.time() - t0:.0f} s here).")
    figs = {}
    for k in (grid_k.get("click.topk") or [None]):
        part = s if k is None else s[s["click.topk"] == k]
        suffix = "" if k is None else f"_k{k}"
        figs[f"cld_{name}{suffix}.png"] = sweep_figure(part, xtitle, "ndcg@1", by="method",
                                                      title=f"nDCG@1 vs {xtitle} ({dataset}, "
                                                            f"{protocol.replace('_', ' ')} protocol"
                                                            + ("" if k is None else f", k = {k}") + ")")
    _save("cld", name, df, md, figs)


#: the first CLD curves on the synthetic default (10 candidates per query: k = 10 would select everything)
LEGACY_SWEEPS = {
    "k": ("click.topk", [2, 3, 4, 5, 6, 7, 8, 9], ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair"]),
    "eta": ("click.eta", [0.0, 0.5, 1.0, 1.5, 2.0], ["naive", "ips", "heckman", "cld", "cld_pair"]),
    "noise": ("click.noise", [0.0, 0.1, 0.2, 0.3, 0.5], ["naive", "ips", "heckman", "cld", "cld_pair"]),
    "sessions": ("n_sessions", [2_000, 5_000, 20_000, 50_000], ["naive", "ips", "heckman", "cld", "cld_pair"]),
}


def legacy_sweep(figure, seeds, jobs, t0):
    """The first CLD curves (synthetic default, top-5 unless swept, η = 1, 10 % noise; MQ2008 for ``k_mq2008``)
    and the misspecified-propensity analogue of Fig. 7."""
    click = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1)
    base = ExperimentSpec(click=click, n_sessions=20_000, train=TrainConfig(steps=600))
    if figure == "misspec":
        return _misspec(base, seeds, jobs, t0)
    metrics = ["ndcg@1", "ndcg@3", "map"]
    if figure == "k_mq2008":          # MQ2008 lists hold up to 121 candidates: k up to 20
        mq = ExperimentSpec(dataset=data_spec("mq2008"), click=click, n_sessions=50_000, train=TrainConfig(steps=600))
        df = grid_methods(mq, {"click.topk": [2, 3, 5, 10, 15, 20]},
                          ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair"], seeds, jobs)
        s = summarise(df, ["click.topk", "algorithm"], metrics)
        md = (f"# CLD curve over the cut-off k on MQ2008 fold 1 (η = 1, 10 % noise, 50,000 sessions), "
              f"{len(seeds)} seeds\n\n" + table(s, ["click.topk", "algorithm"], metrics)
              + f"\n\nRe-run: `python experiments/cld_study.py --figure k_mq2008` ({time.time() - t0:.0f} s here).")
        _save("cld", "k_mq2008", df, md, {"cld_k_mq2008.png": sweep_figure(s, "click.topk", "ndcg@1",
                                                                         title="MQ2008: nDCG@1 vs cut-off k")})
        return None
    key, values, methods = LEGACY_SWEEPS[figure]
    df = grid_methods(base, {key: values}, methods, seeds, jobs)
    s = summarise(df, [key, "algorithm"], metrics)
    md = (f"# CLD curve over {key} (synthetic, top-5 unless swept, η = 1, 10 % noise), {len(seeds)} seeds\n\n"
          + table(s, [key, "algorithm"], metrics)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure {figure}` ({time.time() - t0:.0f} s here).")
    _save("cld", figure, df, md, {f"cld_{figure}.png": sweep_figure(s, key, "ndcg@1", title=f"nDCG@1 vs {key}")})


def _misspec(base, seeds, jobs, t0):
    metrics = ["ndcg@1", "ndcg@3", "map"]
    frames = []
    for k in (3, 5):
        df = grid_methods(base.with_value("click.topk", k), {"train.ips_eta,train.cld_rho_eta":
                                                              [0.0, 0.5, 1.0, 1.5, 2.0]},
                          ["ips", "cld", "cld_pair"], seeds, jobs)
        df["k"] = k
        frames.append(df.rename(columns={"train.ips_eta,train.cld_rho_eta": "assumed_eta"}))
    df = pd.concat(frames, ignore_index=True)
    s = summarise(df, ["k", "assumed_eta", "algorithm"], metrics)
    md = (f"# CLD Fig. 7 analogue: misspecified propensity (true η = 1; assumed η′), {len(seeds)} seeds\n\n"
          + table(s, ["k", "assumed_eta", "algorithm"], metrics)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure misspec` ({time.time() - t0:.0f} s here).")
    figs = {f"cld_misspec_k{k}.png": sweep_figure(s[s.k == k], "assumed_eta", "ndcg@1",
                                                  title=f"nDCG@1 vs assumed η′ (true η = 1, k = {k})")
            for k in (3, 5)}
    _save("cld", "misspec", df, md, figs)

