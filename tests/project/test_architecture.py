"""The house rules of ``ultr_core`` (docs/architecture.md), checked on the source:

* packages form layers and import only downward (a lazy import inside a function counts too);
* inside :mod:`ultr_core.logs` a log flows one way: each module imports only those before it;
* no module is longer than ~400 lines; the core never imports Streamlit.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "ultr_core"
#: package -> layer; a package may import its own layer's package and lower layers only
LAYERS = {"errors": 0, "constraints": 1, "extensions": 1, "data": 2, "evaluation": 3, "logs": 4, "clickmodels": 5,
          "simulation": 6, "algorithms": 7, "identifiability": 7, "counterfactual": 8, "studies": 9, "tasks": 10,
          "app": 10, "commands": 11}
#: the order a log passes through ultr_core.logs (read → normalise → map → reduce)
LOGS_ORDER = ["bounds", "formats", "engines", "clicklog", "coding", "sniff", "sql", "ids", "yandex", "sessions",
              "normalise", "ultra", "mapping", "daskcounts", "ingestion", "judgements", "scores", "outputs"]
MAX_LINES = 400


def _modules():
    return sorted(p for p in ROOT.rglob("*.py"))


def _name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ultr_core"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ultr_core"))
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.add("." * node.level + (node.module or ""))
    return out


def _package(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_package_has_a_layer():
    pkgs = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()} | {"errors", "constraints",
    "extensions"}
    assert pkgs == set(LAYERS), "a new package needs its place in LAYERS and docs/architecture.md"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: _name(p))
def test_imports_only_go_down(path):
    me = _name(path)
    mine = _package(me)
    if mine is None or mine == "__main__":          # ultr_core/__init__ and the CLI sit on top
        return
    bad = []
    for imp in _imports(path):
        assert not imp.startswith("."), f"{me}: relative import {imp!r} (use absolute ultr_core.… imports)"
        other = _package(imp)
        if other is None or other == mine or other not in LAYERS:
            continue
        if LAYERS[other] >= LAYERS[mine]:
            bad.append(imp)
    assert not bad, f"{me} imports upward or sideways: {sorted(bad)}"


@pytest.mark.parametrize("path", sorted((ROOT / "logs").glob("*.py")), ids=lambda p: p.stem)
def test_logs_flow_one_way(path):
    if path.stem == "__init__":
        return
    assert path.stem in LOGS_ORDER, f"logs/{path.name} needs its place in LOGS_ORDER"
    me = LOGS_ORDER.index(path.stem)
    later = {imp for imp in _imports(path) if imp.startswith("ultr_core.logs.")
             and imp.split(".")[2] in LOGS_ORDER and LOGS_ORDER.index(imp.split(".")[2]) >= me
             and imp.split(".")[2] != path.stem}
    assert not later, f"logs.{path.stem} calls back into a later stage: {sorted(later)}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: _name(p))
def test_modules_stay_small(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{_name(path)} has {n} lines (split it by concept: at most {MAX_LINES})"


def test_core_never_imports_streamlit():
    hits = [_name(p) for p in _modules() if "streamlit" in {i.split(".")[0] for i in _all_imports(p)}]
    assert not hits, hits


def _all_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_no_import_cycle_between_modules():
    """No two modules of ultr_core import each other, directly or through others (type-only imports included; a
    package's face re-exporting its own modules is not an edge)."""
    names = {_name(p): p for p in _modules()}
    graph = {me: {i for i in _imports(p) if i in names and i != me and not i.startswith(me + ".")}
             for me, p in names.items()}
    state, cycle = {}, []

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycle.extend(path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt])
                return True
            if nxt not in state and visit(nxt, path + [node]):
                return True
        state[node] = "done"
        return False
    for n in sorted(graph):
        if n not in state and visit(n, []):
            break
    assert not cycle, f"import cycle: {' → '.join(cycle)}"


