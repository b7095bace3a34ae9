"""The identifiability paper's published ``dataset_fully_simulation`` folders read as a user reads them (``ig`` and
``ig-fit`` with no flags), beside this project's generator.  Run through
``experiments/identifiability_study.py --official DIR``."""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from _common import interval_table

from ultr_core.identifiability.repairs import fit_repaired, fit_source
from ultr_core.identifiability.reports import identifiability_report
from ultr_core.logs.ingestion import ingest

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "results"


OFFICIAL_FOLDERS = ("K=1", "K=2", "K=3", "K=4", "K=2_node_intervention")


def official_data_table(root: Path, seeds) -> None:
    """The identifiability paper's published ``dataset_fully_simulation`` folders (Keytoyze/ULTR-
    identifiability; ULTRA, ``train/`` only, never committed here) read as a user reads them —
    ``ig`` with no flags for the components, ``ig-fit`` (DLA to convergence, 10⁶ impressions per
    row, no repair / node intervention) — beside our own generator's data (``paper:K``)."""
    t0, rows, comps = time.time(), [], []
    sources = [(f, str(root / f)) for f in OFFICIAL_FOLDERS if (root / f).is_dir()]
    if not sources:
        raise SystemExit(f"no official folder ({', '.join(OFFICIAL_FOLDERS)}) under {root}")
    for folder, path in sources:
        rep = identifiability_report(ingest(path, name=folder))
        comps.append({"data": folder, "components": rep.n_components,
                      "components (query, doc)": rep.alternative_document.n_components})
    sources += [(f"ours paper:{k}", f"paper:{k}") for k in (1, 2, 3, 4)]
    for label, path in sources:
        repairs = ("none", "intervene") if label in ("K=2", "ours paper:2") else ("none",)
        for seed in seeds:
            table, r, o, data = fit_source(path, seed=seed, name=label)
            for repair in repairs:
                out = fit_repaired(table, r, o, data=data, method="dla", repair=repair, seed=seed)
                rows.append({"data": label, "repair": repair, "seed": seed, "components": out["components"],
                             "components_after": out["components_after"], "mcc": out["mcc"],
                             "ndcg@10": out["ndcg@10"], "iterations": out["iterations"]})
    _write_official(pd.DataFrame(rows), comps, seeds, t0)


def _write_official(df, comps: list, seeds, t0: float) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    df.to_csv(OUT / "identifiability_official_data.csv", index=False)
    comp_md = "\n".join(f"| {c['data']} | {c['components']} | {c['components (query, doc)']} |" for c in comps)
    md = ("# The identifiability paper's own published data, read as a user reads it\n\n"
          "Folders `dataset_fully_simulation/K=1…4` and `K=2_node_intervention` of Keytoyze/ULTR-identifiability "
          "(ULTRA format, `train/` only, one-hot documents shared across queries; not committed here). "
          "Components: `python -m ultr_core ig DIR` with no flags (documents keyed by feature vector, as the "
          "official `identifiability_check.py`; the repository's README gives 1, 2, 3, 4 and 1). Fits: "
          "`python -m ultr_core ig-fit DIR` — DLA's closed-form updates to convergence on 10⁶ impressions per "
          "row (App. C.1; labels of the folder, denominator 31), random initialisation per seed; "
          "`ours paper:K` is this project's generator of the same layout.\n\n"
          "| folder | components (`ig`, no flags) | components with `--document query` |\n|---|---:|---:|\n"
          + comp_md + "\n\n"
          + interval_table(df, ["data", "repair"], ["mcc", "ndcg@10"],
                           ("components before → after", lambda g: f"{g['components'].iloc[0]} → "
                                                                  f"{g['components_after'].iloc[0]}"))
          + f"\n\n{len(seeds)} seeds, mean [90 % t-interval]. Re-run: `python experiments/identifiability_study.py "
            f"--official DIR` with DIR holding the five folders ({time.time() - t0:.0f} s here).\n")
    (ROOT / "docs" / "results" / "identifiability_official_data.md").write_text(md)
    print(md)
