"""Datasets named by a spec string — ``synthetic[:n_queries[:list_size]]``, ``ig:K``,
``mq2008:<folder>[:fold]``, ``yahoo:<folder>``, ``ultra:<folder>``, ``letor:<file>``, or the bare name
of a dataset in the data roots (``yahoo_sample``, ``mq2008`` — fold 1; :mod:`ultr_core.data.roots`) — loaded with
errors that name what is wrong and never a server path (:func:`load_dataset`).
"""
from __future__ import annotations

from ultr_core.data.dataset import LTRDataset
from ultr_core.errors import ConfigError

__all__ = ["load_dataset"]


def load_dataset(spec: str, seed: int = 0) -> LTRDataset:
    """Build or read the dataset a spec string names (see the module table).  A file problem in a
    data-root dataset names the dataset, not the server's folder (:func:`~ultr_core.data.roots.public_error`)."""
    from ultr_core.data.roots import public_error
    from ultr_core.errors import DataFormatError
    try:
        return _load(spec, seed)
    except DataFormatError as e:
        raise public_error(e) from None


def _load(spec: str, seed: int = 0) -> LTRDataset:
    from ultr_core.data import loaders, synthetic
    from ultr_core.data.roots import available_datasets, dataset_spec
    if ":" not in str(spec) and str(spec).strip() in available_datasets():
        return _load(dataset_spec(str(spec).strip()), seed)      # a data-root name (``yahoo_sample``, ``mq2008``)
    kind, _, rest = str(spec).partition(":")
    kind = kind.strip().lower()
    if kind == "synthetic":
        n_txt, _, l_txt = rest.partition(":")
        try:
            n = int(n_txt) if n_txt else 500
        except ValueError:
            raise ConfigError("dataset", f"synthetic:N needs a whole number of queries, got {n_txt[:20]!r}") from None
        try:
            size = int(l_txt) if l_txt else 10
        except ValueError:
            raise ConfigError("dataset", f"synthetic:N:L needs a whole number of candidates per query, got "
                                         f"{l_txt[:20]!r}") from None
        if not 10 <= n <= 100_000:
            raise ConfigError("dataset", f"synthetic:N needs 10 to 100,000 queries, got {n:,}")
        if not 2 <= size <= 500 or n * size > 5_000_000:
            raise ConfigError("dataset", f"synthetic:N:L needs 2 to 500 candidates per query and N·L ≤ 5,000,000, "
                                         f"got L = {size:,}")
        return synthetic.make_synthetic_ltr(n_queries=n, list_size=size, seed=seed)
    if kind == "ig":
        try:
            k = int(rest or 1)
        except ValueError:
            raise ConfigError("dataset", f"ig:K needs an integer K, got {rest[:20]!r}") from None
        if not 1 <= k <= 10:
            raise ConfigError("dataset", f"ig:K needs K from 1 to 10, got {k}")
        d = synthetic.make_identifiability_data(n_components=k, seed=seed)
        return LTRDataset(f"fully synthetic, K={k}", d, d, d)
    if kind == "mq2008":
        path, _, fold = rest.rpartition(":") if rest.rsplit(":", 1)[-1].isdigit() else (rest, "", "1")
        if not path:
            raise ConfigError("dataset", "mq2008 needs a folder: mq2008:PATH[:FOLD]")
        return loaders.load_mq2008_fold(path, int(fold))
    if kind == "yahoo":
        if not rest:
            raise ConfigError("dataset", "yahoo needs a folder: yahoo:PATH")
        return loaders.load_yahoo_sample(rest, seed=seed)
    if kind == "ultra":
        if not rest:
            raise ConfigError("dataset", "ultra needs a folder: ultra:PATH")
        return loaders.load_ultra(rest)
    raise ConfigError("dataset", f"unknown dataset {str(spec)[:40]!r}; use synthetic, ig:K, mq2008:PATH, "
                                 "yahoo:PATH, ultra:PATH or a data-root name ("
                                 + (", ".join(sorted(available_datasets())) or "none found") + ")")