REPO = ROOT.parent
#: where a function may be at most MAX_FUNCTION lines (a page's main() is split into its sections)
FUNCTION_DIRS = ("ultr_core", "pages", "experiments")
MAX_FUNCTION = 60


def _repo_modules():
    skip = {".venv", ".git", "node_modules"}
    return sorted(p for p in REPO.rglob("*.py") if not skip & set(p.relative_to(REPO).parts))


def test_no_module_anywhere_is_longer_than_400_lines():
    """Every Python file of the repository (core, pages, experiments, benchmarks, tests, scripts)."""
    long = {str(p.relative_to(REPO)): n for p in _repo_modules() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these by concept (at most {MAX_LINES} lines): {long}"


def test_no_function_is_longer_than_60_lines():
    long = {}
    for p in _repo_modules():
        if p.relative_to(REPO).parts[0] not in FUNCTION_DIRS:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION:
                    long[f"{p.relative_to(REPO)}:{node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION} lines (split them into named steps): {long}"


def test_one_name_for_the_data_root_variable():
    """ULTR_DATA_DIR everywhere (code, tests, docs, CI); the old ULTR_DATA spelling is gone."""
    import re
    hits = [str(p.relative_to(REPO)) for p in [*_repo_modules(), *REPO.glob("docs/*.md"), REPO / "README.md",
                                                *REPO.glob(".ci/*"), *REPO.glob("scripts/*")]
            if p.is_file() and re.search(r"ULTR_DATA(?!_DIR)", p.read_text(errors="ignore"))]
    hits = [h for h in hits if h != "tests/project/test_architecture.py"]
    assert not hits, hits


def test_experiments_take_data_from_the_data_roots():
    """No hard-coded ../shared/data path in experiments/: data sets come by name from ultr_core.data.roots."""
    hits = [p.name for p in (REPO / "experiments").glob("*.py") if '"shared"' in p.read_text()
            or "shared/data" in p.read_text()]
    assert not hits, hits


def _owner(module: str) -> str:
    """The package a dotted module belongs to: ultr_core's subpackage (or ultr_core itself), else its top name."""
    parts = module.split(".")
    return parts[1] if parts[0] == "ultr_core" and len(parts) > 2 else parts[0]


def test_nothing_private_is_borrowed_across_packages():
    """Issue #59: a page, the CLI or another package calls what a package exports, never its private helpers
    (``from ultr_core.logs.sql import _run`` was one); inside a package its modules share them."""
    borrowed = []
    files = [*(REPO / "ultr_core").rglob("*.py"), *(REPO / "pages").glob("*.py"), REPO / "app.py",
             *(REPO / "benchmarks").glob("*.py"), *(REPO / "experiments").glob("*.py")]
    for p in files:
        here = _owner(".".join(p.relative_to(REPO).with_suffix("").parts))
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("ultr_core", "pages"):
                borrowed += [f"{p.relative_to(REPO)}: {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")
                             and _owner(node.module) != here]
    assert not borrowed, borrowed


def _positional_options() -> set[str]:
    """Public functions (methods too, ``self`` and ``cls`` not counted) with more than three positional
    parameters; a ``torch.autograd.Function``'s ``forward(ctx, …)`` is exempt (its ``apply`` passes by position)."""
    found = set()
    for path in _modules():
        module = _name(path).removeprefix("ultr_core.")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                a = node.args
                pos = [x.arg for x in a.posonlyargs + a.args]
                if pos and pos[0] in ("self", "cls"):
                    pos = pos[1:]
                if len(pos) > 3 and a.vararg is None and pos[0] != "ctx":
                    found.add(f"{module}.{node.name}")
    return found


def test_options_of_public_functions_are_keyword_only():
    """A public function takes at most three parameters by position; the rest are keyword-only (``*,``), as rax and
    scikit-learn do (issue #59: "keyword-only options for every public function with more than three parameters"):
    no exception is left."""
    assert _positional_options() == set(), "make these functions' options keyword-only (*,)"
