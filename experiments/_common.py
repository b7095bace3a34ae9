"""Helpers shared by the experiment scripts: Markdown tables and saving results."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ultr_core.app.figures import figure_png

ROOT = Path(__file__).resolve().parents[1]
RES, FIG = ROOT / "docs" / "results", ROOT / "docs" / "figures"


def frame_md(df: pd.DataFrame, index: bool = True) -> str:
    """A DataFrame as a Markdown table (no extra dependency)."""
    d = df.reset_index() if index else df
    lines = ["| " + " | ".join(map(str, d.columns)) + " |", "|" + "---|" * len(d.columns)]
    lines += ["| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in d.itertuples(index=False)]
    return "\n".join(lines)


def table(summary: pd.DataFrame, by: list[str], metrics: list[str]) -> str:
    """Rows of ``stats.summarise`` as 'mean [lo, hi]' cells."""
    lines = ["| " + " | ".join(by + metrics) + " |", "|" + "---|" * (len(by) + len(metrics))]
    for _, r in summary.iterrows():
        vals = [f"{r[m]:.4f} [{r[m + '_lo']:.4f}, {r[m + '_hi']:.4f}]" for m in metrics]
        lines.append("| " + " | ".join(str(r[b]) for b in by) + " | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def save(prefix: str, name: str, df: pd.DataFrame, md: str, figs: dict) -> None:
    """docs/results/<prefix>_<name>.csv, PNG figures in docs/figures/, docs/<prefix>_study_<name>.md."""
    RES.mkdir(parents=True, exist_ok=True)
    FIG.mkdir(parents=True, exist_ok=True)
    drop = [c for c in ("observation", "true_observation", "history") if c in df]
    df.drop(columns=drop).to_csv(RES / f"{prefix}_{name}.csv", index=False)
    for fname, fig in figs.items():
        png = figure_png(fig)
        if png:
            (FIG / fname).write_bytes(png)
            md += f"\n\n![{fname}](figures/{fname})"
    (ROOT / "docs" / f"{prefix}_study_{name}.md").write_text(md + "\n")
    print(md, flush=True)
