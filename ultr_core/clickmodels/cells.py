"""Cell sums: the (pair, rank) cells of a table of patterns with their impressions and clicks — all that a
position-based model's likelihood reads (the user browsing model's cells add the rank of the last click above) —
summed chunk by chunk in a stated budget of memory, so that a log of any size is fitted without holding its
patterns (issue #62).

>>> import numpy as np
>>> from ultr_core.clickmodels.sessions import SessionTable
>>> t = SessionTable(np.array([[0, 1], [1, 0]]), np.array([[True, False], [False, False]]),
...                  np.array([2.0, 1.0]), n_pairs=2, n_sessions=3)
>>> [x.tolist() for x in cell_sums(t)]
[[0, 0, 1, 1], [0, 1, 0, 1], [2, 1, 1, 2], [2, 0, 0, 0]]
"""
from __future__ import annotations

import numpy as np

__all__ = ["cell_sums", "previous_click", "release_free_memory", "CELL_PARTS", "CELL_BUDGET", "CELL_BYTES"]

#: ranges of the cell key that :func:`cell_sums` merges apart (a merge's transient memory is one range's)
CELL_PARTS = 16
#: bytes of memory budget a cell being summed is given (it takes 12 held, up to 6 more waiting to be merged, and
#: its share of a merge's sort): a pattern file's budget is its memory limit ÷ this (``click-models --memory-limit``)
CELL_BYTES = 32
#: distinct cells the ranges being summed may hold (merged and waiting) before the highest ranges are left to a
#: later pass over the table — the default memory limit's (2 GB ÷ :data:`CELL_BYTES`): a 100 M-row log's UBM cells
#: (41 M) take one pass, a 1 B-row log's (about 115 M) two or three
CELL_BUDGET = 2_000_000_000 // CELL_BYTES
#: new cells a range lets wait before it merges them (the chunk rows of ten 100,000-pattern chunks over 16 ranges)
MERGE_MIN = 62_500


def previous_click(clicks: np.ndarray) -> np.ndarray:
    """(P, D): the rank of the last click above each rank, D − 1 when there is none (PyClick's UBM)."""
    d = clicks.shape[1]
    ranks = np.where(clicks, np.arange(d)[None, :], -1)
    before = np.maximum.accumulate(np.concatenate([np.full((len(clicks), 1), -1), ranks[:, :-1]], axis=1), axis=1)
    return np.where(before < 0, d - 1, before)


