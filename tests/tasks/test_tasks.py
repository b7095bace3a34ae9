"""The task functions (:mod:`ultr_core.tasks`): typed options checked on creation, one result that owns its JSON,
and the CLI a printer of that result — the same numbers for one file."""
from __future__ import annotations

import dataclasses
import json

import pytest
from clihelp import cli
from loghelp import random_log

from ultr_core.errors import ConfigError
from ultr_core.tasks import CheckOptions, LogCheck, check_log


@pytest.fixture(scope="module")
def log_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("task") / "log.csv"
    random_log(n_sessions=400, seed=5)[0].to_csv(path, index=False)
    return path


def test_options_are_keyword_only_frozen_and_checked_before_any_read():
    with pytest.raises(TypeError):
        CheckOptions(("position",))                             # keyword-only
    o = CheckOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.seed = 3
    for kwargs, flag in [({"bootstrap": 50, "estimate": None}, "--bootstrap"), ({"certainty": 0}, "--certainty"),
                         ({"objective": "mean"}, "--objective"), ({"scheduler": "tcp://x:1"}, "--scheduler"),
                         ({"certainty": 2, "swap_impressions": 0}, "--swap-impressions"), ({"bias": ()}, "--bias"),
                         ({"users": "nope"}, "--users")]:
        with pytest.raises(ConfigError) as e:
            CheckOptions(**kwargs)
        assert e.value.field == flag


def test_the_cli_prints_the_tasks_result(log_file, capsys):
    opts = CheckOptions(certainty=2)
    check = check_log(str(log_file), opts)
    assert isinstance(check, LogCheck)
    code, out, _ = cli(["ig", log_file, "--json", "--certainty", "2"], capsys)
    assert code == 0 and json.loads(out) == json.loads(check.to_json())
    code, text, _ = cli(["ig", log_file, "--certainty", "2"], capsys)
    assert code == 0 and text.strip() == check.text().strip()


def test_one_converged_fit_serves_every_part(log_file):
    check = check_log(str(log_file), CheckOptions(estimate=None, certainty=1))
    u = check.uncertainty
    assert check.report.certainty_plan is not None and len(check.documents)     # both parts built on the one fit
    assert check.uncertainty is u
    frame = check.documents
    assert len(frame) == check.graph.n_documents
    lo, hi = frame["lower"].to_numpy(), frame["upper"].to_numpy()
    est = frame["relevance"].to_numpy()
    ok = ~(frame["lower"].isna() | frame["upper"].isna())
    assert ((lo[ok] <= est[ok] + 1e-12) & (est[ok] <= hi[ok] + 1e-12)).all()   # an interval holds its estimate


def test_a_profile_says_whether_its_refits_converged(log_file):
    # the constrained refits are checked: the result says how many stopped at the step cap and how far from a maximum
    p = check_log(str(log_file), CheckOptions(estimate=None, profile="position=3")).report.profile
    conv = p.convergence
    assert conv == "every refit converged" or ("refits stopped at 100 Newton steps" in conv and "decrement" in conv)
    assert p.lower <= p.estimate <= p.upper


def test_pages_and_the_cli_check_a_log_through_the_task():
    # the analysis a log check runs is reached through tasks.check_log only: no page, app module or command calls
    # the identifiability report's builders itself (where the two used to assemble it each their own way)
    import ast
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    files = [*root.glob("pages/*.py"), *root.glob("ultr_core/app/*.py"), root / "app.py",
             root / "ultr_core" / "__main__.py", *root.glob("ultr_core/*/cli.py")]
    builders = {"analyse_identifiability", "identifiability_report"}
    offenders = {}
    for f in files:
        names = {a.name for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.ImportFrom)
                 for a in n.names}
        if names & builders:
            offenders[f.relative_to(root).as_posix()] = sorted(names & builders)
    assert len(files) > 20 and not offenders


def test_click_model_options_refuse_what_does_not_apply():
    from ultr_core.tasks import ClickModelOptions
    for kwargs, field in [({"split": 1.5}, "--split"), ({"test": "t.csv", "split": 0.5}, "--split"),
                          ({"test_format": "csv"}, "--test-format"), ({"prior": "flat"}, "--prior"),
                          ({"models": ("pbm", "nope")}, "models")]:
        with pytest.raises(ConfigError) as e:
            ClickModelOptions(**kwargs)
        assert e.value.field == field
    assert ClickModelOptions(models=(" PBM", "ubm", "pbm")).models == ("pbm", "ubm")


