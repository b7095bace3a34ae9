"""Studies: experiments as data — a spec (dataset × click model × method × seed) trained and
evaluated, grids of specs with their on-disk result cache, and the Compare page's paper presets.

This is the simulate → train → evaluate path in one call (:func:`run_experiment`) and the
grid → cache path behind the Compare and Heat-maps pages (:func:`run_grid`); :mod:`.validation` picks
cells on validation (and sets the paper's Table 3 cell beside them), :mod:`.presets` holds the Compare
page's paper settings with the claims the paper makes about them.

>>> from ultr_core.studies import ExperimentSpec, expand_grid
>>> cells = expand_grid(ExperimentSpec(), {"train.algorithm": ["naive", "dla"]}, seeds=[0, 1])
>>> len(cells), sorted({spec.train.algorithm for _, spec in cells})
(4, ['dla', 'naive'])
"""
from ultr_core._lazy import lazy

# imported on first use (ultr_core._lazy): 'rankers --help' reads its choices without pandas
__getattr__, __dir__ = lazy(__name__, {
    **{n: "ultr_core.studies.experiment" for n in ("ExperimentSpec", "expand_grid", "run_experiment", "run_grid",
                                                   "train_jobs", "train_spec")},
    "PRESET_SWEEPS": "ultr_core.studies.presets",
    **{n: "ultr_core.studies.validation" for n in ("best_cells", "table3_agreement", "tuned_per_seed")},
})

__all__ = ["ExperimentSpec", "run_experiment", "run_grid", "expand_grid", "best_cells", "table3_agreement",
           "tuned_per_seed", "train_spec", "train_jobs", "PRESET_SWEEPS"]
