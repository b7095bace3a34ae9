"""Turn a click log into padded per-session arrays (vectorised) and sample batches."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ultr_core.errors import ConfigError
from ultr_core.logs.clicklog import ClickLog

__all__ = ["SessionData", "session_data"]


@dataclass
class SessionData:
    """Sessions as (S, L) arrays; position p is column p − 1.

    ``rows`` index the dataset split's features (−1 = no document), ``shown`` marks displayed
    documents, ``clicks`` are 0/1, ``candidate`` marks every logged candidate (shown or not —
    CLD and Heckman use the unshown ones), ``true_obs`` holds the true observation if known.
    """

    rows: np.ndarray
    clicks: np.ndarray
    shown: np.ndarray
    candidate: np.ndarray
    true_obs: np.ndarray | None
    n_positions: int            #: positions with at least one shown document

    @property
    def n_sessions(self) -> int:
        return len(self.rows)

    def with_clicks(self) -> np.ndarray:
        """Indices of sessions with at least one click."""
        return np.flatnonzero(self.clicks.sum(axis=1) > 0)

    def true_propensity(self) -> np.ndarray | None:
        """Mean true observation per position over shown documents."""
        if self.true_obs is None:
            return None
        s = self.shown[:, :self.n_positions]
        tot = (self.true_obs[:, :self.n_positions] * s).sum(axis=0)
        return tot / np.maximum(s.sum(axis=0), 1)


def session_data(log: ClickLog) -> SessionData:
    """Pad ``log`` into per-session arrays (needs the ``row`` column of simulated logs)."""
    f = log.frame
    if "row" not in f:
        raise ConfigError("log", "training needs a log simulated on a dataset (its 'row' column links "
                                 "documents to features); user logs can be analysed on the Identifiability page")
    if len(f) == 0:
        raise ConfigError("log", "the log is empty")
    sess = pd.factorize(f["session_id"])[0]
    pos = f["position"].to_numpy(np.int64) - 1
    L = int(pos.max()) + 1
    S = int(sess.max()) + 1
    rows = np.full((S, L), -1, np.int64)
    clicks = np.zeros((S, L), np.float32)
    shown = np.zeros((S, L), bool)
    cand = np.zeros((S, L), bool)
    rows[sess, pos] = f["row"].to_numpy(np.int64)
    clicks[sess, pos] = f["click"].to_numpy(np.float32)
    shown[sess, pos] = f["shown"].to_numpy(bool)
    cand[sess, pos] = True
    obs = None
    if "true_observation" in f:
        obs = np.zeros((S, L), np.float32)
        obs[sess, pos] = f["true_observation"].to_numpy(np.float32)
    n_pos = int(np.flatnonzero(shown.any(axis=0)).max()) + 1 if shown.any() else 0
    if n_pos == 0:
        raise ConfigError("log", "no document was shown")
    return SessionData(rows, clicks, shown, cand, obs, n_pos)
