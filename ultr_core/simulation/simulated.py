"""A simulated click log from a dataset spec in one call (:func:`simulate_log`): the dataset, a
logging ranker and the click model.
"""
from __future__ import annotations

from ultr_core.data.sources import load_dataset

__all__ = ["simulate_log"]


def simulate_log(spec: str, config=None, n_sessions: int = 20_000, seed: int = 0, data_seed: int = 0):
    """Load ``spec`` and simulate a training-split click log: returns (dataset, simulator, log).
    Fully synthetic ``ig:K`` data keeps its given list order (it has no features to rank by)."""
    from dataclasses import replace

    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.simulator import ClickSimulator
    ds = load_dataset(spec, data_seed)
    cfg = config or ClickModelConfig()
    if str(spec).startswith("ig") and cfg.logging != "given":
        cfg = replace(cfg, logging="given")
    sim = ClickSimulator(cfg, seed=seed).fit(ds)
    return ds, sim, sim.simulate(ds.train, n_sessions, seed=seed)
