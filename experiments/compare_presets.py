"""What the Compare page's paper presets say about their papers at the page's defaults (20,000
sessions, 400 steps, seeds 0–2): each preset's claims (``ultr_core.studies.presets``) checked on
the same runs the page would make, with the verdict the page shows (reproduced / not resolved /
opposite / not checked).  To stay quick, a sweep preset runs only the sweep values its claims are
about (the page runs all; the claims read only these).  Writes docs/results/compare_presets.md.

    python experiments/compare_presets.py [--seeds 3] [--preset PREFIX]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from ultr_core.app.tables import claims_table
from ultr_core.evaluation.claims import check_claims
from ultr_core.studies.experiment import run_grid
from ultr_core.studies.presets import PRESET_SWEEPS, comparison_grid

ROOT = Path(__file__).resolve().parents[1]


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
             "docs/ use 5).", ""]
    for name, p in PRESET_SWEEPS.items():
        if a.preset and not name.startswith(a.preset):
            continue
        lines += [f"## {name}", ""]
        if not p.claims:
            lines += ["Our ablation: the paper makes no claim about it.", ""]
            continue
        t = time.time()
        seeds = p.seeds or a.seeds
        res = check_claims(preset_runs(p, seeds), p.claims, method_col="algorithm")
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
    print("wrote", a.out)


if __name__ == "__main__":
    main()
