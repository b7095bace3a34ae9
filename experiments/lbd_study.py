"""LBD evidence: PBM ordering, Fig. 3a/3b (coupling sweep), Fig. 4 (λ × t heat-maps), MQ2008.

    python experiments/lbd_study.py --figure pbm|fig3|fig4|mq2008|all [--seeds 3] [--jobs 2]

Writes docs/results/lbd_<figure>.csv, PNG plots under docs/figures/ and docs/lbd_study_<figure>.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from ultr_core.algorithms import TrainConfig  # noqa: E402
from ultr_core.experiment import ExperimentSpec, run_grid  # noqa: E402
from ultr_core.figures import heatmap_figure, sweep_figure  # noqa: E402
from _common import frame_md, save as _save, table  # noqa: E402
from ultr_core.stats import paired_test, summarise  # noqa: E402

COUPLING = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
MQ = ROOT.parent / "shared" / "data" / "mq2008"





def run(figure: str, seeds, jobs):
    seeds = list(range(seeds))
    t0 = time.time()
    base = ExperimentSpec(n_sessions=20_000, train=TrainConfig(steps=600))
    if figure == "pbm":
        algs = ["naive", "ips", "dla", "regression_em", "two_tower", "pair_debias", "lbd", "oracle"]
        df = run_grid(base, {"train.algorithm": algs}, seeds, n_jobs=jobs)
        s = summarise(df, "algorithm", ["ndcg@1", "ndcg@5", "ndcg@10", "map"])
        naive = df[df.algorithm == "Naive"].sort_values("seed")["ndcg@10"].to_numpy()
        tests = "\n".join(f"- {a} − Naive: {paired_test(g.sort_values('seed')['ndcg@10'], naive)['mean_diff']:+.4f} "
                          f"(paired t-test p = {paired_test(g.sort_values('seed')['ndcg@10'], naive)['p']:.3g})"
                          for a, g in df.groupby("algorithm") if a != "Naive")
        md = (f"# PBM, η = 1, synthetic default ({len(seeds)} seeds, 20,000 sessions, DNN)\n\n"
              f"Mean and 90 % t-interval on the test split.\n\n{table(s, ['algorithm'], ['ndcg@1', 'ndcg@5', 'ndcg@10', 'map'])}"
              f"\n\n{tests}\n\nRe-run: `python experiments/lbd_study.py --figure pbm` ({time.time() - t0:.0f} s here).")
        _save("lbd", "pbm", df, md, {})
    elif figure == "fig3":
        algs = ["naive", "dla", "ips", "regression_em", "pair_debias", "two_tower", "lbd", "lbd_lips", "lbd_ber",
                "unlimited"]
        df = run_grid(base, {"click.coupling": COUPLING, "train.algorithm": algs}, seeds, n_jobs=jobs)
        s = summarise(df, ["click.coupling", "algorithm"], ["ndcg@10"])
        groups = ["Naive", "DLA", "IPS", "RegressionEM", "PairDebias", "TwoTower", "LBD"]
        ablate = ["LBD", "LBD_Lips", "LBD_Ber", "Unlimited"]
        wide = s.pivot(index="click.coupling", columns="algorithm", values="ndcg@10")
        md = (f"# LBD Fig. 3: nDCG@10 across coupling levels η_c (synthetic default, {len(seeds)} seeds, DNN, "
              f"λ = {base.train.lbd_lambda:g}, t = {base.train.lbd_t:g})\n\nMean nDCG@10 on the test split:\n\n"
              + frame_md(wide) + "\n\nWith 90 % t-intervals:\n\n"
              + table(s, ["click.coupling", "algorithm"], ["ndcg@10"])
              + f"\n\nRe-run: `python experiments/lbd_study.py --figure fig3` ({time.time() - t0:.0f} s here).")
        _save("lbd", "fig3", df, md, {
            "lbd_fig3a.png": sweep_figure(s[s.algorithm.isin(groups)], "click.coupling", "ndcg@10",
                                          title="Fig. 3a analogue: nDCG@10 vs coupling level η_c"),
            "lbd_fig3b.png": sweep_figure(s[s.algorithm.isin(ablate)], "click.coupling", "ndcg@10",
                                          title="Fig. 3b analogue: LBD and its ablations"),
        })
    elif figure == "fig4":
        grid = {"click.coupling": COUPLING, "train.lbd_lambda": [1.0, 100.0, 10000.0],
                "train.lbd_t": [0.1, 0.2, 0.3, 0.4]}
        df = run_grid(ExperimentSpec(n_sessions=20_000, train=TrainConfig(algorithm="lbd", steps=600)), grid, seeds,
                      n_jobs=jobs)
        best = (df.groupby(["click.coupling", "train.lbd_lambda", "train.lbd_t"])["ndcg@10"].mean()
                .reset_index().sort_values("ndcg@10").groupby("click.coupling").tail(1).sort_values("click.coupling"))
        md = (f"# LBD Fig. 4: (λ, t) heat-maps per coupling level ({len(seeds)} seeds, synthetic default, DNN)\n\n"
              "Best cell (mean nDCG@10 over seeds) per coupling level:\n\n" + frame_md(best, index=False)
              + f"\n\nRe-run: `python experiments/lbd_study.py --figure fig4` ({time.time() - t0:.0f} s here).")
        _save("lbd", "fig4", df, md, {"lbd_fig4.png": heatmap_figure(df)})
    elif figure == "mq2008":
        df = run_grid(ExperimentSpec(dataset=f"mq2008:{MQ}", n_sessions=50_000, train=TrainConfig(steps=600)),
                      {"train.algorithm": ["naive", "ips", "dla", "oracle"]}, seeds, n_jobs=jobs)
        s = summarise(df, "algorithm", ["ndcg@1", "ndcg@5", "ndcg@10", "map"])
        md = (f"# MQ2008 fold 1 with simulated clicks (PBM η = 1, 50,000 sessions, {len(seeds)} seeds, DNN)\n\n"
              + table(s, ["algorithm"], ["ndcg@1", "ndcg@5", "ndcg@10", "map"])
              + f"\n\nRe-run: `python experiments/lbd_study.py --figure mq2008` ({time.time() - t0:.0f} s here).")
        _save("lbd", "mq2008", df, md, {})


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--figure", default="all", choices=["pbm", "fig3", "fig4", "mq2008", "all"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    for f in (["pbm", "mq2008", "fig3", "fig4"] if a.figure == "all" else [a.figure]):
        run(f, a.seeds, a.jobs)


if __name__ == "__main__":
    main()