def test_the_click_models_command_prints_the_tasks_result(log_file, capsys):
    from ultr_core.tasks import ClickModelOptions, fit_click_models
    fit = fit_click_models(str(log_file), ClickModelOptions(models=("pbm", "dctr")))
    code, out, _ = cli(["click-models", log_file, "--models", "pbm,dctr", "--json"], capsys)
    got, want = json.loads(out), json.loads(fit.to_json())
    for m in ("pbm", "dctr"):                 # the timings differ between two runs; every number fitted does not
        got["models"][m].pop("seconds"), want["models"][m].pop("seconds")
    assert code == 0 and got == want
    code, text, _ = cli(["click-models", log_file, "--models", "pbm,dctr"], capsys)
    assert code == 0 and text.splitlines()[:2] == fit.lines()[:2]


def test_ranking_options_refuse_what_does_not_apply():
    from ultr_core.tasks import RankingOptions
    for kwargs, field in [({"prior": "learned"}, "--prior"), ({"model": "dctr"}, "--model"), ({"k": 0}, "--k"),
                          ({"n_boot": 5}, "--n-boot")]:
        with pytest.raises(ConfigError) as e:
            RankingOptions(**kwargs)
        assert e.value.field == field
    assert RankingOptions(ranking="model:ubm", prior="learned").prior == "learned"


def test_the_evaluate_command_prints_the_tasks_result(log_file, capsys):
    from ultr_core.tasks import RankingOptions, value_ranking
    value = value_ranking(str(log_file), RankingOptions(n_boot=20, k=3))
    code, out, _ = cli(["evaluate", log_file, "--n-boot", "20", "--k", "3", "--json"], capsys)
    assert code == 0 and json.loads(out) == json.loads(value.to_json())
    code, text, _ = cli(["evaluate", log_file, "--n-boot", "20", "--k", "3"], capsys)
    assert code == 0 and text.strip() == "\n".join(value.lines()).strip()
    est = value.report.estimators
    assert all(e.lower <= e.estimate <= e.upper for e in est.values() if e.estimate is not None)


def test_the_evaluate_result_is_typed_and_keeps_its_json_keys(log_file):
    """Issue #59: ``evaluate``'s result is a frozen RankingReport (its candidate, support, position bias and the
    propensities' source records too) whose JSON has the keys, in the order, the command always printed."""
    from ultr_core.counterfactual.records import RankingReport, SlotSupport
    from ultr_core.tasks import RankingOptions, value_ranking
    rep = value_ranking(str(log_file), RankingOptions(n_boot=20, k=3)).report
    assert isinstance(rep, RankingReport) and isinstance(rep.support, SlotSupport)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.k = 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.support.identified = 0.0
    out = json.loads(value_ranking(str(log_file), RankingOptions(n_boot=20, k=3)).to_json())
    assert list(out) == ["log", "sessions", "queries", "k", "model", "n_boot", "seed", "level", "notes", "candidate",
                         "logged", "estimators", "support", "position_bias", "logging_propensities"]
    assert list(out["support"]) == ["any_position", "identified", "at_position", "examined", "impressed"]
    assert list(out["candidate"]) == ["label", "counts", "notes"] and list(out["position_bias"]) == ["theta",
                                                                                                     "components"]
    assert list(out["logging_propensities"]) == ["source", "text"]
    assert rep.all_notes == (*rep.notes, *rep.candidate.notes)


def test_train_options_refuse_what_does_not_apply():
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.tasks import TrainOptions
    for kwargs, field in [({"seeds": 0}, "--seeds"), ({"seeds": 101}, "--seeds"),
                          ({"train": TrainConfig(seed=2 ** 32 - 1), "seeds": 2}, "--seeds")]:
        with pytest.raises(ConfigError) as e:
            TrainOptions(**kwargs)
        assert e.value.field == field
    with pytest.raises(TypeError):
        TrainOptions("synthetic")                                # keyword-only


def test_the_train_command_prints_the_tasks_result(capsys):
    """Two seeds of a short linear DLA run: the CLI's JSON and text are the task's, seed by seed."""
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.tasks import TrainedRanker, TrainOptions, train_ranker
    flags = ["--sessions", "1500", "--seeds", "2", "--set", "steps=20", "--set", "model=linear"]
    run = train_ranker(TrainOptions(sessions=1500, seeds=2, train=TrainConfig(steps=20, model="linear")))
    assert isinstance(run, TrainedRanker) and run.seeds == [0, 1] and run.diverged == []
    code, out, _ = cli(["train", *flags, "--json"], capsys)
    assert code == 0 and json.loads(out) == json.loads(run.to_json())
    assert [r["seed"] for r in json.loads(out)] == [0, 1]
    code, text, _ = cli(["train", *flags], capsys)
    assert code == 0 and text.strip() == "\n".join(run.lines()).strip()
    assert text.splitlines()[-1].startswith("  mean")


