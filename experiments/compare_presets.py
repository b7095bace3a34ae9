"""What the Compare page's paper presets say about their papers at the page's defaults (20,000
sessions, 400 steps, seeds 0–2): each preset's claims (``ultr_core.studies.presets``) checked on
the same runs the page would make, with the verdict the page shows (reproduced / not resolved /
opposite / not checked).  To stay quick, a sweep preset runs only the sweep values its claims are
about (the page runs all; the claims read only these).  Writes docs/results/compare_presets.md and every run it
reads, one row per (preset, sweep value, seed, method), to docs/results/compare_presets_runs.csv: the tests check the
page's verdicts against those rows and re-run seed 0 of each synthetic preset to the rows' digits
(``tests/evaluation/test_claims.py``).

    python experiments/compare_presets.py [--seeds 3] [--preset PREFIX]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from ultr_core.app.tables import claims_table
from ultr_core.evaluation.claims import check_claims
from ultr_core.studies.experiment import run_grid
from ultr_core.studies.presets import PRESET_SWEEPS, comparison_grid

ROOT = Path(__file__).resolve().parents[1]
#: every run the verdicts read (:func:`runs_rows`; :func:`committed_runs` reads it back)
RUNS_CSV = ROOT / "docs" / "results" / "compare_presets_runs.csv"
#: what each run keeps: the metrics a claim may name and the validation score
METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map", "arp", "mcc", "spearman_within_query", "valid_ndcg@10")


def preset_runs(p, seeds: int, sessions: int = 20_000, steps: int = 400, n_jobs: int = 2, cache_dir=None):
    """The runs the Compare page makes for preset ``p`` at its defaults, cut to the claims' sweep values (with
    ``cache_dir``, each finished cell is kept there and read back by a later call that runs the same cell)."""
    values = []
    if p.sweep:
        first = p.sweep.split(",")[0]
        values = [v for v in p.values if any(dict(c.at).get(first) == v or dict(c.worse_at or ()).get(first) == v
                                                for c in p.claims)] or p.values
    base, grid = comparison_grid(p.base, p.methods, sweep=p.sweep, values=values, n_sessions=sessions,
                                 steps=steps)
    return run_grid(base, grid, seeds=list(range(seeds)), n_jobs=n_jobs, cache_dir=cache_dir)


def runs_rows(name: str, p, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of :data:`RUNS_CSV` for preset ``name``'s runs: its sweep value as JSON (a joint sweep's list)."""
    value = runs[p.sweep].map(json.dumps) if p.sweep else ""
    return pd.DataFrame({"preset": name, "sweep_value": value, "seed": runs["seed"], "algorithm": runs["algorithm"],
                         **{m: runs[m] for m in METRICS}})


def committed_runs(name: str, p, path: Path = RUNS_CSV) -> pd.DataFrame:
    """Preset ``name``'s runs as :func:`preset_runs` returns them (the columns the claims read), read back from
    :data:`RUNS_CSV`."""
    rows = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"sweep_value": str})
    rows = rows[rows["preset"] == name].drop(columns="preset").reset_index(drop=True)
    if p.sweep:
        rows[p.sweep] = rows["sweep_value"].map(_sweep_value)
    return rows.drop(columns="sweep_value")


def _sweep_value(text: str):
    value = json.loads(text)
    return tuple(value) if isinstance(value, list) else value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3, help="the page's default is 3")
    ap.add_argument("--preset", default=None, help="only presets whose name starts with this")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "compare_presets.md"))
    a = ap.parse_args()
    t0 = time.time()
    lines = ["# Compare's paper presets: does the run reproduce the paper?", "",
             f"`python experiments/compare_presets.py --seeds {a.seeds}` — each preset at the page's defaults "
             f"(20,000 sessions, 400 steps, seeds 0–{a.seeds - 1}; a sweep runs only the values its claims are "
             "about). A claim is *reproduced* when its whole paired 90 % t-interval over seeds is above the claimed "
             "margin (0: no Compare claim names one), *opposite* when below 0, *not resolved* otherwise — what the "
             "page shows after the same run. Three seeds are "
             "the page's default, not a study: *not resolved* often means \"more seeds\" (the studies in "
             "docs/ use 5). Every run is in [compare_presets_runs.csv](compare_presets_runs.csv). "
             "`tests/evaluation/test_claims.py` (CI) checks every table below against those runs and re-runs seed 0 "
             "of the synthetic presets to the runs' digits.", ""]
    runs_out = []
    for name, p in PRESET_SWEEPS.items():
        if a.preset and not name.startswith(a.preset):
            continue
        lines += [f"## {name}", ""]
        if not p.claims:
            lines += ["Our ablation: the paper makes no claim about it.", ""]
            continue
        t = time.time()
        seeds = p.seeds or a.seeds
        runs = preset_runs(p, seeds)
        runs_out.append(runs_rows(name, p, runs))
        res = check_claims(runs, p.claims, method_col="algorithm")
        tab = claims_table(res)
        lines += ["| " + " | ".join(tab.columns) + " |", "|" + "---|" * len(tab.columns)]
        lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in tab.itertuples(index=False)]
        lines += [
            "",
            f"({time.time() - t:.0f} s{'' if seeds == a.seeds else f', {seeds} seeds: the preset’s default'})",
            "",
        ]
        print(name, res["verdict"].tolist(), flush=True)
    lines[2] = lines[2] + f" Total {time.time() - t0:.0f} s on 2 cores."
    Path(a.out).write_text("\n".join(lines) + "\n")
    if not a.preset:
        pd.concat(runs_out, ignore_index=True).to_csv(RUNS_CSV, index=False, float_format="%.17g")
        print("wrote", RUNS_CSV)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