def cell_sums(t, previous: bool = False, *, budget: int | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pair, rank index, impressions, clicks) of the shown cells of ``t`` (any table with ``chunks``), summed over
    its chunks and sorted by (pair, rank index); ``previous``: the rank index is rank·D + the rank of the last click
    above (D − 1 without one).

    Each chunk's distinct cells are summed at once and kept in :data:`CELL_PARTS` ranges of the cell key: a cell the
    range already holds is added where it lies (a binary search), a new one waits in the range's parts until they
    reach half of it and are merged in — a merge's sort and copies hold one range at a time (a merge of all cells at
    once took about 95 bytes per cell).  When the ranges being summed hold more than ``budget`` cells (default
    :data:`CELL_BUDGET`) the highest are dropped and summed by a later pass over the table, so memory is bounded by
    the budget and the finished sums (14 bytes a cell), not by the log: a 1 B-row log's UBM cells held 4.24 GB in
    one pass (issue #62).  The sums are of pattern counts (whole numbers), so neither the order of adding nor the
    passes change a bit.  Pairs are int32 and rank indices int16 where they fit, and sums of whole numbers below
    2³² are uint32 (float64 otherwise); every reader computes in float64."""
    d = t.depth
    width = d * d if previous else d
    step = -(-max(int(t.n_pairs) * width, 1) // CELL_PARTS)
    code = np.int32 if int(t.n_pairs) * width < 2**31 else np.int64
    done, first = [], 0
    while first < CELL_PARTS:
        ranges, first = _one_pass(t, previous, first=first, step=step, code=code, width=width,
                                  budget=CELL_BUDGET if budget is None else budget)
        done += ranges
    return _unpacked(done, width, n_pairs=int(t.n_pairs))


def _one_pass(t, previous, *, first, step, code, width, budget):
    """One pass over ``t``'s chunks summing the ranges from ``first`` on, dropping the highest (never ``first``)
    while the ranges held exceed ``budget`` cells: (the finished ranges, the first range the pass left)."""
    d = t.depth
    empty = (np.zeros(0, code), np.zeros(0), np.zeros(0))
    last = CELL_PARTS                       # ranges first … last − 1 are summed in this pass
    merged, parts = [empty] * CELL_PARTS, [[] for _ in range(CELL_PARTS)]
    for c in t.chunks():
        w = (c.weight[:, None] * c.mask).ravel()
        index = np.arange(d)[None, :] * (d if previous else 1) + (previous_click(c.clicks) if previous else 0)
        flat = (np.asarray(c.pairs, np.int64) * width + index).ravel()
        keep = (w > 0) & (flat >= first * step) & (flat < last * step)
        key, n, k = _summed(flat[keep].astype(code), w[keep], (w * c.clicks.ravel())[keep])
        cuts = [0, *np.searchsorted(key, np.arange(first + 1, last) * step), len(key)]
        for i in range(first, last):
            a, b = cuts[i - first], cuts[i - first + 1]
            if b > a:
                merged[i], new = _absorb(merged[i], key[a:b], n[a:b], k[a:b])
                if len(new[0]):
                    parts[i].append(new)
            if sum(len(x[0]) for x in parts[i]) > max(len(merged[i][0]) // 2, MERGE_MIN):
                merged[i], parts[i] = _merge([merged[i], *parts[i]]), []
                if len(merged[i][0]) > 1_000_000:
                    release_free_memory()
        held = [len(merged[i][0]) + sum(len(x[0]) for x in parts[i]) for i in range(CELL_PARTS)]
        while last - first > 1 and sum(held[first:last]) > budget:
            last -= 1
            merged[last], parts[last], held[last] = empty, [], 0
            release_free_memory()
    done = []
    for i in range(first, last):
        done.append(_merge([merged[i], *parts[i]]))
        merged[i], parts[i] = empty, []
        release_free_memory()
    return done, last


def _unpacked(ranges, width, *, n_pairs):
    """The ranges (key, n, k), in key order, as one (pair, rank index, n, k), each range freed as it is copied."""
    total = sum(len(m[0]) for m in ranges)
    count = np.result_type(*(m[1] for m in ranges), *(m[2] for m in ranges))
    pair = np.empty(total, np.int32 if n_pairs < 2**31 else np.int64)
    rank = np.empty(total, np.int16 if width < 2**15 else np.int64)
    n, k = np.empty(total, count), np.empty(total, count)
    at = 0
    for i in range(len(ranges)):
        key, ni, ki = ranges[i]
        ranges[i] = None
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
        mn, mc = (m.astype(np.float64) if m.dtype != np.float64 and not _whole(v) else m
                  for m, v in zip((mn, mc), sums))
        mn[where], mc[where] = sums
        merged = (mk, mn, mc)
    miss = ~hit
    return merged, (key[miss], n[miss], k[miss])


def _whole(x: np.ndarray) -> bool:
    """Whether the sums ``x`` are all whole numbers below 2³² (and there are some)."""
    return bool(len(x)) and x.max() < 2**32 and not np.any(np.modf(x)[0])


def _count(x: np.ndarray) -> np.ndarray:
    """Sums of whole numbers below 2³² as uint32 (exact, and half the bytes); any other sums as they are."""
    return x.astype(np.uint32) if _whole(x) else x


def _merge(parts):
    return _summed(*(np.concatenate([p[i] for p in parts]) for i in range(3)))
