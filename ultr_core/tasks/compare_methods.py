"""Compare learning methods (the Compare page): methods × seeds on one simulated setting, or a sweep over one
parameter; the runs, their mean with a 90 % t-interval across seeds, and whether the run reproduces the claims of
the paper a preset re-creates (each claim paired over the seeds: :func:`~ultr_core.evaluation.claims.check_claims`).

:class:`CompareOptions` builds and checks the grid on creation — every cell, before anything runs;
:func:`compare_methods` runs it and returns a :class:`MethodComparison` that owns its JSON.

>>> o = CompareOptions(methods=("naive", "dla"), sweep="click.eta", values=("0.5", "1"), seeds=2, steps=100)
>>> o.grid[1]
{'click.eta': [0.5, 1.0], 'train.algorithm': ['naive', 'dla']}
>>> CompareOptions(sweep="click.eta", values=("fast",))
Traceback (most recent call last):
...
ultr_core.errors.ConfigError: values: 'fast' is not a number
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ultr_core.errors import ConfigError

__all__ = ["CompareOptions", "MethodComparison", "compare_methods", "compare_methods_job", "METRICS"]

#: the test metrics a comparison summarises
METRICS = ("ndcg@1", "ndcg@3", "ndcg@10", "map")


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """What to compare (the Compare page's sidebar; errors name its field).  Checked on creation: the grid is built
    and every cell checked (:func:`~ultr_core.studies.experiment.check_cells`) before anything runs."""

    base: dict = field(default_factory=dict)       #: a preset's changes to the default spec
    methods: tuple = ("naive", "dla", "ips")        #: algorithm keys
    sweep: str | None = None                        #: the swept parameter (a spec path), or None
    values: tuple = ()                              #: its values, as typed
    seeds: int = 3
    sessions: int = 20_000                          #: simulated sessions per run
    steps: int = 400                                #: training steps per run
    max_sessions: int | None = None                 #: the largest session count a sweep may ask for (the app's)
    claims: tuple = ()                              #: the preset's paper claims (:class:`~.claims.Claim`)

    def __post_init__(self):
        from ultr_core.studies.experiment import check_cells, expand_grid
        from ultr_core.studies.presets import comparison_grid
        if not self.methods:
            raise ConfigError("methods", "choose at least one method")
        if not 1 <= self.seeds <= 100:
            raise ConfigError("seeds", f"must be 1 to 100, got {self.seeds}")
        try:
            grid = comparison_grid(self.base, list(self.methods), sweep=self.sweep,
                                   values=[v for v in self.values if str(v).strip()], n_sessions=self.sessions,
                                   steps=self.steps, max_sessions=self.max_sessions)
        except ValueError as e:
            if isinstance(e, ConfigError):
                raise
            raise ConfigError("values", _value_error(self.values, e)) from None
        check_cells(expand_grid(*grid, [0]))
        object.__setattr__(self, "_grid", grid)

    @property
    def grid(self) -> tuple:
        """(base :class:`~ultr_core.studies.experiment.ExperimentSpec`, grid) as the runs take them."""
        return self._grid

    def key(self) -> tuple:
        """What identifies this comparison's runs (the app's pool shares identical ones)."""
        base, grid = self.grid
        return ("grid", repr(base), repr(grid), self.seeds)


def _value_error(values, error: ValueError) -> str:
    """The first value that is not a number, named; else the error's own words."""
    for v in values:
        try:
            float(v)
        except ValueError:
            return f"{str(v).strip()[:40]!r} is not a number"
    return str(error)


@dataclass(frozen=True)
class MethodComparison:
    """The result of :func:`compare_methods`: one row per cell and seed (``runs``: its grid values, seed and test
    metrics) and the options it ran."""

    runs: object                                    #: pandas.DataFrame
    options: CompareOptions

    def summary(self):
        """Mean and 90 % t-interval of each metric over the seeds, per method (and swept value)."""
        from ultr_core.evaluation.stats import summarise
        by = [self.options.sweep, "algorithm"] if self.options.sweep else "algorithm"
        return summarise(self.runs, by, list(METRICS))

    def interval_note(self) -> str:
        """What the summary's intervals are: a 90 % t-interval over the seeds, or none with one seed (a t-interval
        needs two: one seed gives the mean alone).

        >>> import pandas as pd
        >>> MethodComparison(pd.DataFrame({"seed": [0, 0]}), CompareOptions()).interval_note()
        'one seed: no interval'
        >>> MethodComparison(pd.DataFrame({"seed": [0, 1, 2]}), CompareOptions()).interval_note()
        '90 % t-interval, 3 seeds'
        """
        n = int(self.runs["seed"].nunique())
        return "one seed: no interval" if n < 2 else f"90 % t-interval, {n} seeds"

    def verdicts(self):
        """Each of the preset's claims checked on these runs (empty without claims)."""
        import pandas as pd

        from ultr_core.evaluation.claims import check_claims
        if not self.options.claims:
            return pd.DataFrame()
        return check_claims(self.runs, self.options.claims, method_col="algorithm")

    def to_json(self) -> str:
        from ultr_core.logs.outputs import json_text
        return json_text({"summary": self.summary().to_dict("records"), "claims": self.verdicts().to_dict("records"),
                          "runs": self.runs.drop(columns=["observation", "true_observation"],
                                                 errors="ignore").to_dict("records")})


def compare_methods(options: CompareOptions | None = None, *, report=None, stop=None, n_jobs: int = 1,
                    cache_dir=None) -> MethodComparison:
    """Run the comparison (:func:`~ultr_core.studies.experiment.grid_job`: ``report`` receives progress and every
    finished cell, ``stop`` ends it early, finished cells are kept in ``cache_dir``)."""
    from ultr_core.studies.experiment import grid_job
    o = options or CompareOptions()
    base, grid = o.grid
    runs = grid_job(base, grid, list(range(o.seeds)), report=report, stop=stop, n_jobs=n_jobs, cache_dir=cache_dir)
    return MethodComparison(runs, o)


def compare_methods_job(options: CompareOptions, *, report=None, stop=None, n_jobs: int = 1, cache_dir=None):
    """:func:`compare_methods` as a job of the app's pool: the runs' table (the page rebuilds the result from it
    and its options)."""
    return compare_methods(options, report=report, stop=stop, n_jobs=n_jobs, cache_dir=cache_dir).runs
