"""What the CLD study's scripts share: the data of Table 2, the paper-text and official-protocol variants, the
paired-difference table and the runner of a grid over linear and DNN methods (experiments/cld_*.py)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from _common import data_spec

from ultr_core.studies.cld_protocols import PAPER_DNN, PAPER_LINEAR
from ultr_core.studies.experiment import ExperimentSpec, run_grid

ROOT = Path(__file__).resolve().parents[1]


LINEAR = {"cld", "heckman"}
ALL = ["naive", "ips", "heckman", "rankagg", "cld", "cld_pair", "oracle"]
#: the grids' result cache: resumable, outside the repository
CACHE = ROOT.parent / ".cache_cld_table2"


def _pair_table(pairs: pd.DataFrame, fmt: dict | None = None) -> pd.DataFrame:
    """:func:`~ultr_core.evaluation.stats.paired_differences` (nDCG@1) as printed in the study tables."""
    out = pairs.drop(columns="n").assign(mean_diff=pairs.mean_diff.map("{:+.4f}".format),
                                         p=pairs.p.map("{:.3f}".format))
    for c, f in (fmt or {}).items():
        out[c] = out[c].map(f.format)
    return out.rename(columns={"mean_diff": "mean diff nDCG@1", "p": "p (paired t)"})


def grid_methods(base: ExperimentSpec, grid: dict, methods, seeds, jobs) -> pd.DataFrame:
    parts = []
    for model in ("linear", "dnn"):
        ms = [m for m in methods if (m in LINEAR) == (model == "linear")]
        if ms:
            parts.append(run_grid(base.with_value("train.model", model), {**grid, "train.algorithm": ms},
                                  seeds=seeds, n_jobs=jobs))
    return pd.concat(parts, ignore_index=True)


#: the CLD paper's rankers and optimiser (§6): ELU 256-128-64 with dropout 0.5 for Naive, IPS, Oracle
#: and CLD_pair; linear CLD and Heckman_rank; Xavier initialisation, L2 1e-3; lr from the paper's grid
GAMMAS = [0.05, 0.10, 0.15, 0.20, 0.25, 0.30]          # the paper's tuning range for γ
TABLE2_DATA = {"synthetic": ("synthetic:500:24", 20_000), "mq2008": (data_spec("mq2008"), 50_000),
               "yahoo": (data_spec("yahoo_sample"), 50_000)}
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


