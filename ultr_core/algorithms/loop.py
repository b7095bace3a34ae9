"""The shared optimisation loop of every gradient-based learner and the fitted result.

:func:`train_loop` is used by :func:`ultr_core.algorithms.training.fit` (click-model learners)
and by :mod:`ultr_core.algorithms.topk_selection` (CLD, CLD_pair); neither imports the other's module.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ultr_core.algorithms.config import TrainConfig
from ultr_core.algorithms.learners import Learner
from ultr_core.algorithms.models import xavier_init
from ultr_core.data.dataset import RankingData
from ultr_core.errors import ConfigError
from ultr_core.evaluation.metrics import ndcg

__all__ = ["FitResult", "train_loop"]


@dataclass
class FitResult:
    """A fitted ranker and its training history."""

    config: TrainConfig
    model: Learner = field(repr=False)
    history: list = field(default_factory=list)
    stopped: bool = False

    def predict(self, features: np.ndarray, offsets: np.ndarray | None = None) -> np.ndarray:
        """Ranking scores for a (n, F) feature matrix (higher = more relevant).  ``offsets`` (query
        boundaries) is used by rankers that aggregate per query (RankAgg)."""
        if hasattr(self.model, "predict_lists"):
            return self.model.predict_lists(np.asarray(features, np.float32), offsets)
        self.model.eval()
        with torch.no_grad():
            return self.model.score(torch.as_tensor(np.asarray(features, np.float32))).numpy().astype(np.float64)

    def observation(self) -> np.ndarray | None:
        return self.model.observation()


def _optimizer(cfg: TrainConfig, params):
    """The configured optimiser; ``weight_decay`` is L2 regularisation added to the gradient."""
    kind = {"adam": torch.optim.Adam, "adagrad": torch.optim.Adagrad, "sgd": torch.optim.SGD}[cfg.optimizer]
    return kind(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def train_loop(learner, config: TrainConfig, next_batch, *, valid: RankingData, on_step=None, stop=None) -> FitResult:
    """The shared optimisation loop: one optimiser built once, ``next_batch()`` per step,
    validation nDCG@10 (and @3) + callback every ``eval_every`` steps, stop event honoured, and the
    parameters with the best validation nDCG@10 restored at the end (``keep_best``)."""
    device = _device(config)
    if config.init != "default":
        xavier_init(learner, normal=config.init == "xavier_normal")
    learner.to(device)
    learner.train()                                   # dropout on while stepping, off when scoring
    opt = _optimizer(config, learner.parameters())
    Xv = torch.from_numpy(valid.features).to(device)
    result = FitResult(config, learner)
    sums, count = {}, 0
    best, best_state = -np.inf, None
    for step in range(1, config.steps + 1):
        if stop is not None and stop.is_set():
            result.stopped = True
            break
        b = next_batch()
        if device.type != "cpu":
            b = b.to(device)
        opt.zero_grad()
        loss, parts = learner.loss(b)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{config.display_name}: the loss became {float(loss)} at step {step}; "
                                     "lower the learning rate")
        loss.backward()
        if config.clip_norm is not None:                  # ULTRA: tf.clip_by_global_norm
            torch.nn.utils.clip_grad_norm_(learner.parameters(), config.clip_norm)
        opt.step()
        for k, v in parts.items():
            sums[k] = sums.get(k, 0.0) + v
        count += 1
        if step % config.eval_every == 0 or step == config.steps:
            learner.eval()
            with torch.no_grad():
                sv = (learner.predict_lists(valid.features, valid.offsets) if hasattr(learner, "predict_lists")
                      else learner.score(Xv).cpu().numpy())
            learner.train()
            obs = learner.observation()
            rec = {"step": step, **{k: v / count for k, v in sums.items()},
                   "valid_ndcg@10": ndcg(sv, valid.labels, valid.offsets, k=10),
                   "valid_ndcg@3": ndcg(sv, valid.labels, valid.offsets, k=3),     # the playground's short-list view
                   "observation": None if obs is None else [float(x) for x in obs]}
            sums, count = {}, 0
            if config.keep_best and np.isfinite(rec["valid_ndcg@10"]) and rec["valid_ndcg@10"] > best:
                best = rec["valid_ndcg@10"]
                best_state = {k: v.detach().clone() for k, v in learner.state_dict().items()}
                rec["best"] = True
            result.history.append(rec)
            if on_step is not None:
                on_step(rec)
    if best_state is not None:
        learner.load_state_dict(best_state)       # model selection on validation nDCG@10
    learner.cpu()                                 # predictions and estimates are read on the CPU
    learner.eval()
    return result


def _device(config: TrainConfig) -> torch.device:
    """The torch device of a fit: ``cuda`` when asked (or ``auto`` and available), else the CPU."""
    if config.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device", "device='cuda' but no CUDA GPU is available here; use 'auto' or 'cpu'")
    if config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")
