"""Helpers shared by the experiment scripts: the one Markdown table writer (:func:`frame_md`) and the cell formats
built on it, the data sets by name (the data roots of :mod:`ultr_core.data.roots`), and saving results."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ultr_core.app.figures import figure_png

ROOT = Path(__file__).resolve().parents[1]
RES, FIG = ROOT / "docs" / "results", ROOT / "docs" / "figures"


def data_spec(name: str) -> str:
    """The load_dataset spec ``KIND:FOLDER`` of a data set in the data roots (``mq2008`` — fold 1 —,
    ``yahoo_sample``), never a typed path; the same string the committed results were run with (it is part of
    their cache keys)."""
    from ultr_core.data.roots import available_datasets
    kind, folder = available_datasets()[name] if name in available_datasets() else (None, data_folder(name))
    return f"{kind}:{folder}"


def data_folder(name: str) -> Path:
    """The folder of a data set in the data roots."""
    from ultr_core.data.roots import available_datasets, dataset_spec
    dataset_spec(name)                        # an unknown name: the error that lists what is offered
    return available_datasets()[name][1]


def frame_md(df: pd.DataFrame, index: bool = True, align: str | None = None) -> str:
    """A DataFrame as a Markdown table (no extra dependency): the one table writer of the experiments.
    ``align``: one character per column, "l" (``---``) or "r" (``---:``)."""
    d = df.reset_index() if index else df
    marks = ["---:" if a == "r" else "---" for a in (align or "l" * len(d.columns))]
    lines = ["| " + " | ".join(map(str, d.columns)) + " |", "|" + "".join(m + "|" for m in marks)]
    lines += ["| " + " | ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in d.itertuples(index=False)]
    return "\n".join(lines)


def table(summary: pd.DataFrame, by: list[str], metrics: list[str]) -> str:
    """Rows of ``stats.summarise`` as 'mean [lo, hi]' cells ('—' where a group has no value: a metric that is not
    defined for it)."""
    def cell(r, m):
        return "—" if pd.isna(r[m]) else f"{r[m]:.4f} [{r[m + '_lo']:.4f}, {r[m + '_hi']:.4f}]"
    rows = [[*(str(r[b]) for b in by), *(cell(r, m) for m in metrics)] for _, r in summary.iterrows()]
    return frame_md(pd.DataFrame(rows, columns=list(by) + list(metrics)), index=False)


def mean_std_table(df: pd.DataFrame, by, cols) -> str:
    """'mean ± std' over the rows of each group of ``by``."""
    g = df.groupby(by, sort=False)[cols].agg(["mean", "std"])
    keys = [by] if isinstance(by, str) else list(by)
    rows = [[*map(str, key if isinstance(key, tuple) else (key,)),
             *[f"{row[(c, 'mean')]:.3f} ± {row[(c, 'std')]:.3f}" for c in cols]] for key, row in g.iterrows()]
    return frame_md(pd.DataFrame(rows, columns=keys + list(cols)), index=False)


def interval_table(df: pd.DataFrame, by: list, metrics: list, last: tuple) -> str:
    """Mean [90 % t-interval] per group of ``by`` (click MSE in scientific notation) with a last column
    ``last`` = (title, function of the group's rows → text)."""
    import numpy as np

    from ultr_core.evaluation.stats import summarise
    summ = summarise(df, by, metrics)
    rows = []
    for _, row in summ.iterrows():
        g = df[np.logical_and.reduce([df[c] == row[c] for c in by])]
        rows.append([*(str(row[c]) for c in by),
                     *("—" if pd.isna(row[m]) else f"{row[m]:.2e}" if m == "click_mse"
                       else f"{row[m]:.4f} [{row[m + '_lo']:.4f}, {row[m + '_hi']:.4f}]" for m in metrics),
                     last[1](g)])
    return frame_md(pd.DataFrame(rows, columns=by + metrics + [last[0]]), index=False)


def save(prefix: str, name: str, df: pd.DataFrame, md: str, figs: dict) -> None:
    """docs/results/<prefix>_<name>.csv, PNG figures in docs/figures/, docs/results/<prefix>_study_<name>.md."""
    RES.mkdir(parents=True, exist_ok=True)
    FIG.mkdir(parents=True, exist_ok=True)
    drop = [c for c in ("observation", "true_observation", "history") if c in df]
    df.drop(columns=drop).to_csv(RES / f"{prefix}_{name}.csv", index=False)
    for fname, fig in figs.items():
        png = figure_png(fig)
        if png:
            (FIG / fname).write_bytes(png)
            md += f"\n\n![{fname}](../figures/{fname})"
    (ROOT / "docs" / "results" / f"{prefix}_study_{name}.md").write_text(md + "\n")
    print(md, flush=True)
