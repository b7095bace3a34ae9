"""Reproduce the identifiability paper's fully synthetic study and its Fig. 4c/d shape.

    python experiments/identifiability_study.py [--quick]
    python experiments/identifiability_study.py --table1 [--seeds 5]   # the paper's own data and fits
    python experiments/identifiability_study.py --figures [--seeds 5]  # Figs. 3a, 4a, 4b, 6 on the same data
    python experiments/identifiability_study.py --fig7                 # Fig. 7c/d on Yahoo! and MQ2008
    python experiments/identifiability_study.py --table2 [--seeds 5]   # Table 2 / 6: 5,000 contexts, node merging
    python experiments/identifiability_study.py --official DIR          # the paper's published folders (DIR/K=1 …)

Writes docs/results/identifiability_*.csv and docs/results/identifiability_study.md.
"""
from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: flag → (module, function, what it is given): one study per module (experiments/ig_*.py)
STUDIES = {"official": ("ig_official", "official_data_table"), "table1": ("ig_paper", "paper_table1"),
           "figures": ("ig_paper", "paper_figures"), "table2": ("ig_semisynthetic", "paper_table2"),
           "official_merging": ("ig_semisynthetic", "official_merging_check"), "fig7": ("ig_synthetic", "fig7"),
           "k1": ("ig_synthetic", "k1")}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--table1", action="store_true", help="Table 1 / Fig. 3b / Table 6 on the paper's own data")
    ap.add_argument("--figures", action="store_true", help="Figs. 3a, 4a, 4b and 6 on the paper's own data")
    ap.add_argument("--fig7", action="store_true", help="Fig. 7c/d: features removed until the IG connects")
    ap.add_argument("--table2", action="store_true", help="Table 2 / Table 6: 5,000 contexts on MQ2008 and the "
                                                          "Yahoo! sample, node merging")
    ap.add_argument("--official-merging", action="store_true", help="what the official node-merging script "
                    "re-maps on the Table 2 data (three readings; components after each)")
    ap.add_argument("--official", metavar="DIR", help="the paper's published dataset_fully_simulation folders "
                                                       "under DIR: ig and ig-fit with no flags, beside paper:K")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--all-methods", action="store_true", help="with --table1: add Regression-EM and Two-Tower "
                                                                "(their official updates; ≈ 1 min per K and seed)")
    ap.add_argument("--quick", action="store_true", help="fewer sessions and seeds (a smoke run)")
    ap.add_argument("--k1", action="store_true", help="only the K = 1 recovery check at 3,000,000 sessions")
    return ap


def main():
    import importlib
    a = _parser().parse_args()
    seeds = list(range(a.seeds))
    for flag, (module, name) in STUDIES.items():
        if getattr(a, flag):
            fn = getattr(importlib.import_module(module), name)
            if flag == "official":
                return fn(Path(a.official), seeds)
            if flag == "table1":
                return fn(seeds, a.all_methods)
            return fn() if flag in ("fig7", "k1") else fn(seeds)
    from ig_synthetic import default_study
    default_study(a.quick)


if __name__ == "__main__":
    main()
