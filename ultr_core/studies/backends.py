"""The joblib backends a grid of runs may use (:func:`ultr_core.studies.experiment.run_grid`): ``loky``,
``threading`` and ``sequential`` on this machine; ``dask`` and ``ray`` on a cluster the caller has started."""
from __future__ import annotations

from ultr_core.errors import ConfigError

__all__ = ["check_backend"]


def check_backend(backend: str) -> None:
    """Refuse an unknown joblib backend, or dask / ray when they are missing or not started."""
    if backend not in ("loky", "threading", "sequential", "dask", "ray"):
        raise ConfigError("backend", f"unknown backend {backend!r}")
    if backend == "dask":
        try:
            import distributed
        except ImportError:
            raise ConfigError("backend", "the dask backend needs 'dask[distributed]' installed") from None
        try:
            distributed.get_client()
        except ValueError:
            raise ConfigError("backend", "the dask backend runs on a dask.distributed Client: create one first, "
                                         "e.g. distributed.Client('tcp://scheduler:8786')") from None
    if backend == "ray":
        try:
            from ray.util.joblib import register_ray
            register_ray()
        except ImportError:
            raise ConfigError("backend", "the ray backend needs 'ray' installed") from None