def test_methods_options_build_the_train_pages_configurations():
    """The Train page's runs (issue #59: the page wires, the task builds): the chosen methods with the shared settings
    and each its own hyper-parameters, then Naive and Oracle unless chosen or turned off; names refused by field."""
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.tasks.train_ranker import MethodsOptions
    shared = TrainConfig(model="linear", lr=0.03, steps=900, seed=4, clicks="online")
    o = MethodsOptions(algorithms=("lbd", "dla", "oracle"), train=shared,
                       hyper=(("lbd_lambda", 0.5), ("max_weight", 7.0)))
    by_hand = [TrainConfig(algorithm="lbd", model="linear", lr=0.03, steps=900, seed=4, clicks="online",
                           eval_every=30, lbd_lambda=0.5),
               TrainConfig(algorithm="dla", model="linear", lr=0.03, steps=900, seed=4, clicks="online",
                           eval_every=30, max_weight=7.0),
               TrainConfig(algorithm="oracle", model="linear", lr=0.03, steps=900, seed=4, clicks="online",
                           eval_every=30),
               TrainConfig(algorithm="naive", model="linear", lr=0.03, steps=900, seed=4, clicks="online",
                           eval_every=30)]
    assert o.configs() == by_hand and o.added_references == ("naive",)
    assert [c.algorithm for c in MethodsOptions(algorithms=("dla",), references=False).configs()] == ["dla"]
    for kwargs, field in [({"algorithms": ("DLA",)}, "algorithms"),
                          ({"algorithms": ("dla",), "hyper": (("steps", 5),)}, "hyper")]:
        with pytest.raises(ConfigError) as e:
            MethodsOptions(**kwargs)
        assert e.value.field == field


def test_train_methods_jobs_refuse_a_selection_method_on_a_log_that_shows_every_candidate():
    from ultr_core.simulation.logspec import LogSpec
    from ultr_core.tasks.train_ranker import MethodsOptions, train_methods_jobs
    spec = LogSpec.parse("synthetic:50")
    ds, _, log = spec.simulate()
    with pytest.raises(ConfigError, match="top-k selection"):
        train_methods_jobs(MethodsOptions(algorithms=("dla", "cld")), noise=0.1, spec=spec.to_string(), log=log)
    jobs = train_methods_jobs(MethodsOptions(algorithms=("dla",)), noise=0.1, spec=spec.to_string(), log=log)
    assert [args[1][0].algorithm for _, _, args, _ in jobs] == ["dla", "naive", "oracle"]


def test_compare_options_refuse_what_cannot_run():
    from ultr_core.tasks import CompareOptions
    for kwargs, field, words in [({"methods": ()}, "methods", "at least one"), ({"seeds": 0}, "seeds", "1 to 100"),
                                 ({"sweep": "click.noise", "values": ("0.1", "abc")}, "values", "'abc' is not"),
                                 ({"sweep": "n_sessions", "values": ("10**12",)}, "values", "not a number"),
                                 ({"sweep": "n_sessions", "values": ("200000",), "max_sessions": 100_000}, "values",
                                  "exceed")]:
        with pytest.raises(ConfigError) as e:
            CompareOptions(**kwargs)
        assert e.value.field == field and words in str(e.value)


def test_compare_methods_runs_its_grid_and_checks_its_claims():
    """The task runs the grid the options built (the same rows as run_grid), summarises it as the page draws it
    and checks a claim paired over the seeds."""
    from ultr_core.evaluation.claims import Claim
    from ultr_core.evaluation.stats import summarise
    from ultr_core.studies.experiment import run_grid
    from ultr_core.tasks import CompareOptions, MethodComparison, compare_methods
    claim = Claim("Oracle", "Naive", "ndcg@10")
    o = CompareOptions(methods=("naive", "oracle"), seeds=2, sessions=1500, steps=20, claims=(claim,))
    result = compare_methods(o)
    assert isinstance(result, MethodComparison)
    base, grid = o.grid
    alone = run_grid(base, grid, seeds=[0, 1])
    assert result.runs["ndcg@10"].tolist() == alone["ndcg@10"].tolist()
    pd_summary = summarise(alone, "algorithm", ["ndcg@1", "ndcg@3", "ndcg@10", "map"])
    assert result.summary().equals(pd_summary)
    verdicts = result.verdicts()
    assert len(verdicts) == 1 and verdicts["n"].iloc[0] == 2
    payload = json.loads(result.to_json())
    assert len(payload["runs"]) == 4 and {r["algorithm"] for r in payload["summary"]} == {"Naive", "Oracle"}
