"""CLD evidence: Table 2 analogue and the curves of Figs. 4–7 (top-k selection bias).

    python experiments/cld_study.py --figure FIGURE [--protocol official|paper_text]
        [--datasets synthetic,mq2008,yahoo] [--seeds 5] [--jobs 2]

FIGURE: table2, lr_tuning, k_paper, eta_paper, sessions_paper, noise_paper, misspec_paper, k, k_mq2008, eta,
noise, sessions, misspec or all.

Table 2 and the Figs. 4–7 sweeps (``*_paper``) run under a protocol of
:mod:`ultr_core.studies.cld_protocols`: the official code's (default; outputs named ``*_official``) or
the paper's text as read before issue #21 (``--protocol paper_text``; the older outputs).  Models as in
the paper (§6): linear rankers for CLD and Heckman_rank, DNN (ELU MLP) for Naive, IPS, Oracle and
CLD_pair; RankAgg aggregates the DNN IPS ranker with Heckman.  Click model in the CLD convention
o_p = (1/p)^η for p ≤ k.  Writes docs/results/cld_<name>.csv, docs/figures/cld_<name>.png and
docs/results/cld_study_<name>.md.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from cld_sweeps import LEGACY_SWEEPS, PAPER_SWEEPS, legacy_sweep, paper_sweep
from cld_tables import official_table2, paper_lr_tuning, paper_table2

ROOT = Path(__file__).resolve().parents[1]


def run(figure, seeds, jobs, datasets=None, real_seeds=None, protocol="official", only=None):
    t0 = time.time()
    seeds = list(seeds)
    if figure == "table2":
        fn = official_table2 if protocol == "official" else paper_table2
        fn(seeds, jobs, t0, datasets or ("synthetic", "mq2008", "yahoo"), real_seeds)
    elif figure == "lr_tuning":
        paper_lr_tuning(seeds, jobs, t0)
    elif figure in PAPER_SWEEPS:
        for dataset in datasets or ("synthetic",):
            paper_sweep(figure, seeds, jobs, time.time(), dataset, protocol, only)
    else:
        assert figure in LEGACY_SWEEPS or figure in ("misspec", "k_mq2008"), figure
        legacy_sweep(figure, seeds, jobs, t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--figure",
        default="all",
        choices=["table2", "lr_tuning", *PAPER_SWEEPS, "k", "k_mq2008", "eta", "noise", "sessions", "misspec", "all"],
    )
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
    for f in (["table2", "lr_tuning", *PAPER_SWEEPS, "k", "k_mq2008", "eta", "noise", "sessions",
               "misspec"] if a.figure == "all"
              else [a.figure]):
        run(f, list(range(a.seeds)), a.jobs, a.datasets.split(",") if a.datasets else None,
            None if a.real_seeds is None else list(range(a.real_seeds)), a.protocol,
            a.methods.split(",") if a.methods else None)


if __name__ == "__main__":
    main()
