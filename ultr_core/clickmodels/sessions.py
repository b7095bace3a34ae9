"""Sessions as click models read them: one row per search session — its query, the (query, document) pair shown
at each rank and the click vector — compressed to distinct patterns with a count, so that every fit and every
evaluation is a handful of vectorised passes over patterns, never a Python loop over sessions.

>>> import pandas as pd
>>> f = pd.DataFrame({"session_id": [0, 0, 1, 1, 2, 2], "query_id": [0, 0, 0, 0, 1, 1],
...                   "doc_id": [5, 6, 5, 6, 5, 7], "position": [1, 2] * 3, "click": [1, 0, 1, 0, 0, 1]})
>>> s = SessionArrays.from_frame(f, "toy")
>>> s.n_sessions, s.depth, s.pairs.tolist()
(3, 2, [[0, 1], [0, 1], [2, 3]])
>>> t = s.compress()
>>> t.weight.tolist(), t.clicks.astype(int).tolist()
([2.0, 1.0], [[1, 0], [0, 1]])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ultr_core.errors import ConfigError, DataFormatError, MissingColumnError

if TYPE_CHECKING:                 # pandas is imported where a frame is read: the click-model table needs none
    import pandas as pd

__all__ = ["SessionArrays", "SessionTable", "MAX_DEPTH", "split_sessions", "pair_mean", "PYCLICK_PRIOR", "PROPENSITY",
           "check_propensity"]

#: ranks a click model describes (PyClick's RANK_MAX is 10; the out-of-core reader codes a session's ranks in one
#: 64-bit mask): longer result lists are refused, not cut
MAX_DEPTH = 50
#: PyClick's prior of every per-pair probability: one success in two trials
PYCLICK_PRIOR = (1.0, 2.0)
#: patterns per slice a fit or a score reads at a time (:meth:`SessionTable.chunks`): about 100 MB of autograd state
#: for 10 ranks in a gradient fit
CHUNK_ROWS = 100_000


@dataclass(frozen=True)
class SessionArrays:
    """Sessions in file order: ``query`` (S,), ``pairs`` (S, D) codes of the (query, document) pairs shown at each
    rank, ``clicks`` (S, D) bool; ``pair_query`` maps a pair code to its query code and ``pair_keys`` to the
    file's (query, document) ids; ``shown`` (S, D) which ranks a session shows (None: all D — result lists of
    varying length are padded at the end, the padding cells pair 0 and unclicked); ``propensity`` (S, D) the
    logging policy's probability of showing the cell's document at its rank in a session of its query, when the log
    carries it (a ``propensity`` column, :data:`PROPENSITY`; NaN in the padding)."""

    query: np.ndarray
    pairs: np.ndarray
    clicks: np.ndarray
    pair_query: np.ndarray
    pair_keys: pd.DataFrame
    notes: tuple = ()          # what the reader repaired (ignored or repeated clicks)
    shown: np.ndarray | None = None
    propensity: np.ndarray | None = None

    @property
    def n_sessions(self) -> int:
        return len(self.query)

    @property
    def depth(self) -> int:
        return self.pairs.shape[1]

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "log") -> "SessionArrays":
        """From a click table (session_id, query_id, doc_id, position, click; ``shown`` rows only when present):
        every session must show ranks 1 … D, the same D for all (at most :data:`MAX_DEPTH`)."""
        import pandas as pd
        check_session_columns(frame.columns, name)
        if "shown" in frame:
            frame = frame[frame["shown"].astype(bool)]
        f = frame.sort_values(["session_id", "position"], kind="stable")
        key = ["query_id", "doc_id"]
        pair, keys = pd.factorize(pd.MultiIndex.from_frame(f[key]), sort=True)
        prop = pd.to_numeric(f[PROPENSITY], errors="coerce").to_numpy(float) if PROPENSITY in f else None
        return cls.from_rows(f["session_id"].to_numpy(), pair, f["position"].to_numpy(), click=f["click"].to_numpy(),
                             pair_keys=pd.DataFrame(list(keys), columns=key), name=name, propensity=prop)

    @classmethod
    def from_rows(cls, session, pair, position, *, click, pair_keys: pd.DataFrame, name: str,
                  propensity=None) -> "SessionArrays":
        """From rows ordered by (session id, rank): session ids, pair codes (rows of ``pair_keys``), ranks,
        0/1 clicks (and the logging policy's propensities, checked by :func:`check_propensity`); every session must
        show ranks 1 … n once each, n ≤ :data:`MAX_DEPTH` (lists of varying n are padded to the longest)."""
        import pandas as pd
        if len(pair) == 0:
            raise DataFormatError(name, "the log has no shown rows")
        session = np.asarray(session)
        codes = np.cumsum(np.r_[True, session[1:] != session[:-1]]) - 1   # session ids number sessions in file order
        sizes = _check_lists(codes, np.asarray(position), name)
        depth = int(sizes.max())
        pair_query = pd.factorize(pair_keys["query_id"], sort=True)[0]
        rank = np.asarray(position, np.int64) - 1
        pairs = np.zeros((len(sizes), depth), np.int64)
        clicks = np.zeros((len(sizes), depth), bool)
        pairs[codes, rank], clicks[codes, rank] = pair, np.asarray(click).astype(bool)
        shown = None if (sizes == depth).all() else np.arange(depth)[None, :] < sizes[:, None]
        prop = None
        if propensity is not None:
            prop = np.full((len(sizes), depth), np.nan)
            prop[codes, rank] = check_propensity(np.asarray(propensity, float), name)
        return cls(pair_query[pairs[:, 0]], pairs, clicks, pair_query, pair_keys, shown=shown, propensity=prop)

    @property
    def mask(self) -> np.ndarray:
        return np.ones(self.pairs.shape, bool) if self.shown is None else self.shown

    def subset(self, rows) -> "SessionArrays":
        return SessionArrays(self.query[rows], self.pairs[rows], self.clicks[rows], self.pair_query, self.pair_keys,
                             self.notes, None if self.shown is None else self.shown[rows],
                             None if self.propensity is None else self.propensity[rows])

    def compress(self) -> "SessionTable":
        """Distinct (pairs, clicks, shown ranks) patterns with their counts."""
        parts = [self.pairs, self.clicks.astype(self.pairs.dtype)] + ([] if self.shown is None else [
            self.shown.astype(self.pairs.dtype)])
        uniq, inverse = np.unique(np.concatenate(parts, axis=1), axis=0, return_inverse=True)
        weight = np.bincount(inverse.ravel(), minlength=len(uniq)).astype(np.float64)
        d = self.depth
        shown = None if self.shown is None else uniq[:, 2 * d:].astype(bool)
        return SessionTable(uniq[:, :d], uniq[:, d:2 * d].astype(bool), weight, self.n_pairs, self.n_sessions,
                            shown=shown)


@dataclass(frozen=True)
class SessionTable:
    """Distinct session patterns: ``pairs`` (P, D), ``clicks`` (P, D), ``weight`` (P,) sessions per pattern;
    ``n_pairs`` sizes the attractiveness arrays (every pair of the log, seen in training or not)."""

    pairs: np.ndarray
    clicks: np.ndarray
    weight: np.ndarray
    n_pairs: int
    n_sessions: int
    #: the attractiveness prior of every fit on it: (successes, trials), numbers or one per pair
    #: (:mod:`~ultr_core.clickmodels.prior`); PyClick's one success in two trials unless learned
    attr_prior: tuple = PYCLICK_PRIOR
    #: (P, D) the ranks each pattern shows (None: all; lists of varying length are padded at the end)
    shown: np.ndarray | None = None

    @property
    def depth(self) -> int:
        return self.pairs.shape[1]

    @property
    def mask(self) -> np.ndarray:
        """(P, D) bool: the cells a session shows — every count, fit and score runs over these alone."""
        return np.ones(self.pairs.shape, bool) if self.shown is None else self.shown

    @property
    def total_weight(self) -> float:
        return float(self.weight.sum())

    def chunks(self, rows: int | None = None):
        """The table in slices of at most ``rows`` patterns (default :data:`CHUNK_ROWS`) — what every fit and score
        iterates, so that a :class:`~ultr_core.clickmodels.patternfile.PatternFile` too large for memory is read the
        same way."""
        step = rows or CHUNK_ROWS
        if len(self.weight) <= step:
            yield self
            return
        for lo in range(0, len(self.weight), step):
            cut = slice(lo, lo + step)
            yield SessionTable(self.pairs[cut], self.clicks[cut], self.weight[cut], self.n_pairs, self.n_sessions,
                               self.attr_prior, None if self.shown is None else self.shown[cut])

    def per_pair(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per pair: (impressions, clicks, summed ranks) over the shown cells, session-weighted."""
        return per_pair(self)

    def cells(self, previous_click: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The shown (pair, rank) cells with impressions: (pair, rank, impressions, clicks), session-weighted — all a
        position-based model's likelihood reads; ``previous_click``: the rank index is rank·D + the rank of the last
        click above (D − 1 without one), the cells of the user browsing model."""
        return cell_sums(self, previous_click)


def per_pair(t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of a table of patterns (any with ``chunks``): (impressions, clicks, summed ranks) over the shown
    cells, session-weighted."""
    out = np.zeros((3, t.n_pairs))
    for c in t.chunks():
        w = (c.weight[:, None] * c.mask).ravel()
        ranks = np.broadcast_to(np.arange(1, c.depth + 1)[None, :], c.pairs.shape).ravel()
        flat = c.pairs.ravel()
        for i, v in enumerate((w, w * c.clicks.ravel(), w * ranks)):
            out[i] += np.bincount(flat, v, t.n_pairs)
    return out[0], out[1], out[2]


#: ranges of the cell key that :func:`cell_sums` merges apart (a merge's transient memory is one range's)
CELL_PARTS = 16


def previous_click(clicks: np.ndarray) -> np.ndarray:
    """(P, D): the rank of the last click above each rank, D − 1 when there is none (PyClick's UBM)."""
    d = clicks.shape[1]
    ranks = np.where(clicks, np.arange(d)[None, :], -1)
    before = np.maximum.accumulate(np.concatenate([np.full((len(clicks), 1), -1), ranks[:, :-1]], axis=1), axis=1)
    return np.where(before < 0, d - 1, before)


def cell_sums(t, previous: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pair, rank index, impressions, clicks) of the shown cells of ``t`` (any table with ``chunks``), summed over
    its chunks and sorted by (pair, rank index).  Each chunk's distinct cells are summed at once and kept in
    :data:`CELL_PARTS` ranges of the cell key: a cell the range already holds is added where it lies (a binary
    search), a new one waits in the range's parts until they reach half of it and are merged in — memory follows
    the distinct cells, not the patterns, and a merge's sort and copies hold one range at a time (a merge of all
    cells at once took about 95 bytes per cell for cells that keep 24; re-sorting every part took a 1 B-row log's
    UBM cells to 4.2 GB; issue #62).  The sums are of pattern counts (whole numbers), so the order of adding does not
    change a bit.  Pairs are int32 and rank indices int16 where they fit, and sums of whole numbers below 2³² are
    uint32 (float64 otherwise): 14 bytes a cell, not 32; every reader computes in float64, so the fits do not
    change a bit either."""
    d = t.depth
    width = d * d if previous else d
    step = -(-max(int(t.n_pairs) * width, 1) // CELL_PARTS)
    code = np.int32 if int(t.n_pairs) * width < 2**31 else np.int64
    empty = (np.zeros(0, code), np.zeros(0), np.zeros(0))
    merged, parts = [empty] * CELL_PARTS, [[] for _ in range(CELL_PARTS)]
    for c in t.chunks():
        w = (c.weight[:, None] * c.mask).ravel()
        index = np.arange(d)[None, :] * (d if previous else 1) + (previous_click(c.clicks) if previous else 0)
        flat = (c.pairs.astype(np.int64) * width + index).ravel()
        keep = w > 0
        key, n, k = _summed(flat[keep].astype(code), w[keep], (w * c.clicks.ravel())[keep])
        cuts = [0, *np.searchsorted(key, np.arange(1, CELL_PARTS) * step), len(key)]
        for i in range(CELL_PARTS):
            if cuts[i + 1] > cuts[i]:
                merged[i], new = _absorb(merged[i], *(x[cuts[i]:cuts[i + 1]] for x in (key, n, k)))
                if len(new[0]):
                    parts[i].append(new)
            if sum(len(x[0]) for x in parts[i]) > max(len(merged[i][0]) // 2, 10 * CHUNK_ROWS // CELL_PARTS):
                merged[i], parts[i] = _merge([merged[i], *parts[i]]), []
                if len(merged[i][0]) > 1_000_000:
                    release_free_memory()
    for i in range(CELL_PARTS):
        merged[i], parts[i] = _merge([merged[i], *parts[i]]), []
        release_free_memory()
    total = sum(len(m[0]) for m in merged)
    count = np.result_type(*(m[1] for m in merged), *(m[2] for m in merged))
    pair = np.empty(total, np.int32 if t.n_pairs < 2**31 else np.int64)
    rank = np.empty(total, np.int16 if width < 2**15 else np.int64)
    n, k = np.empty(total, count), np.empty(total, count)
    at = 0
    for i in range(CELL_PARTS):                 # ranges in key order: the result is sorted as one merge sorted it
        key, ni, ki = merged[i]
        merged[i] = empty
        cut = slice(at, at + len(key))
        pair[cut], rank[cut], n[cut], k[cut] = key // width, key % width, ni, ki
        at += len(key)
        del key, ni, ki
        release_free_memory()            # each range's pages go back as the result fills: one copy at a time
    return pair, rank, n, k


_TRIM = []


def release_free_memory() -> None:
    """Give the allocator's free pages back to the system (glibc's ``malloc_trim``; elsewhere nothing).  Arrays of
    up to 32 MB come from glibc's heap, which keeps the pages of freed ones: at 1 B rows the cell sums' freed ranges
    and merges kept the process at 4.7 GB while its arrays held 3 GB (issue #62)."""
    if not _TRIM:
        import ctypes
        try:
            _TRIM.append(ctypes.CDLL(None).malloc_trim)
        except (OSError, AttributeError):
            _TRIM.append(None)
    if _TRIM[0] is not None:
        _TRIM[0](0)


def _summed(key, n, k):
    cell, inverse = np.unique(key, return_inverse=True)
    return cell, _count(np.bincount(inverse, n, len(cell))), _count(np.bincount(inverse, k, len(cell)))


def _absorb(merged, key, n, k):
    """(``merged`` with the cells of the sorted, distinct ``key`` it already holds added in place, the other cells)."""
    mk, mn, mc = merged
    if not len(mk):
        return merged, (key, n, k)
    at = np.minimum(np.searchsorted(mk, key), len(mk) - 1)
    hit = mk[at] == key
    if hit.any():
        where = at[hit]
        sums = [np.asarray(m[where], np.float64) + x[hit] for m, x in ((mn, n), (mc, k))]
        mn, mc = (m.astype(np.float64) if m.dtype != np.float64 and _count(v).dtype == np.float64 else m
                  for m, v in zip((mn, mc), sums))
        mn[where], mc[where] = sums
        merged = (mk, mn, mc)
    miss = ~hit
    return merged, (key[miss], n[miss], k[miss])


def _count(x: np.ndarray) -> np.ndarray:
    """Sums of whole numbers below 2³² as uint32 (exact, and half the bytes); any other sums as they are."""
    if len(x) and x.max() < 2**32 and not np.any(np.modf(x)[0]):
        return x.astype(np.uint32)
    return x


def _merge(parts):
    return _summed(*(np.concatenate([p[i] for p in parts]) for i in range(3)))


def pair_sums(t, mask, success) -> tuple[np.ndarray, np.ndarray]:
    """(Σ weight·success, Σ weight) per (query, document) pair over the (pattern, rank) cells of ``t`` in ``mask``."""
    w = np.broadcast_to(t.weight[:, None], t.pairs.shape) * mask * t.mask
    return (np.bincount(t.pairs.ravel(), (w * success).ravel(), t.n_pairs),
            np.bincount(t.pairs.ravel(), w.ravel(), t.n_pairs))


def rank_sums(t, mask, success) -> tuple[np.ndarray, np.ndarray]:
    """(Σ weight·success, Σ weight) per rank over the (pattern, rank) cells of ``t`` in ``mask``."""
    w = t.weight[:, None] * mask * t.mask
    return (w * success).sum(0), w.sum(0)


def prior_mean(sums, prior=PYCLICK_PRIOR) -> np.ndarray:
    """(prior successes + Σ successes) / (prior trials + Σ trials) of ``sums`` = (Σ successes, Σ trials)."""
    return (prior[0] + sums[0]) / (prior[1] + sums[1])


def pair_mean(t: SessionTable, mask, success, *, prior=None) -> np.ndarray:
    """(prior successes + Σ weight·success) / (prior trials + Σ weight) over the (pattern, rank) cells in ``mask``,
    per (query, document) pair; ``prior`` None: the table's attractiveness prior (PyClick's one in two unless
    learned, :mod:`~ultr_core.clickmodels.prior`)."""
    prior = t.attr_prior if prior is None else prior
    num, den = pair_sums(t, mask, success)
    return (prior[0] + num) / (prior[1] + den)


def chunk_sums(t, sums) -> list:
    """``sums(chunk)`` (a list of arrays, each a sum over the chunk's patterns) summed over the chunks of ``t`` — a
    fit by counting reads a table of any size this way."""
    total = None
    for c in t.chunks():
        part = sums(c)
        total = list(part) if total is None else [a + b for a, b in zip(total, part)]
    return total


#: the optional column of the logging policy's propensities: P(this document at this rank | the session's query), as
#: stochastic-logging practitioners and the Open Bandit data record them (OBP's ``pscore_item_position``)
PROPENSITY = "propensity"


def check_propensity(values: np.ndarray, name: str) -> np.ndarray:
    """The logged propensities, refused unless every shown row holds a probability in (0, 1] (a row shown with
    probability 0 cannot have been logged), naming the count and the first bad row."""
    bad = ~(np.isfinite(values) & (values > 0) & (values <= 1))
    if bad.any():
        raise DataFormatError(name, f"column '{PROPENSITY}' must hold the logging policy's probability of the row's "
                                    f"document at its rank, in (0, 1]: {int(bad.sum()):,} shown row(s) do not "
                                    f"(the first is shown row {int(np.argmax(bad)) + 1:,})")
    return values


def check_session_columns(have, name: str) -> None:
    """Click models need a session id per result list, besides query, document, rank and click."""
    missing = [c for c in ("session_id", "query_id", "doc_id", "position", "click") if c not in have]
    if missing:
        raise MissingColumnError(name, f"click models need column(s) {', '.join(missing)} (a session id per "
                                       "result list)", missing)


def _check_lists(codes: np.ndarray, position: np.ndarray, name: str) -> np.ndarray:
    """Each session's list length n (ranks 1 … n once each, n ≤ MAX_DEPTH); refuses gaps, repeats and longer
    lists."""
    sizes = np.bincount(codes)
    if sizes.max() > MAX_DEPTH:
        raise DataFormatError(name, f"result lists of {sizes.max()} exceed the {MAX_DEPTH} ranks a click model "
                                    "describes")
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    expected = np.arange(len(position)) - np.repeat(start, sizes) + 1
    if not np.array_equal(position, expected):
        bad = int(codes[np.flatnonzero(position != expected)[0]])
        raise DataFormatError(name, f"session {bad + 1} (in file order) does not show ranks 1 to {sizes[bad]} once "
                                    "each: every session must show ranks 1 … n")
    return sizes


def split_sessions(s: SessionArrays, fraction: float) -> tuple[SessionArrays, SessionArrays, int]:
    """PyClick's ``examples/Example.py``: the first ``fraction`` of the sessions (file order) train, the rest
    test; test sessions whose query never occurs in training are dropped and counted."""
    if not 0 < fraction < 1:
        raise ConfigError("split", f"must be a number in (0, 1), got {fraction!r}")
    cut = int(s.n_sessions * fraction)
    if cut == 0 or cut == s.n_sessions:
        raise ConfigError("split", f"{fraction} of {s.n_sessions} sessions leaves no training or no test session")
    train, test = s.subset(slice(0, cut)), s.subset(slice(cut, None))
    seen = np.isin(test.query, np.unique(train.query))
    return train, test.subset(seen), int((~seen).sum())
