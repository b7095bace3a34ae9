"""CLD evidence: Table 2 analogue and the curves of Figs. 4–7 (top-k selection bias).

    python experiments/cld_study.py --figure table2|lr_tuning|k_paper|eta_paper|sessions_paper|noise_paper|misspec_paper|k|k_mq2008|eta|noise|sessions|misspec|all [--protocol official|paper_text] [--datasets synthetic,mq2008,yahoo] [--seeds 5] [--jobs 2]

Table 2 and the Figs. 4–7 sweeps (``*_paper``) run under a protocol of
:mod:`ultr_core.studies.cld_protocols`: the official code's (default; outputs named ``*_official``) or
the paper's text as read before issue #21 (``--protocol paper_text``; the older outputs).  Models as in
the paper (§6): linear rankers for CLD and Heckman_rank, DNN (ELU MLP) for Naive, IPS, Oracle and
CLD_pair; RankAgg aggregates the DNN IPS ranker with Heckman.  Click model in the CLD convention
o_p = (1/p)^η for p ≤ k.  Writes docs/results/cld_<name>.csv, docs/figures/cld_<name>.png and
docs/cld_study_<name>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from ultr_core.algorithms import TrainConfig  # noqa: E402
from ultr_core.studies.experiment import ExperimentSpec, run_grid  # noqa: E402
from ultr_core.app.figures import sweep_figure  # noqa: E402
from ultr_core.simulation.clickmodel import ClickModelConfig  # noqa: E402
from _common import save as _save, table  # noqa: E402
from ultr_core.evaluation.stats import paired_differences, summarise  # noqa: E402

MQ = ROOT.parent / "shared" / "data" / "mq2008"
LINEAR = {"cld", "heckman"}
ALL = ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair", "oracle"]


def _pair_table(pairs: pd.DataFrame, fmt: dict | None = None) -> pd.DataFrame:
    """:func:`~ultr_core.evaluation.stats.paired_differences` (nDCG@1) as printed in the study tables."""
    out = pairs.drop(columns="n").assign(mean_diff=pairs.mean_diff.map("{:+.4f}".format), p=pairs.p.map("{:.3f}".format))
    for c, f in (fmt or {}).items():
        out[c] = out[c].map(f.format)
    return out.rename(columns={"mean_diff": "mean diff nDCG@1", "p": "p (paired t)"})


def grid_methods(base: ExperimentSpec, grid: dict, methods, seeds, jobs) -> pd.DataFrame:
    parts = []
    for model in ("linear", "dnn"):
        ms = [m for m in methods if (m in LINEAR) == (model == "linear")]
        if ms:
            parts.append(run_grid(base.with_value("train.model", model), {**grid, "train.algorithm": ms},
                                  seeds, n_jobs=jobs))
    return pd.concat(parts, ignore_index=True)




#: the CLD paper's rankers and optimiser (§6): ELU 256-128-64 with dropout 0.5 for Naive, IPS, Oracle
#: and CLD_pair; linear CLD and Heckman_rank; Xavier initialisation, L2 1e-3; lr from the paper's grid
from ultr_core.studies.cld_protocols import PAPER_DNN, PAPER_LINEAR  # noqa: E402  (one copy of the paper-text settings)
GAMMAS = [0.05, 0.10, 0.15, 0.20, 0.25, 0.30]          # the paper's tuning range for γ
YAHOO = ROOT.parent / "shared" / "data" / "yahoo_sample"
TABLE2_DATA = {"synthetic": ("synthetic:500:24", 20_000), "mq2008": (f"mq2008:{MQ}", 50_000),
               "yahoo": (f"yahoo:{YAHOO}", 50_000)}
#: (row label, TrainConfig changes, grid): every method of Table 2, plus the ablations the issue asks for
VARIANTS = [
    ("Naive", dict(algorithm="naive", **PAPER_DNN), {}),
    ("IPS", dict(algorithm="ips", **PAPER_DNN), {}),
    ("Heckman_rank", dict(algorithm="heckman", **PAPER_LINEAR), {}),
    ("Heckman_rank (LS + Mills score, old)", dict(algorithm="heckman", heckman="ls_mills", **PAPER_LINEAR), {}),
    ("RankAgg", dict(algorithm="rankagg", **PAPER_DNN), {}),
    ("CLD", dict(algorithm="cld", cld_form="paper_text", **PAPER_LINEAR), {"train.cld_gamma": [0.0] + GAMMAS}),
    ("CLD_pair (mixed pairs random)", dict(algorithm="cld_pair", pair_orientation="random", **PAPER_DNN), {}),
    ("CLD_pair (selected first)", dict(algorithm="cld_pair", pair_orientation="selected_first", **PAPER_DNN), {}),
    ("Oracle", dict(algorithm="oracle", **PAPER_DNN), {}),
]


def paper_table2(seeds, jobs, t0, datasets, real_seeds=None):
    """CLD Table 2 under the paper's protocol: binarised relevance (grades ≥ ¾·max relevant, MAP on
    it), top-5 of long candidate lists, 10 % click noise, η ∈ {0.1, 1}; γ tuned per seed on
    validation over [0.05, 0.30] beside the γ = 0 ablation; paired differences CLD − baselines."""
    from ultr_core.studies.selection import tuned_per_seed
    metrics = ["ndcg@1", "ndcg@3", "map"]
    cache = ROOT.parent / ".cache_cld_table2"                 # resumable; outside the repository
    frames = []
    used = {}
    for name in datasets:
        ds, n_sessions = TABLE2_DATA[name]
        seeds_here = seeds if name == "synthetic" or real_seeds is None else real_seeds
        used[name] = len(seeds_here)
        for eta in (0.1, 1.0):
            click = ClickModelConfig(topk=5, convention="reciprocal", eta=eta, noise=0.1, relevance="binary")
            for label, changes, grid in VARIANTS:
                if label == "Oracle" and eta != 1.0:
                    continue                                  # labels only: the same at every η
                base = ExperimentSpec(dataset=ds, click=click, n_sessions=n_sessions,
                                      train=TrainConfig(steps=600, **changes))
                df = run_grid(base, grid, seeds_here, n_jobs=jobs, cache_dir=cache)
                df["method"], df["dataset"], df["eta"] = label, name, eta
                frames.append(df)
            print(f"{name} η={eta}: {time.time() - t0:.0f} s", flush=True)
    raw = pd.concat(frames, ignore_index=True)
    oracle = raw[raw.method == "Oracle"]
    raw = pd.concat([raw, oracle.assign(eta=0.1)], ignore_index=True)
    cld = raw[raw.method == "CLD"]
    rows = [raw[raw.method != "CLD"],
            cld[cld["train.cld_gamma"] == 0.0].assign(method="CLD (γ = 0, no selection coupling)"),
            tuned_per_seed(cld[cld["train.cld_gamma"] > 0], ["dataset", "eta"], ["train.cld_gamma"]).assign(
                method="CLD (γ tuned on validation)"),
            cld[cld["train.cld_gamma"] == 0.15].assign(method="CLD (γ = 0.15 fixed)")]
    df = pd.concat(rows, ignore_index=True)
    order = {m: i for i, m in enumerate(["Naive", "IPS", "Heckman_rank", "Heckman_rank (LS + Mills score, old)",
                                         "RankAgg", "CLD (γ tuned on validation)", "CLD (γ = 0.15 fixed)",
                                         "CLD (γ = 0, no selection coupling)", "CLD_pair (mixed pairs random)",
                                         "CLD_pair (selected first)", "Oracle"])}
    df = df.sort_values(["dataset", "eta", "method"], key=lambda c: c.map(order) if c.name == "method" else c)
    s = summarise(df, ["dataset", "eta", "method"], metrics)
    # does the selection term matter? paired over seeds: tuned γ − γ = 0, and CLD vs each baseline
    pairs = _pair_table(paired_differences(
        df, "CLD (γ tuned on validation)", ("CLD (γ = 0, no selection coupling)", "IPS", "Heckman_rank", "RankAgg",
                                            "Naive"), by=["dataset", "eta"], ref_label="CLD (γ tuned)"))
    chosen = (df[df.method == "CLD (γ tuned on validation)"].groupby(["dataset", "eta"])["train.cld_gamma"]
              .apply(lambda x: ", ".join(f"{v:.2f}" for v in x)).reset_index())
    from _common import frame_md
    md = (f"# CLD Table 2 under the paper's protocol ({', '.join(f'{k}: {v} seeds' for k, v in used.items())})\n\n"
          "Top-5 of each logged list, click noise ε = 0.1, o_p = (1/p)^η (CLD eq. 14) with η ∈ {0.1, 1}; "
          "relevance **binarised** as CLD §6 (grades ≥ ¾·max relevant: 3–4 of 0–4, 2 of 0–2; irrelevant "
          "documents clicked with ε), MAP on the same binarisation, nDCG on the graded labels. Synthetic: "
          "500 queries × 24 candidates (Yahoo!-like list length); MQ2008 fold 1; the 251-query Yahoo! sample. "
          "Rankers as the paper: ELU 256-128-64 + dropout 0.5 (Naive, IPS, RankAgg's IPS, CLD_pair, Oracle), "
          "linear CLD and Heckman_rank; Xavier initialisation, L2 10⁻³, lr 10⁻³ (DNN) / 5·10⁻³ (linear), "
          "600 steps, model selection on validation nDCG@10. γ tuned per seed on validation over "
          "{0.05, …, 0.30}. Heckman_rank as Ovaisi et al. (probit stage 2 on all candidates, ranked by xᵀβ); "
          "the old variant beside it. Oracle is trained on labels (the same at both η).\n\n"
          "Mean [90 % t-interval] on the test split.\n\n" + table(s, ["dataset", "eta", "method"], metrics)
          + "\n\n## Does the selection term matter? Paired differences over seeds (nDCG@1)\n\n"
          + frame_md(pairs, index=False)
          + "\n\nγ chosen on validation per seed:\n\n" + frame_md(chosen, index=False)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure table2` ({time.time() - t0:.0f} s here).")
    _save("cld", "table2", df, md, {})


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
    from ultr_core.studies.selection import tuned_per_seed
    from _common import frame_md
    key, values, fixed, methods, xtitle, what = PAPER_SWEEPS[figure]
    if only:                                    # --methods: a subset of the figure's methods (exact labels)
        methods = tuple(m for m in methods if m in only or (m.startswith("CLD_pair") and "CLD_pair" in only))
    official = protocol == "official"
    metrics = ["ndcg@1", "ndcg@3", "map"]
    cache = ROOT.parent / ".cache_cld_table2"
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
    frames = []
    for label, changes, grid in variants:
        click = ClickModelConfig(**click_kw, **({"topk": topk} if isinstance(topk, int) else {}))
        spec, n_sessions = TABLE2_DATA[dataset]
        base = ExperimentSpec(dataset=spec, click=click, n_sessions=n_sessions,
                              train=TrainConfig(**{"steps": 600, **changes}))
        df = run_grid(base, {**grid_k, key: values, **grid}, seeds, n_jobs=jobs, cache_dir=cache)
        frames.append(df.assign(method=label))
        print(f"{figure} {label}: {time.time() - t0:.0f} s", flush=True)
    raw = pd.concat(frames, ignore_index=True)
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


#: linear CLD under the official protocol (lr 10⁻³, weight decay 10⁻², 1,024 rows a step) converges in
#: ≈ 2,250 steps on the synthetic Table 2 data (600 steps: 0.57 nDCG@1, still rising; 3,000: 0.82; 15,000: 0.82)
OFFICIAL_CLD_STEPS = dict(steps=3000, eval_every=250)


#: CLD_pair without the pairs of two clicked documents: the official `BPRLoss_sel3` puts unweighted selection
#: terms on them, and as they are ordered by 1/ρ̂ alone they push the lower-shown document up (docs/findings.md)
PAIR_NO_BOTH = "CLD_pair (no both-clicked pairs)"


def official_variants():
    """(row label, TrainConfig changes, grid) of the official protocol's Table 2, with the ablations
    that separate the official choices: ρ = 0, the last step instead of validation, eq. 10 as printed
    on the same data, CLD_pair's printed pairs."""
    from ultr_core.studies.cld_protocols import RHO_GRID, protocol_train as pt
    cld = {**pt("official", "cld"), **OFFICIAL_CLD_STEPS}
    return [
        ("Naive", pt("official", "naive"), {}), ("IPS", pt("official", "ips"), {}),
        ("Heckman_rank", pt("official", "heckman"), {}), ("RankAgg", pt("official", "rankagg"), {}),
        ("CLD", cld, {"train.cld_gamma": sorted({0.0, *RHO_GRID})}),
        ("CLD (ρ = 0.5, last step: the official selection)", {**cld, "keep_best": False}, {}),
        ("CLD (eq. 10 as printed: per-candidate ĉ/ρ, probit, γ = 0.5)", {**cld, "cld_form": "paper_text"}, {}),
        ("CLD_pair", pt("official", "cld_pair"), {}),
        ("CLD_pair (printed pairs: per query, mixed in random order)",
         {**pt("official", "cld_pair"), "pair_orientation": "random"}, {}),
        (PAIR_NO_BOTH, {**pt("official", "cld_pair"), "pair_both_clicked": False}, {}),
        ("Oracle", pt("official", "oracle"), {}),
    ]


