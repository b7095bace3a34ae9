"""CLD Table 2 under the paper's text and under the official code's protocol, and the paper's learning-rate grid.
Run through ``experiments/cld_study.py --figure table2|lr_tuning``."""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from _common import frame_md, save as _save, table
from cld_common import CACHE, PAIR_NO_BOTH, TABLE2_DATA, VARIANTS, _pair_table, official_variants

from ultr_core.algorithms import TrainConfig
from ultr_core.evaluation.stats import paired_differences, summarise
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.studies.experiment import ExperimentSpec, run_grid

ROOT = Path(__file__).resolve().parents[1]


def paper_table2(seeds, jobs, t0, datasets, real_seeds=None):
    """CLD Table 2 under the paper's protocol: binarised relevance (grades ≥ ¾·max relevant, MAP on
    it), top-5 of long candidate lists, 10 % click noise, η ∈ {0.1, 1}; γ tuned per seed on
    validation over [0.05, 0.30] beside the γ = 0 ablation; paired differences CLD − baselines."""
    from ultr_core.studies.validation import tuned_per_seed
    metrics = ["ndcg@1", "ndcg@3", "map"]
    raw, used = _table2_runs(seeds, jobs, t0, datasets, real_seeds,
                             dict(convention="reciprocal", relevance="binary"), VARIANTS)
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


def _table2_runs(seeds, jobs, t0, datasets, real_seeds, click_kw: dict, variants):
    """Every variant on every data set at η ∈ {0.1, 1} (Oracle at η = 1 only: labels are the same at every η)
    with the click model ``click_kw`` of the protocol, and the seeds per data set."""
    frames, used = [], {}
    for name in datasets:
        ds, n_sessions = TABLE2_DATA[name]
        seeds_here = seeds if name == "synthetic" or real_seeds is None else real_seeds
        used[name] = len(seeds_here)
        for eta in (0.1, 1.0):
            click = ClickModelConfig(topk=5, eta=eta, noise=0.1, **click_kw)
            for label, changes, grid in variants:
                if label == "Oracle" and eta != 1.0:
                    continue
                base = ExperimentSpec(dataset=ds, click=click, n_sessions=n_sessions,
                                      train=TrainConfig(**{"steps": 600, **changes}))
                df = run_grid(base, grid, seeds=seeds_here, n_jobs=jobs, cache_dir=CACHE)
                frames.append(df.assign(method=label, dataset=name, eta=eta))
            print(f"{name} η={eta}: {time.time() - t0:.0f} s", flush=True)
    return pd.concat(frames, ignore_index=True), used


def official_table2(seeds, jobs, t0, datasets, real_seeds=None):
    """CLD Table 2 under the official code's protocol (:mod:`ultr_core.studies.cld_protocols`):
    ρ = 0.5 fixed (the official default) and tuned per seed on validation over
    :data:`~ultr_core.studies.cld_protocols.RHO_GRID`, ρ = 0 beside every CLD row, paired differences."""
    from ultr_core.studies.validation import tuned_per_seed
    metrics = ["ndcg@1", "ndcg@3", "map"]
    from ultr_core.studies.cld_protocols import protocol_click
    raw, used = _table2_runs(seeds, jobs, t0, datasets, real_seeds, protocol_click("official"), official_variants())

    raw = pd.concat([raw, raw[raw.method == "Oracle"].assign(eta=0.1)], ignore_index=True)
    cld = raw[raw.method == "CLD"]
    df = pd.concat([raw[raw.method != "CLD"],
                    tuned_per_seed(cld[cld["train.cld_gamma"] > 0], ["dataset", "eta"], ["train.cld_gamma"]).assign(
                        method="CLD (ρ tuned on validation)"),
                    cld[cld["train.cld_gamma"] == 0.5].assign(method="CLD (ρ = 0.5, the official default)"),
                    cld[cld["train.cld_gamma"] == 0.0].assign(method="CLD (ρ = 0: no selection coupling)")],
                   ignore_index=True)
    names = [v[0] for v in official_variants() if v[0] != "CLD"]
    order = {m: i for i, m in enumerate(names[:4] + ["CLD (ρ = 0.5, the official default)",
                                                     "CLD (ρ tuned on validation)",
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
    md = (f"# CLD Table 2 under the official code's protocol "
          f"({', '.join(f'{k}: {v} seeds' for k, v in used.items())})\n\n"
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
    from ultr_core.studies.validation import tuned_per_seed
    metrics = ["ndcg@1", "ndcg@3", "map"]
    click = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1, relevance="binary")
    frames = []
    for label, changes, grid in [v for v in VARIANTS if v[0] in ("Naive", "IPS", "Heckman_rank", "RankAgg", "CLD",
                                                              "CLD_pair (mixed pairs random)")]:
        base = ExperimentSpec(dataset=TABLE2_DATA["synthetic"][0], click=click, n_sessions=20_000,
                              train=TrainConfig(steps=600, **changes))
        df = run_grid(base, {"train.lr": LR_GRID, **grid}, seeds=seeds, n_jobs=jobs, cache_dir=CACHE)
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
    chosen = (
        df[df.lr != "preset"]
        .groupby("method")["train.lr"]
        .apply(lambda x: ", ".join(f"{v:g}" for v in x))
        .reset_index()
        .rename(columns={"train.lr": "lr per seed"})
    )
    pairs = _pair_table(paired_differences(
        df[df.lr != "preset"], "CLD (γ tuned)", ("CLD (γ = 0)", "Naive", "IPS", "Heckman_rank", "RankAgg",
                                                 "CLD_pair (mixed pairs random)"))).rename(
        columns={"comparison": "comparison (all tuned)"})
    gain = _pair_table(paired_differences(df.sort_values("method"), "tuned on validation", ["preset"], by="method",
                                          method_col="lr")).drop(columns="comparison").rename(
        columns={"mean diff nDCG@1": "tuned − preset nDCG@1"})
    md = (f"# CLD Table 2 (synthetic, η = 1) with the paper's learning-rate grid tuned per method, {len(seeds)} "
          f"seeds\n\n"
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
