"""Studies: experiments as data — a spec (dataset × click model × method × seed) trained and
evaluated, grids of specs with their on-disk result cache, and the Compare page's paper presets.

This is the simulate → train → evaluate path in one call (:func:`run_experiment`) and the
grid → cache path behind the Compare and Heat-maps pages (:func:`run_grid`).

>>> from ultr_core.studies import ExperimentSpec, expand_grid
>>> cells = expand_grid(ExperimentSpec(), {"train.algorithm": ["naive", "dla"]}, seeds=[0, 1])
>>> len(cells), sorted({spec.train.algorithm for _, spec in cells})
(4, ['dla', 'naive'])
"""
from ultr_core.studies.experiment import (
                                          ExperimentSpec,
                                          best_cells,
                                          expand_grid,
                                          run_experiment,
                                          run_grid,
                                          train_jobs,
                                          train_spec,
)
from ultr_core.studies.presets import PRESET_SWEEPS

__all__ = ["ExperimentSpec", "run_experiment", "run_grid", "expand_grid", "best_cells", "train_spec", "train_jobs",
           "PRESET_SWEEPS"]
