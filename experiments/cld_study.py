"""CLD evidence: Table 2 analogue and the curves of Figs. 4–7 (top-k selection bias).

    python experiments/cld_study.py --figure table2|k|k_mq2008|eta|noise|sessions|misspec|all [--seeds 5] [--jobs 2]

Models as in the paper (§6): linear rankers for CLD and Heckman_rank, DNN (ELU MLP) for Naive,
IPS, Oracle and CLD_pair; RankAgg aggregates the DNN IPS ranker with Heckman.  Click model in
the CLD convention o_p = (1/p)^η for p ≤ k.  Writes docs/results/cld_<figure>.csv,
docs/figures/cld_<figure>.png and docs/cld_study_<figure>.md.
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
from ultr_core.experiment import ExperimentSpec, run_grid  # noqa: E402
from ultr_core.figures import sweep_figure  # noqa: E402
from ultr_core.simulation import ClickModelConfig  # noqa: E402
from _common import save as _save, table  # noqa: E402
from ultr_core.stats import summarise  # noqa: E402

MQ = ROOT.parent / "shared" / "data" / "mq2008"
LINEAR = {"cld", "heckman"}
ALL = ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair", "oracle"]


def grid_methods(base: ExperimentSpec, grid: dict, methods, seeds, jobs) -> pd.DataFrame:
    parts = []
    for model in ("linear", "dnn"):
        ms = [m for m in methods if (m in LINEAR) == (model == "linear")]
        if ms:
            parts.append(run_grid(base.with_value("train.model", model), {**grid, "train.algorithm": ms},
                                  seeds, n_jobs=jobs))
    return pd.concat(parts, ignore_index=True)




def run(figure, seeds, jobs):
    t0 = time.time()
    seeds = list(range(seeds))
    click = ClickModelConfig(topk=5, convention="reciprocal", eta=1.0, noise=0.1)
    base = ExperimentSpec(click=click, n_sessions=20_000, train=TrainConfig(steps=600))
    metrics = ["ndcg@1", "ndcg@3", "map"]
    if figure == "table2":
        frames = []
        for ds in ("synthetic", f"mq2008:{MQ}"):
            for eta in (0.1, 1.0):
                b = ExperimentSpec(dataset=ds, click=click, n_sessions=20_000 if ds == "synthetic" else 50_000,
                                   train=TrainConfig(steps=600)).with_value("click.eta", eta)
                df = grid_methods(b, {}, ALL, seeds, jobs)
                df["dataset"], df["eta"] = ds.split(":")[0], eta
                frames.append(df)
        df = pd.concat(frames, ignore_index=True)
        s = summarise(df, ["dataset", "eta", "algorithm"], metrics)
        md = (f"# CLD Table 2 analogue: top-5, 10 % click noise, η ∈ {{0.1, 1}} (CLD convention), {len(seeds)} seeds\n\n"
              "Mean ± half-width of the 90 % t-interval on the test split.\n\n" + table(s, ["dataset", "eta", "algorithm"], metrics)
              + f"\n\nRe-run: `python experiments/cld_study.py --figure table2` ({time.time() - t0:.0f} s here).")
        _save("cld", "table2", df, md, {})
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
    ap.add_argument("--figure", default="all", choices=["table2", "k", "k_mq2008", "eta", "noise", "sessions", "misspec",
                                                          "all"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    for f in (["table2", "k", "k_mq2008", "eta", "noise", "sessions", "misspec"] if a.figure == "all"
              else [a.figure]):
        run(f, a.seeds, a.jobs)


if __name__ == "__main__":
    main()
