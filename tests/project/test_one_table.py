"""The one-table rule (issue #45): registry keys do not decide behaviour outside their tables (an AST scan), and a
toy click model, algorithm, Playground knob and page — each one record in an extension module — reach the CLI's
choices, the pages' options, the colours and the URL round trip."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ultr_core.algorithms.specs import ALGORITHM_SPECS
from ultr_core.clickmodels.registry import CLICK_MODELS

REPO = Path(__file__).resolve().parents[2]
#: where a key may decide behaviour: the tables themselves
TABLES = {"ultr_core/algorithms/specs.py", "ultr_core/algorithms/registry.py", "ultr_core/clickmodels/registry.py"}
MAX_KEYED = 5


def _keyed(keys: set[str]) -> list[str]:
    """Registry keys compared against, used as dict keys or set members outside the tables."""
    hits = []
    files = [*(REPO / "ultr_core").rglob("*.py"), *(REPO / "pages").glob("*.py"), REPO / "app.py"]
    for path in files:
        rel = str(path.relative_to(REPO))
        if rel in TABLES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            consts = []
            if isinstance(node, ast.Compare):
                for c in [node.left, *node.comparators]:
                    consts += c.elts if isinstance(c, (ast.Set, ast.Tuple, ast.List)) else [c]
            elif isinstance(node, ast.Dict):
                consts += [k for k in node.keys if k is not None]
            elif isinstance(node, ast.Set):
                consts += node.elts
            hits += [f"{rel}:{c.lineno} {c.value}" for c in consts
                     if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in keys]
    return hits


def test_the_scan_sees_a_key_that_decides():
    tree = ast.parse('if algorithm == "dla":\n    pass\nx = {"pbm": 1}')
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Compare))
    assert isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value == "dla"


def test_algorithm_keys_do_not_decide_outside_their_table():
    hits = _keyed({s.key for s in ALGORITHM_SPECS})
    assert len(hits) <= MAX_KEYED, hits


def test_click_model_keys_do_not_decide_outside_their_table():
    hits = _keyed({s.key for s in CLICK_MODELS})
    assert len(hits) <= MAX_KEYED, hits


_TOY_CHECK = r'''
import json
from streamlit.testing.v1 import AppTest
from ultr_core.__main__ import _parser
from ultr_core.algorithms.config import ALGORITHMS, TrainConfig
from ultr_core.app.figures import METHOD_COLORS
from ultr_core.app.knobs import KNOB_BY_FIELD
from ultr_core.app.pagetable import PAGES
from ultr_core.clickmodels.registry import MODEL_BY_KEY, USER_MODELS
from ultr_core.simulation.logspec import LogSpec
out = {}
help_text = _parser().format_help()
sub = [a for a in _parser()._actions if getattr(a, "choices", None) and isinstance(a.choices, dict)][0].choices
out["cli_users"] = "hasty" in sub["simulate"]._option_string_actions["--user-model"].choices
out["cli_algorithm"] = "toy_naive" in sub["train"]._option_string_actions["--algorithm"].choices
out["user_models"] = "hasty" in USER_MODELS and MODEL_BY_KEY["hasty"].gamma == 0.2
spec = LogSpec.parse("synthetic:50/user=hasty/sessions=2000/seed=1")
out["url"] = LogSpec.parse(spec.to_string()) == spec and "user_model=hasty" in spec.to_string()
log = spec.build() if hasattr(spec, "build") else None
out["colour"] = METHOD_COLORS["ToyNaive"] == "#123456"
k = KNOB_BY_FIELD["methods"]
out["knob_url"] = k.parse("toy_naive") == ["ToyNaive"] and k.to_url(["ToyNaive"]) == "toy_naive"
out["train_config"] = TrainConfig(algorithm="toy_naive").algorithm == "toy_naive"
out["train_config"] &= ALGORITHMS["toy_naive"] == "ToyNaive"
sim = AppTest.from_file("pages/simulate.py", default_timeout=60).run()
out["simulate_options"] = "Hasty" in sim.selectbox(key="sim_user_model").options
pg = AppTest.from_file("pages/playground.py", default_timeout=60).run()
out["playground_options"] = "ToyNaive" in pg.multiselect(key="pg_methods").options
out["playground_knob"] = pg.selectbox(key="pg_convention").value == "eye_tracking"
pg.session_state["pg_job"].stop()
linked = AppTest.from_file("pages/playground.py", default_timeout=60)
linked.query_params["convention"] = "reciprocal"
linked.run()
job = linked.session_state["pg_job"]
out["knob_link"] = (linked.selectbox(key="pg_convention").value == "reciprocal"
                    and linked.query_params["convention"] in ("reciprocal", ["reciprocal"])
                    and all("convention=reciprocal" in j._args[0] for j in job.jobs))
job.stop()
toy = next(p for p in PAGES if p.title == "Toy page")
tp = AppTest.from_file(toy.path, default_timeout=30).run()
out["page"] = not tp.exception and tp.slider(key="toy_knob").value == 3
print(json.dumps(out))
'''


def test_toy_records_reach_the_cli_pages_colours_and_links():
    env = {**os.environ, "ULTR_EXTENSIONS": "toy_records",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", _TOY_CHECK], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert all(out.values()), out


_TOY_ENGINE = '''
import contextlib, io, json, sys
import toy_records
from ultr_core.__main__ import main
def run(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    report = json.loads(out.getvalue())
    for m in report.get("models", {}).values():
        m.pop("seconds")                       # the fits' time: the one figure two runs do not share
    return report
path = sys.argv[1]
same = {}
for cmd in (["ig", path, "--estimate", "none", "--json"], ["click-models", path, "--models", "pbm,dbn", "--json"],
            ["evaluate", path, "--n-boot", "20", "--estimators", "ips,dm", "--json"]):
    same[cmd[0]] = run(cmd + ["--engine", "toy"]) == run(cmd)
print(json.dumps({"same": same, "calls": toy_records.CALLS}))
'''


def test_a_toy_engine_record_reaches_every_out_of_core_command(tmp_path):
    """One :class:`~ultr_core.logs.engines.LogEngine` record in an extension module: ``ig``, ``click-models`` and
    ``evaluate`` offer ``--engine toy``, run its functions and print what DuckDB prints."""
    rng = np.random.default_rng(0)
    n = 400
    pd.DataFrame({"session_id": np.repeat(np.arange(n), 3), "query_id": np.repeat(rng.integers(0, 5, n), 3),
                  "doc_id": rng.integers(0, 6, 3 * n), "position": np.tile([1, 2, 3], n),
                  "click": (rng.random(3 * n) < 0.3).astype(int)}).to_csv(tmp_path / "log.csv", index=False)
    env = {**os.environ, "ULTR_EXTENSIONS": "toy_records",
           "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", _TOY_ENGINE, str(tmp_path / "log.csv")], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["same"] == {"ig": True, "click-models": True, "evaluate": True}, out
    assert out["calls"] == ["counts", "sessions", "rows"], out


def _record_classes():
    from ultr_core.algorithms.hyper import Hyper
    from ultr_core.algorithms.record import AlgorithmSpec
    from ultr_core.app.knobs import Knob
    from ultr_core.app.pagespec import PageSpec
    from ultr_core.clickmodels.spec import ClickModelSpec
    from ultr_core.logs.formats import LogFormat
    from ultr_core.simulation.params import Param
    return [AlgorithmSpec, ClickModelSpec, LogFormat, Knob, PageSpec, Param, Hyper]


def test_every_record_declares_every_field():
    from ultr_core.constraints import undeclared
    assert {c.__name__: undeclared(c) for c in _record_classes() if undeclared(c)} == {}


def test_a_bad_record_names_itself_its_field_and_the_allowed_values():
    import pytest

    from ultr_core.algorithms.record import AlgorithmSpec
    from ultr_core.clickmodels.models import DCM
    from ultr_core.clickmodels.spec import ClickModelSpec
    from ultr_core.errors import ConfigError
    from ultr_core.logs.formats import LogFormat
    with pytest.raises(ConfigError, match=r"click model 'toy'\.colour: must be a colour #rrggbb, got 'red'"):
        ClickModelSpec("toy", "Toy", DCM, "mle", "c", "p", "r", colour="red", behaviour="b")
    with pytest.raises(ConfigError, match=r"click model 'toy'\.behaviour"):
        ClickModelSpec("toy", "Toy", DCM, "mle", "c", "p", "r", colour="#000000")
    with pytest.raises(ConfigError, match=r"algorithm 'toy'\.family: must be one of .*'beyond', got 'magic'"):
        AlgorithmSpec("toy", "Toy", "#000000", "magic", "listwise", "learners:Naive", "c", "x")
    with pytest.raises(ConfigError, match=r"log format 'toy'\.help"):
        LogFormat("toy", "Toy", "tabular", "a toy")
