"""Datasets by name, from configured data roots — the app never opens a path a user typed.

Roots, in order: ``../shared/data`` beside the repository when it exists, then every folder in
the environment variable ``ULTR_DATA_DIR`` (``os.pathsep``-separated).  A root's direct
sub-folders are offered when they hold a known layout:

=========  ==========================================  ==========================
kind       layout                                      spec for :func:`load_dataset`
=========  ==========================================  ==========================
mq2008     ``S1.txt`` … ``S5.txt`` (LETOR 4.0 folds)    ``mq2008:PATH[:FOLD]``
yahoo      ``rank.train`` + ``rank.train.query``        ``yahoo:PATH``
ultra      ``settings.json`` + ``train/``, ``valid/``,    ``ultra:PATH``
           ``test/``
=========  ==========================================  ==========================

A folder with ``train/`` alone (the identifiability paper's published folders) is not offered here:
simulation and training need all three splits; its identifiability is read by ``python -m ultr_core ig
FOLDER`` or by uploading it zipped on the Upload page.

Errors of a dataset offered by name never show the server's path: :func:`public_error` writes the
folder as the dataset's name.

A dataset's **name** is ``root-folder-name`` (e.g. ``mq2008``, ``yahoo_sample``); a name that
occurs in two roots keeps the first.  The command line keeps taking paths (it runs as the user).

>>> isinstance(available_datasets(), dict)
True
"""
from __future__ import annotations

import os
from pathlib import Path

from ultr_core.errors import ConfigError

__all__ = ["data_roots", "available_datasets", "dataset_spec", "public_error", "BUILTIN"]

#: datasets the library makes itself (always available)
BUILTIN = ("synthetic", "ig")
_REPO = Path(__file__).resolve().parents[2]          # the repository (ultr_core/data/roots.py)


def data_roots() -> list[Path]:
    """The configured data roots that exist (see the module docstring)."""
    roots = [_REPO.parent / "shared" / "data"]
    roots += [Path(p) for p in os.environ.get("ULTR_DATA_DIR", "").split(os.pathsep) if p.strip()]
    out, seen = [], set()
    for r in roots:
        try:
            rr = r.resolve()
        except OSError:
            continue
        if rr.is_dir() and rr not in seen:
            seen.add(rr)
            out.append(rr)
    return out


def _kind(folder: Path) -> str | None:
    if all((folder / f"S{i}.txt").is_file() for i in range(1, 6)):
        return "mq2008"
    if (folder / "rank.train").is_file() and (folder / "rank.train.query").is_file():
        return "yahoo"
    if (folder / "settings.json").is_file() and all((folder / s).is_dir() for s in ("train", "valid", "test")):
        return "ultra"
    return None


def available_datasets() -> dict[str, tuple[str, Path]]:
    """Name → (kind, folder) of every dataset found in the data roots."""
    found: dict[str, tuple[str, Path]] = {}
    for root in data_roots():
        try:
            children = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for child in children:
            kind = _kind(child)
            if kind and child.name not in found:
                found[child.name] = (kind, child)
    return found


def dataset_spec(name: str, fold: int = 1) -> str:
    """The :func:`~ultr_core.data.sources.load_dataset` spec of a dataset offered by name."""
    ds = available_datasets()
    if name not in ds:
        offered = ", ".join(sorted(ds)) or "none (no data root found)"
        raise ConfigError("dataset", f"no dataset named {str(name)[:40]!r} in the data roots; available: {offered}")
    kind, folder = ds[name]
    return f"{kind}:{folder}:{int(fold)}" if kind == "mq2008" else f"{kind}:{folder}"


def public_error(e):
    """``e`` (a :class:`~ultr_core.errors.DataFormatError`) with a data-root folder in its source
    written as the dataset's name (``K=2/valid/valid.feature``), never the server's path."""
    from ultr_core.errors import DataFormatError
    src = str(e.source)
    for name, (_, folder) in available_datasets().items():
        for prefix in (str(folder), str(folder.resolve())):
            if src.startswith(prefix):
                return DataFormatError(name + src[len(prefix):], e.problem, e.line)
    for root in data_roots():
        if src.startswith(str(root)):
            return DataFormatError(src[len(str(root)):].lstrip("/\\") or "dataset", e.problem, e.line)
    return e
