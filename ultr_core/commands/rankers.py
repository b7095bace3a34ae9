"""``python -m ultr_core rankers``: simulate a log on a data set with features (the ``train`` command's options), train
ULTR rankers and fit click models on its training sessions, and print held-out click fit beside agreement with the
data set's editorial labels (:mod:`~ultr_core.studies.rankers`)."""
from __future__ import annotations

from ultr_core.commands.options import HelpFormatter
from ultr_core.constraints import TRAIN_SHARE

__all__ = ["add_parser", "parse_algorithms"]


def add_parser(sub) -> None:
    from ultr_core.algorithms.config import ALGORITHMS
    from ultr_core.clickmodels.registry import CLICK_MODELS
    from ultr_core.simulation.params import add_options
    from ultr_core.studies.rankers import DEFAULT_RANKERS
    p = sub.add_parser("rankers", formatter_class=HelpFormatter,
                       help="train ULTR rankers and fit click models on one simulated log with features: held-out "
                            "click fit beside agreement with the data set's editorial labels")
    p.add_argument("--dataset", default="synthetic", help="synthetic, mq2008:PATH[:FOLD], yahoo:PATH, ultra:PATH")
    add_options(p)
    p.add_argument("--algorithms", default=",".join(DEFAULT_RANKERS),
                   help="comma-separated of " + ", ".join(ALGORITHMS) + ", or all")
    p.add_argument("--models", help="click models, comma-separated of " + ", ".join(s.key for s in CLICK_MODELS)
                   + " (default: all)")
    p.add_argument("--split", type=float, default=0.75,
                   help="share of the sessions (by id) that train")
    p.add_argument("--include-prior-dominated", action="store_true", help="also judge the pairs whose click-model "
                   "estimate the prior decides (fewer than 10 examination-weighted training impressions)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="training hyper-parameter of every ranker, "
                                                                       "e.g. --set steps=300 (repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


def parse_algorithms(text: str) -> list[str]:
    """``ips,dla`` → keys, ``all`` → every algorithm; an unknown name is refused with the names on offer."""
    from ultr_core.algorithms.config import ALGORITHMS
    from ultr_core.errors import ConfigError
    keys = list(ALGORITHMS) if text.strip().lower() == "all" else [
        k.strip().lower() for k in text.split(",") if k.strip()]
    bad = [k for k in keys if k not in ALGORITHMS]
    if bad or not keys:
        raise ConfigError("--algorithms", f"unknown algorithm {bad[0][:20]!r}; choose from {', '.join(ALGORITHMS)}"
                          if bad else "name at least one algorithm")
    return list(dict.fromkeys(keys))


def run(a) -> int:
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.clickmodels.compare import parse_models
    from ultr_core.clickmodels.judgement_agreement import judgement_lines
    from ultr_core.errors import printable
    from ultr_core.logs.outputs import json_text
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.params import values_of
    from ultr_core.simulation.simulated import simulate_log
    from ultr_core.studies.rankers import rankers_beside_click_models
    TRAIN_SHARE.check(a.split, "--split")
    algorithms, models, base = parse_algorithms(a.algorithms), parse_models(a.models), TrainConfig.from_pairs(
        a.set or [])
    ds, _, log = simulate_log(a.dataset, ClickModelConfig.from_values(values_of(a)), n_sessions=a.sessions, seed=a.seed,
                              data_seed=a.data_seed)
    out = rankers_beside_click_models(ds, log, algorithms=algorithms, models=models, split=a.split, seed=a.seed,
                                      base=base,
                                      include_prior=a.include_prior_dominated)
    if a.json:
        print(json_text(out))
        return 0
    print(printable(f"{a.dataset}: {out.train_sessions:,} training sessions, {out.test_sessions:,} test "
                    f"sessions; rankers read as P(click) = γ_r·σ(a·score + b)"))
    rows = out.scored
    width = max(len(m.label) for m in rows.values()) + 1
    print(f"{'model':<{width}} {'log-likelihood':>15} {'perplexity':>11} {'seconds':>8}")
    for m in rows.values():
        print(f"{m.label:<{width}} {m.log_likelihood:>15.4f} {m.perplexity:>11.4f} {m.seconds:>8.2f}")
    print("\n".join(printable(x) for x in judgement_lines(out)))
    return 0
