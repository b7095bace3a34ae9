"""Readers for the learning-to-rank file formats the papers use.

* SVMlight / LETOR with ``qid:`` (MQ2008, MSLR, Yahoo! in LETOR form):
  ``label qid:Q fid:value … [# comment]``; feature ids are 1-based.  A ``docid = X``
  in the comment (as MQ2008 writes it) becomes the document id.
* SVMlight without ``qid:`` plus a LightGBM-style group file ``<file>.query``
  whose lines give the number of consecutive rows of each query.
* The ULTRA directory format (used by ULTRA, the LBD code and the identifiability
  code): ``settings.json`` (``feature_size``) and per split
  ``<split>/<split>.feature`` (``docid fid:value …``, 0-based feature ids),
  ``<split>/<split>.init_list`` (``qid idx idx …``: rows of the feature file in
  logged order) and ``<split>/<split>.labels`` (``qid y y …``).

Every reader raises :class:`~ultr_core.errors.DataFormatError` naming the file, the
line and the problem.  Nothing is ever unpickled.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ultr_core.data.dataset import LTRDataset, RankingData
from ultr_core.errors import ConfigError, DataFormatError

__all__ = [
    "read_svmlight", "load_svmlight", "load_mq2008_fold", "load_lightgbm_split",
    "load_yahoo_sample", "load_ultra", "save_ultra", "MQ2008_FOLDS", "load_svmlight_upload",
]

#: MQ2008 folds as its readme gives them: fold -> (train parts, valid part, test part)
MQ2008_FOLDS = {
    1: (("S1", "S2", "S3"), "S4", "S5"),
    2: (("S2", "S3", "S4"), "S5", "S1"),
    3: (("S3", "S4", "S5"), "S1", "S2"),
    4: (("S4", "S5", "S1"), "S2", "S3"),
    5: (("S5", "S1", "S2"), "S3", "S4"),
}


#: largest feature id accepted in a LETOR/SVMlight file (public LTR sets use at most ~700)
MAX_FEATURE_ID = 100_000
#: largest graded label accepted (gains 2^y − 1 overflow float32 long before 2^128)
MAX_LABEL = 31
#: largest dense feature matrix a loader builds, in bytes
MAX_MATRIX_BYTES = 4 * 2 ** 30


def _check_matrix(n_rows: int, n_features: int, source) -> None:
    """Refuse a dense feature matrix larger than :data:`MAX_MATRIX_BYTES` before allocating it."""
    need = 4 * int(n_rows) * int(n_features)
    if need > MAX_MATRIX_BYTES:
        raise DataFormatError(source, f"{n_rows:,} documents × {n_features:,} features need {need / 2**30:,.1f} GiB "
                                      f"as a dense matrix; the limit is {MAX_MATRIX_BYTES / 2**30:,.0f} GiB")


def _tok(text, limit: int = 16) -> str:
    """A short, quoted excerpt of file content for an error message (never more than
    ``limit`` characters of it)."""
    text = str(text)
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _read_lines(path) -> list[str]:
    if isinstance(path, tuple):                      # (name, bytes) of an upload: parsed in memory
        name, data = path
        try:
            return data.decode("utf-8").splitlines()
        except UnicodeDecodeError as e:
            raise DataFormatError(name, f"not a UTF-8 text file (byte {e.start})") from None
    if not path.exists():
        raise DataFormatError(path, "file not found")
    if path.is_dir():
        raise DataFormatError(path, "is a directory, expected a file")
    if not path.is_file():
        raise DataFormatError(path, "not a regular file (a device or pipe cannot be read as a dataset)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataFormatError(path, f"not a UTF-8 text file (byte {e.start})") from None
    return text.splitlines()


def _parse_pairs(tokens, path, lineno, index_base):
    cols, vals = [], []
    for tok in tokens:
        fid, sep, val = tok.partition(":")
        if not sep:
            raise DataFormatError(path, f"bad token {_tok(tok)}: expected 'feature:value'", lineno)
        try:
            f = int(fid)
        except ValueError:
            raise DataFormatError(path, f"bad feature id {_tok(fid)} in token {_tok(tok)}", lineno) from None
        try:
            v = float(val)
        except ValueError:
            raise DataFormatError(path, f"non-numeric value {_tok(val)} for feature {f}", lineno) from None
        if not np.isfinite(v):
            raise DataFormatError(path, f"value {_tok(val)} for feature {f} is not finite", lineno)
        if f < index_base:
            raise DataFormatError(path, f"feature id {f} below the first allowed id {index_base}", lineno)
        if f > MAX_FEATURE_ID:
            raise DataFormatError(path, f"feature id {f:,} exceeds the limit of {MAX_FEATURE_ID:,}", lineno)
        cols.append(f - index_base)
        vals.append(v)
    if len(set(cols)) != len(cols):
        seen, dup = set(), None
        for col in cols:
            if col in seen:
                dup = col + index_base
                break
            seen.add(col)
        raise DataFormatError(path, f"feature id {dup} appears twice on the line", lineno)
    return cols, vals


def read_svmlight(path, *, require_qid: bool = True, n_features: int | None = None):
    """Parse an SVMlight file (a path, or ``(name, bytes)`` for an upload); returns
    ``(features, labels, qids|None, doc_ids|None)``."""
    lines = _read_lines(path if isinstance(path, tuple) else Path(path))
    path = path[0] if isinstance(path, tuple) else Path(path)
    labels, qids, docids, rows, cols, vals = [], [], [], [], [], []
    n = 0
    for lineno, raw in enumerate(lines, start=1):
        body, _, comment = raw.partition("#")
        tokens = body.split()
        if not tokens:
            continue
        try:
            label = float(tokens[0])
        except ValueError:
            raise DataFormatError(path, f"label {_tok(tokens[0])} is not a number", lineno) from None
        if not np.isfinite(label) or label < 0 or label > MAX_LABEL or label != int(label):
            raise DataFormatError(path, f"label {_tok(tokens[0])} is not a whole number from 0 to {MAX_LABEL}",
                                  lineno)
        rest = tokens[1:]
        if rest and rest[0].startswith("qid:"):
            try:
                qids.append(int(rest[0][4:]))
            except ValueError:
                raise DataFormatError(path, f"bad query id {_tok(rest[0])}", lineno) from None
            rest = rest[1:]
        elif require_qid:
            raise DataFormatError(path, "missing 'qid:' after the label", lineno)
        elif qids:
            raise DataFormatError(path, "missing 'qid:' (earlier lines have one)", lineno)
        c, v = _parse_pairs(rest, path, lineno, 1)
        rows.extend([n] * len(c))
        cols.extend(c)
        vals.extend(v)
        labels.append(int(label))
        did = None
        if "docid" in comment:
            after = comment.split("docid", 1)[1].lstrip(" =:")
            did = after.split()[0] if after.split() else None
        docids.append(did)
        n += 1
    if n == 0:
        raise DataFormatError(path, "empty file: no data lines")
    width = (max(cols) + 1) if cols else 0
    if n_features is not None:
        if width > n_features:
            raise DataFormatError(path, f"feature id {width} exceeds the expected {n_features} features")
        width = n_features
    if n * width * 4 > MAX_MATRIX_BYTES:
        raise DataFormatError(path, f"{n:,} rows × {width:,} features would need {n * width * 4 / 2**30:.1f} GiB "
                                    f"(limit {MAX_MATRIX_BYTES / 2**30:.0f} GiB)")
    X = np.zeros((n, width), dtype=np.float32)
    X[np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)] = vals
    q = np.asarray(qids, dtype=np.int64) if qids else None
    d = np.asarray(docids, dtype=object) if all(x is not None for x in docids) else None
    return X, np.asarray(labels, dtype=np.int64), q, d


def _check_contiguous(path, q):
    change = np.flatnonzero(np.diff(q)) + 1
    starts = q[np.concatenate([[0], change])]
    uniq, counts = np.unique(starts, return_counts=True)
    if np.any(counts > 1):
        bad = int(uniq[counts > 1][0])
        raise DataFormatError(path, f"rows of query {bad} are not contiguous")


def load_svmlight(path, n_features: int | None = None) -> RankingData:
    """One SVMlight/LETOR file with ``qid:`` as a :class:`RankingData`."""
    X, y, q, d = read_svmlight(path, require_qid=True, n_features=n_features)
    _check_contiguous(path, q)
    return RankingData(X, q, y, d)


def load_svmlight_upload(name: str, data: bytes, *, split=(0.6, 0.2, 0.2), seed: int = 0) -> LTRDataset:
    """An uploaded SVMlight/LETOR file (with ``qid:``) split by query into train/valid/test."""
    X, y, q, d = read_svmlight((name, data), require_qid=True)
    _check_contiguous(name, q)
    full = RankingData(X, q, y, d)
    if full.n_queries < 3:
        raise DataFormatError(name, f"only {full.n_queries} queries: need at least 3 to split into train/valid/test")
    order = np.random.default_rng(seed).permutation(full.n_queries)
    n_va = max(1, int(round(split[1] * full.n_queries)))
    n_te = max(1, int(round(split[2] * full.n_queries)))
    n_tr = full.n_queries - n_va - n_te            # every split keeps at least one query
    parts = (order[:n_tr], order[n_tr:n_tr + n_va], order[n_tr + n_va:])
    return LTRDataset(name, *(full.subset_queries(np.sort(p)) for p in parts))


def load_mq2008_fold(root, fold: int = 1, n_features: int = 46) -> LTRDataset:
    """MQ2008 fold ``fold`` (1–5) from the ``S1.txt``…``S5.txt`` parts, folds per its readme."""
    if fold not in MQ2008_FOLDS:
        raise ConfigError("dataset", f"MQ2008 fold must be 1–5, got {fold}")
    root = Path(root)
    train_parts, valid_part, test_part = MQ2008_FOLDS[fold]
    parts = {p: load_svmlight(root / f"{p}.txt", n_features) for p in ("S1", "S2", "S3", "S4", "S5")
             if p in train_parts or p in (valid_part, test_part)}
    train = _concat([parts[p] for p in train_parts])
    return LTRDataset(f"MQ2008 fold {fold}", train, parts[valid_part], parts[test_part])


def _concat(parts: list[RankingData]) -> RankingData:
    docs = None if any(p.doc_ids is None for p in parts) else np.concatenate([p.doc_ids for p in parts])
    return RankingData(np.concatenate([p.features for p in parts]),
                       np.concatenate([p.qids for p in parts]),
                       np.concatenate([p.labels for p in parts]), docs)


def load_lightgbm_split(path, *, query_path=None, n_features: int | None = None,
                        qid_offset: int = 0) -> RankingData:
    """SVMlight rows plus a LightGBM ``.query`` group file (one group size per line)."""
    path = Path(path)
    query_path = Path(query_path) if query_path else Path(str(path) + ".query")
    X, y, q, _ = read_svmlight(path, require_qid=False, n_features=n_features)
    sizes = []
    for lineno, raw in enumerate(_read_lines(query_path), start=1):
        s = raw.strip()
        if not s:
            continue
        try:
            k = int(s)
        except ValueError:
            raise DataFormatError(query_path, f"group size {s!r} is not an integer", lineno) from None
        if k <= 0:
            raise DataFormatError(query_path, f"group size {k} must be positive", lineno)
        sizes.append(k)
    if not sizes:
        raise DataFormatError(query_path, "empty group file")
    if sum(sizes) != len(y):
        raise DataFormatError(query_path, f"group sizes add up to {sum(sizes)} rows but "
                                          f"{path.name} has {len(y)} rows")
    qids = np.repeat(np.arange(len(sizes), dtype=np.int64) + qid_offset, sizes)
    return RankingData(X, qids, y)


def load_yahoo_sample(root, valid_fraction: float = 0.2, seed: int = 0) -> LTRDataset:
    """The LightGBM Yahoo! LTR sample: ``rank.train`` (+ ``.query``) and ``rank.test``.

    It ships no validation split, so ``valid_fraction`` of the training queries
    (chosen with ``seed``) form one.
    """
    root = Path(root)
    train = load_lightgbm_split(root / "rank.train")
    test = load_lightgbm_split(root / "rank.test", n_features=None, qid_offset=train.n_queries)
    width = max(train.n_features, test.n_features)
    train, test = (_pad(s, width) for s in (train, test))
    rng = np.random.default_rng(seed)
    order = rng.permutation(train.n_queries)
    n_valid = max(1, int(round(valid_fraction * train.n_queries)))
    valid = train.subset_queries(np.sort(order[:n_valid]))
    train = train.subset_queries(np.sort(order[n_valid:]))
    return LTRDataset("Yahoo! LTR sample", train, valid, test)


def _pad(data: RankingData, width: int) -> RankingData:
    if data.n_features == width:
        return data
    X = np.zeros((data.n_rows, width), np.float32)
    X[:, :data.n_features] = data.features
    return data.with_features(X)


# --------------------------------------------------------------------------- ULTRA
def _qid_lists(path, kind: str) -> list:
    """(query id, integers, line number) per line of an ULTRA ``init_list`` or ``labels`` file."""
    out = []
    for lineno, raw in enumerate(_read_lines(path), start=1):
        tokens = raw.split()
        if not tokens:
            continue
        try:
            out.append((tokens[0], [int(t) for t in tokens[1:]], lineno))
        except ValueError:
            bad = next(t for t in tokens[1:] if not t.lstrip("-").isdigit())
            raise DataFormatError(path, f"{kind} {bad!r} is not an integer", lineno) from None
    if not out:
        raise DataFormatError(path, "empty file: no queries")
    return out


def _ultra_split(root: Path, split: str, feature_size: int) -> RankingData:
    base = root / split
    fpath, ipath, lpath = (base / f"{split}.{ext}" for ext in ("feature", "init_list", "labels"))
    dids, rows, cols, vals = [], [], [], []
    for lineno, raw in enumerate(_read_lines(fpath), start=1):
        tokens = raw.split()
        if not tokens:
            continue
        c, v = _parse_pairs(tokens[1:], fpath, lineno, 0)
        if c and max(c) >= feature_size:
            raise DataFormatError(fpath, f"feature id {max(c)} ≥ feature_size {feature_size} "
                                         "from settings.json", lineno)
        rows.extend([len(dids)] * len(c))
        cols.extend(c)
        vals.extend(v)
        dids.append(tokens[0])
    if not dids:
        raise DataFormatError(fpath, "empty file: no documents")
    _check_matrix(len(dids), feature_size, fpath)
    F = np.zeros((len(dids), feature_size), np.float32)
    F[np.asarray(rows, np.int64), np.asarray(cols, np.int64)] = vals

    init = _qid_lists(ipath, "document index")
    labs = _qid_lists(lpath, "label")
    if len(init) != len(labs):
        raise DataFormatError(lpath, f"{len(labs)} queries but {ipath.name} has {len(init)}")
    idx_all, lab_all, q_all = [], [], []
    for qi, ((qid, idx, ln), (qid2, lab, ln2)) in enumerate(zip(init, labs)):
        if qid != qid2:
            raise DataFormatError(lpath, f"query {qid2!r} where {ipath.name} line {ln} has {qid!r}", ln2)
        idx_kept = [i for i in idx if i >= 0]          # ULTRA pads lists with -1
        if len(idx_kept) != len(lab):
            raise DataFormatError(lpath, f"query {qid!r} has {len(lab)} labels but {len(idx_kept)} "
                                         f"documents in {ipath.name}", ln2)
        if idx_kept and max(idx_kept) >= len(dids):
            raise DataFormatError(ipath, f"document index {max(idx_kept)} out of range "
                                         f"({fpath.name} has {len(dids)} documents)", ln)
        if any(v < 0 or v > MAX_LABEL for v in lab):
            bad = next(v for v in lab if v < 0 or v > MAX_LABEL)
            raise DataFormatError(lpath, f"label {bad} is not a whole number from 0 to {MAX_LABEL}", ln2)
        idx_all.extend(idx_kept)
        lab_all.extend(lab)
        q_all.extend([qi] * len(idx_kept))
    idx_all = np.asarray(idx_all, np.int64)
    _check_matrix(len(idx_all), feature_size, ipath)
    return RankingData(F[idx_all], np.asarray(q_all, np.int64), np.asarray(lab_all, np.int64),
                       np.asarray(dids, dtype=object)[idx_all])


def load_ultra(root, name: str | None = None) -> LTRDataset:
    """An ULTRA-format directory with ``settings.json`` and train/valid/test sub-folders."""
    root = Path(root)
    spath = root / "settings.json"
    if not spath.exists():
        raise DataFormatError(spath, "file not found (an ULTRA directory needs settings.json)")
    try:
        settings = json.loads(spath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataFormatError(spath, f"not valid JSON ({e})") from None
    fs = settings.get("feature_size") if isinstance(settings, dict) else None
    if not isinstance(fs, int) or isinstance(fs, bool) or fs <= 0:
        raise DataFormatError(spath, "needs a positive integer 'feature_size'")
    if fs > MAX_FEATURE_ID:
        raise DataFormatError(spath, f"'feature_size' {fs:,} exceeds the limit of {MAX_FEATURE_ID:,} features "
                                     "(the same limit as a LETOR file's feature ids)")
    splits = [_ultra_split(root, s, fs) for s in ("train", "valid", "test")]
    return LTRDataset(name or root.name, *splits)


def save_ultra(dataset: LTRDataset, root) -> None:
    """Write ``dataset`` in the ULTRA directory format (the inverse of :func:`load_ultra`)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "settings.json").write_text(json.dumps({"feature_size": dataset.n_features,
                                                    "max_label_value": dataset.max_label}))
    for name in ("train", "valid", "test"):
        data = dataset.split(name)
        d = root / name
        d.mkdir(exist_ok=True)
        dids = data.doc_ids if data.doc_ids is not None else np.array(
            [f"{name}_{i}" for i in range(data.n_rows)], dtype=object)
        with open(d / f"{name}.feature", "w", encoding="utf-8") as fh:
            for did, row in zip(dids, data.features):
                nz = np.flatnonzero(row)
                fh.write(str(did) + "".join(f" {j}:{row[j]:.6g}" for j in nz) + os.linesep)
        with open(d / f"{name}.init_list", "w", encoding="utf-8") as fi, \
                open(d / f"{name}.labels", "w", encoding="utf-8") as fl:
            for qi in range(data.n_queries):
                s, e = data.offsets[qi], data.offsets[qi + 1]
                qid = data.qids[s]
                fi.write(f"{qid} " + " ".join(map(str, range(s, e))) + "\n")
                fl.write(f"{qid} " + " ".join(map(str, data.labels[s:e])) + "\n")