def official_table2(seeds, jobs, t0, datasets, real_seeds=None):
    """CLD Table 2 under the official code's protocol (:mod:`ultr_core.studies.cld_protocols`):
    ρ = 0.5 fixed (the official default) and tuned per seed on validation over
    :data:`~ultr_core.studies.cld_protocols.RHO_GRID`, ρ = 0 beside every CLD row, paired differences."""
    from ultr_core.studies.cld_protocols import protocol_click
    from ultr_core.studies.selection import tuned_per_seed
    from _common import frame_md
    metrics = ["ndcg@1", "ndcg@3", "map"]
    cache = ROOT.parent / ".cache_cld_table2"
    frames, used = [], {}
    for name in datasets:
        ds, n_sessions = TABLE2_DATA[name]
        seeds_here = seeds if name == "synthetic" or real_seeds is None else real_seeds
        used[name] = len(seeds_here)
        for eta in (0.1, 1.0):
            click = ClickModelConfig(topk=5, eta=eta, noise=0.1, **protocol_click("official"))
            for label, changes, grid in official_variants():
                if label == "Oracle" and eta != 1.0:
                    continue
                base = ExperimentSpec(dataset=ds, click=click, n_sessions=n_sessions,
                                      train=TrainConfig(**{"steps": 600, **changes}))
                df = run_grid(base, grid, seeds_here, n_jobs=jobs, cache_dir=cache)
                frames.append(df.assign(method=label, dataset=name, eta=eta))
            print(f"{name} η={eta}: {time.time() - t0:.0f} s", flush=True)
    raw = pd.concat(frames, ignore_index=True)
    raw = pd.concat([raw, raw[raw.method == "Oracle"].assign(eta=0.1)], ignore_index=True)
    cld = raw[raw.method == "CLD"]
    df = pd.concat([raw[raw.method != "CLD"],
                    tuned_per_seed(cld[cld["train.cld_gamma"] > 0], ["dataset", "eta"], ["train.cld_gamma"]).assign(
                        method="CLD (ρ tuned on validation)"),
                    cld[cld["train.cld_gamma"] == 0.5].assign(method="CLD (ρ = 0.5, the official default)"),
                    cld[cld["train.cld_gamma"] == 0.0].assign(method="CLD (ρ = 0: no selection coupling)")],
                   ignore_index=True)
    names = [v[0] for v in official_variants() if v[0] != "CLD"]
    order = {m: i for i, m in enumerate(names[:4] + ["CLD (ρ = 0.5, the official default)", "CLD (ρ tuned on validation)",
                                                     "CLD (ρ = 0: no selection coupling)"] + names[4:])}
    df = df.sort_values(["dataset", "eta", "method"], key=lambda c: c.map(order) if c.name == "method" else c)
    s = summarise(df, ["dataset", "eta", "method"], metrics)
    ref = "CLD (ρ = 0.5, the official default)"
    pairs = _pair_table(pd.concat([
        paired_differences(df, ref, ("CLD (ρ = 0: no selection coupling)", "IPS", "Heckman_rank", "RankAgg", "Naive",
                                     "CLD (eq. 10 as printed: per-candidate ĉ/ρ, probit, γ = 0.5)",
                                     "CLD (ρ = 0.5, last step: the official selection)"),
                           by=["dataset", "eta"], ref_label="CLD (ρ = 0.5)"),
        paired_differences(df, "CLD (ρ tuned on validation)", ("CLD (ρ = 0: no selection coupling)",),
                           by=["dataset", "eta"], ref_label="CLD (ρ tuned)"),
        paired_differences(df, "CLD_pair", ("IPS", "Heckman_rank", "RankAgg",
                                            "CLD_pair (printed pairs: per query, mixed in random order)",
                                            PAIR_NO_BOTH),
                           by=["dataset", "eta"], ref_label="CLD_pair")], ignore_index=True))
    chosen = (df[df.method == "CLD (ρ tuned on validation)"].groupby(["dataset", "eta"])["train.cld_gamma"]
              .apply(lambda x: ", ".join(f"{v:.1f}" for v in x)).reset_index())
    md = (f"# CLD Table 2 under the official code's protocol ({', '.join(f'{k}: {v} seeds' for k, v in used.items())})\n\n"
          "As github hyz20/CLD (commit f1227bd) runs it (`ultr_core/studies/cld_protocols.py`): top-5, click "
          "noise ε = 0.1, o_p = (1/p)^η with η ∈ {0.1, 1}, relevance binarised at grade ≥ 2 on 0–4 grades "
          "(≥ 1 on MQ2008), propensities estimated by result randomisation (10⁶ shuffled sessions); pairwise "
          "Naive / IPS (Δ-weighted BPR, weights not clipped), the official logistic Heckman_rank and RankAgg, "
          "pointwise CLD on per-(session, candidate) rows with the logistic link, CLD_pair on per-session "
          "Δ-weighted pairs (mixed pairs in both orders, 1:1); ELU 256-128-64 + dropout 0.5 (linear CLD and "
          "Heckman_rank), Adam lr 10⁻³, weight decay 10⁻², Xavier-normal. 600 steps (CLD: 3,000 steps of "
          "1,024 rows), not the official 40 epochs. Model selection on validation nDCG@10 — the official "
          "code reports its last epoch on test (row *last step*). ρ tuned per seed on validation over "
          "{0.1, 0.3, 0.5, 0.7}. MAP on the binarised labels, nDCG on the graded ones. Oracle is trained on "
          "labels (the same at both η). Row *no both-clicked pairs*: CLD_pair with `pair_both_clicked=False` — the "
          "Δ > 0 pairs of two clicked documents dropped (their unweighted selection terms push the lower-shown one "
          "up; docs/findings.md).\n\n"
          "Mean [90 % t-interval] on the test split.\n\n" + table(s, ["dataset", "eta", "method"], metrics)
          + "\n\n## Paired differences over seeds (nDCG@1)\n\n" + frame_md(pairs, index=False)
          + "\n\nρ chosen on validation per seed:\n\n" + frame_md(chosen, index=False)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure table2` ({time.time() - t0:.0f} s here).")
    _save("cld", "table2_official", df, md, {})


LR_GRID = [2e-4, 5e-4, 1e-3, 2e-3, 5e-3]                # the paper's learning-rate grid (§6)


def paper_lr_tuning(seeds, jobs, t0):
    """The paper's learning-rate grid tuned per method and seed on validation (Table 2's synthetic
    setting, η = 1): every method over :data:`LR_GRID` (CLD jointly with γ, and with γ = 0 as its
    ablation), beside the fixed preset learning rates used for Table 2 and Figs. 4–7."""
    from ultr_core.studies.selection import tuned_per_seed
    from _common import frame_md
    metrics = ["ndcg@1", "ndcg@3", "map"]
    cache = ROOT.parent / ".cache_cld_table2"
    click = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1, relevance="binary")
    frames = []
    for label, changes, grid in [v for v in VARIANTS if v[0] in ("Naive", "IPS", "Heckman_rank", "RankAgg", "CLD",
                                                              "CLD_pair (mixed pairs random)")]:
        base = ExperimentSpec(dataset=TABLE2_DATA["synthetic"][0], click=click, n_sessions=20_000,
                              train=TrainConfig(steps=600, **changes))
        df = run_grid(base, {"train.lr": LR_GRID, **grid}, seeds, n_jobs=jobs, cache_dir=cache)
        frames.append(df.assign(method=label, preset_lr=changes["lr"]))
        print(f"lr {label}: {time.time() - t0:.0f} s", flush=True)
    raw = pd.concat(frames, ignore_index=True)
    gamma = raw.get("train.cld_gamma")
    is_cld = raw.method == "CLD"
    parts = []
    for label, rows, tuned in [(m, raw[(raw.method == m)], ["train.lr"]) for m in raw.method.unique() if m != "CLD"] + [
            ("CLD (γ tuned)", raw[is_cld & (gamma > 0)], ["train.lr", "train.cld_gamma"]),
            ("CLD (γ = 0)", raw[is_cld & (gamma == 0)], ["train.lr"])]:
        fixed = rows[rows["train.lr"] == rows.preset_lr]
        if len(tuned) == 2:
            fixed = tuned_per_seed(fixed, ["method"], ["train.cld_gamma"])
        parts += [fixed.assign(method=label, lr="preset"), tuned_per_seed(rows, ["method"], tuned).assign(
            method=label, lr="tuned on validation")]
    df = pd.concat(parts, ignore_index=True)
    s = summarise(df, ["method", "lr"], metrics)
    chosen = (df[df.lr != "preset"].groupby("method")["train.lr"]
              .apply(lambda x: ", ".join(f"{v:g}" for v in x)).reset_index().rename(columns={"train.lr": "lr per seed"}))
    pairs = _pair_table(paired_differences(
        df[df.lr != "preset"], "CLD (γ tuned)", ("CLD (γ = 0)", "Naive", "IPS", "Heckman_rank", "RankAgg",
                                                 "CLD_pair (mixed pairs random)"))).rename(
        columns={"comparison": "comparison (all tuned)"})
    gain = _pair_table(paired_differences(df.sort_values("method"), "tuned on validation", ["preset"], by="method",
                                          method_col="lr")).drop(columns="comparison").rename(
        columns={"mean diff nDCG@1": "tuned − preset nDCG@1"})
    md = (f"# CLD Table 2 (synthetic, η = 1) with the paper's learning-rate grid tuned per method, {len(seeds)} seeds\n\n"
          "As `cld_study_table2.md` (binarised relevance, 500 queries × 24 candidates, top-5, ε = 0.1, the paper's "
          "rankers, Xavier, L2 10⁻³) with lr ∈ {2e-4, 5e-4, 1e-3, 2e-3, 5e-3} (CLD §6) chosen per method and seed on "
          "validation nDCG@10 (CLD jointly with γ ∈ {0.05, …, 0.30}); `preset` = the fixed lr of Table 2 and "
          "Figs. 4–7 (10⁻³ for the DNNs, 5·10⁻³ for linear CLD / Heckman_rank).  Mean [90 % t-interval] on "
          "the test split.\n\n" + table(s, ["method", "lr"], metrics)
          + "\n\n## Does tuning the learning rate change the result? (paired over seeds)\n\n"
          + frame_md(gain, index=False)
          + "\n\n## CLD against the others, everything tuned (nDCG@1)\n\n" + frame_md(pairs, index=False)
          + "\n\nlr chosen on validation:\n\n" + frame_md(chosen, index=False)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure lr_tuning` ({time.time() - t0:.0f} s here).")
    _save("cld", "lr_tuning", df, md, {})


def run(figure, seeds, jobs, datasets=None, real_seeds=None, protocol="official", only=None):
    t0 = time.time()
    seeds = list(seeds)
    click = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1)
    base = ExperimentSpec(click=click, n_sessions=20_000, train=TrainConfig(steps=600))
    metrics = ["ndcg@1", "ndcg@3", "map"]
    if figure == "table2":
        fn = official_table2 if protocol == "official" else paper_table2
        fn(seeds, jobs, t0, datasets or ("synthetic", "mq2008", "yahoo"), real_seeds)
        return
    if figure == "lr_tuning":
        paper_lr_tuning(seeds, jobs, t0)
        return
    if figure in PAPER_SWEEPS:
        for dataset in datasets or ("synthetic",):
            paper_sweep(figure, seeds, jobs, time.time(), dataset, protocol, only)
        return
    sweeps = {
        # the synthetic default has 10 candidates per query: k = 10 would select everything
        "k": ("click.topk", [2, 3, 4, 5, 6, 7, 8, 9], ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair"]),
        "eta": ("click.eta", [0.0, 0.5, 1.0, 1.5, 2.0], ["naive", "ips", "heckman", "cld", "cld_pair"]),
        "noise": ("click.noise", [0.0, 0.1, 0.2, 0.3, 0.5], ["naive", "ips", "heckman", "cld", "cld_pair"]),
        "sessions": ("n_sessions", [2_000, 5_000, 20_000, 50_000], ["naive", "ips", "heckman", "cld", "cld_pair"]),
    }
    if figure == "misspec":
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
        return
    if figure == "k_mq2008":          # MQ2008 lists hold up to 121 candidates: k up to 20
        mq = ExperimentSpec(dataset=f"mq2008:{MQ}", click=click, n_sessions=50_000, train=TrainConfig(steps=600))
        df = grid_methods(mq, {"click.topk": [2, 3, 5, 10, 15, 20]},
                          ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair"], seeds, jobs)
        s = summarise(df, ["click.topk", "algorithm"], metrics)
        md = (f"# CLD curve over the cut-off k on MQ2008 fold 1 (η = 1, 10 % noise, 50,000 sessions), "
              f"{len(seeds)} seeds\n\n" + table(s, ["click.topk", "algorithm"], metrics)
              + f"\n\nRe-run: `python experiments/cld_study.py --figure k_mq2008` ({time.time() - t0:.0f} s here).")
        _save("cld", "k_mq2008", df, md, {"cld_k_mq2008.png": sweep_figure(s, "click.topk", "ndcg@1",
                                                                         title="MQ2008: nDCG@1 vs cut-off k")})
        return
    key, values, methods = sweeps[figure]
    df = grid_methods(base, {key: values}, methods, seeds, jobs)
    s = summarise(df, [key, "algorithm"], metrics)
    md = (f"# CLD curve over {key} (synthetic, top-5 unless swept, η = 1, 10 % noise), {len(seeds)} seeds\n\n"
          + table(s, [key, "algorithm"], metrics)
          + f"\n\nRe-run: `python experiments/cld_study.py --figure {figure}` ({time.time() - t0:.0f} s here).")
    _save("cld", figure, df, md, {f"cld_{figure}.png": sweep_figure(s, key, "ndcg@1", title=f"nDCG@1 vs {key}")})


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--figure", default="all", choices=["table2", "lr_tuning", *PAPER_SWEEPS, "k", "k_mq2008", "eta", "noise",
                                                          "sessions", "misspec", "all"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--datasets", default=None, help="comma-separated of synthetic, mq2008, yahoo (Table 2: all "
                                                    "three by default; the *_paper sweeps: synthetic)")
    ap.add_argument("--real-seeds", type=int, default=None, help="Table 2: seeds on MQ2008 and the Yahoo! sample "
                                                                     "(default: --seeds)")
    ap.add_argument("--protocol", default="official", choices=["official", "paper_text"],
                    help="table2: the official code's protocol (default; writes cld_study_table2_official.md) or the "
                         "paper's text as this project read it before (cld_study_table2.md)")
    ap.add_argument("--methods", default=None, help="Figs. 4–7 sweeps: comma-separated labels to run (e.g. "
                                                    "IPS,RankAgg,CLD; default: all of the figure's methods)")
    a = ap.parse_args()
    for f in (["table2", "lr_tuning", *PAPER_SWEEPS, "k", "k_mq2008", "eta", "noise", "sessions", "misspec"] if a.figure == "all"
              else [a.figure]):
        run(f, list(range(a.seeds)), a.jobs, a.datasets.split(",") if a.datasets else None,
            None if a.real_seeds is None else list(range(a.real_seeds)), a.protocol,
            a.methods.split(",") if a.methods else None)


if __name__ == "__main__":
    main()
