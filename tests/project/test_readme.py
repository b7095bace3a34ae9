"""The front door's examples run verbatim from another directory: docs/cli.md's library block and every
command-line example, README's "check my own log" lines (with small stand-ins for the user's own files), and every
study command README and docs/index.md list."""
import gzip
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
CLI_DOC = (ROOT / "docs" / "cli.md").read_text()
INDEX = (ROOT / "docs" / "index.md").read_text()


def _blocks(lang: str, text: str = CLI_DOC) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}          # as if installed: importable from anywhere


@pytest.mark.slow
def test_readme_library_example_runs_from_another_directory(tmp_path):
    code = _blocks("python")[0]
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ndcg@10" in r.stdout and "n_components" in r.stdout


@pytest.mark.slow
def test_readme_command_lines_run_verbatim_in_order(tmp_path, monkeypatch, capsys):
    """Every ``python -m ultr_core …`` line of docs/cli.md's bash block, in order, in one directory (each
    reads what an earlier one wrote).  They run through the same ``main`` that ``python -m ultr_core`` calls,
    in this process: ten fresh interpreters paid ≈ 15 CPU-s of imports (torch among them) before the first
    line of work (#33); the module entry itself is run as a process by
    ``test_cli_help_shows_defaults_and_set_keys``."""
    from ultr_core.__main__ import main
    (tmp_path / "logs").mkdir()
    for i in range(2):
        rows = "".join(f"q{q},d{(q + p + i) % 7},{p},{int((q + p) % 3 == 0)}\n" for q in range(30) for p in (1, 2, 3))
        (tmp_path / "logs" / f"part-{i}.csv.gz").write_bytes(
            gzip.compress(("query_id,doc_id,position,click\n" + rows).encode()))
    (tmp_path / "clara2_log").write_text("7\t0\tQ\t100\t1\t11\t12\t\t\n7\t5\tC\t12\t\t\t\n8\t0\tQ\t100\t1\t12\t11\n")
    cli = [ln for ln in _blocks("bash")[0].splitlines() if ln.startswith("python -m ultr_core")]
    assert len(cli) == 10
    monkeypatch.chdir(tmp_path)
    for line in cli:
        argv = shlex.split(line)
        assert argv[:3] == ["python", "-m", "ultr_core"], line
        rc = main(argv[3:])
        out = capsys.readouterr()
        assert rc == 0, f"{line}\n{out.err[-2000:]}"
        assert "Traceback" not in out.err and out.out.strip(), line


def test_cli_help_shows_defaults_and_set_keys():
    r = subprocess.run([sys.executable, "-m", "ultr_core", "train", "--help"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0 and "(default: 20000)" in r.stdout and "lbd_lambda" in r.stdout


def test_cli_help_states_each_default_once(capsys):
    """No command's --help appends "(default: None)" or a second default to a help that states its own (the
    formatter appended argparse's after "(default: sniffed)")."""
    from ultr_core.__main__ import main
    for command in ("ig", "ig-fit", "simulate", "train", "rankers", "evaluate", "click-models"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "(default: None)" not in text and "(default: False)" not in text, command
        assert not re.search(r"\(default:[^)]*\) \(default:", text), command
        assert "(default: sniffed)" in text or command not in ("evaluate", "click-models"), command


def test_readme_study_commands_name_existing_scripts_and_flags():
    """Every `python experiments/….py --flag` README and docs/index.md list is a script that accepts that flag."""
    cmds = re.findall(r"`python (experiments/\w+\.py)([^`]*)`", INDEX)
    cmds += re.findall(r"^python (experiments/\w+\.py)([^#\n]*)", README, flags=re.M)
    assert len(cmds) >= 10
    flags: dict[str, set] = {}
    for script, rest in cmds:
        flags.setdefault(script, set()).update(re.findall(r"--[a-z][a-z0-9-]*", rest))
    for script, wanted in flags.items():
        assert (ROOT / script).exists(), script
        out = _script_help(ROOT / script)
        missing = [f for f in wanted if not re.search(re.escape(f) + r"(?![a-z0-9-])", out)]
        assert not missing, f"{script} does not accept {missing}"


def _script_help(path: Path) -> str:
    """``python <script> --help``'s output, run in this process as ``__main__`` (argparse prints the help
    and exits 0): the same code a shell runs, without a fresh interpreter's imports for each script (#33)."""
    import contextlib
    import io
    import runpy
    old_argv, old_path = sys.argv, list(sys.path)
    buf = io.StringIO()
    try:
        sys.argv = [str(path), "--help"]
        sys.path.insert(0, str(path.parent))              # what `python <script>` puts first on the path
        with contextlib.redirect_stdout(buf), pytest.raises(SystemExit) as done:
            runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = old_argv, old_path
    assert done.value.code in (0, None), f"{path.name} --help exited with {done.value.code}"
    return buf.getvalue()


def test_heatmap_page_quotes_the_quick_grid_study_it_cites():
    """The Heat-maps page quotes how often one seed of its quick grid picks Table 3's cell; the numbers
    must be the ones docs/results/lbd_study_fig4_quick.md (``lbd_study.py --figure fig4_quick``) measured."""
    import re
    doc = (ROOT / "docs" / "results" / "lbd_study_fig4_quick.md").read_text()
    hits = re.findall(r"\| (\d) of 5 \|", doc)                       # the 'one seed picks it' column, η_c = 0, 0.3, 0.6
    page = (ROOT / "pages" / "heatmaps.py").read_text()
    assert len(hits) == 3 and f"picked Table 3's cell {hits[0]}, {hits[1]} and {hits[2]} times in 5" in page


@pytest.mark.slow
def test_readme_own_log_lines_run_verbatim(tmp_path, monkeypatch, capsys):
    """README's "check my own log" lines, verbatim, on a small seeded log with judgements and a scores file."""
    import numpy as np

    from ultr_core.__main__ import main
    rng = np.random.default_rng(0)
    rows, qrels, scores = [], [], []
    for q in range(40):
        for d in range(8):
            qrels.append(f"q{q} 0 d{d} {d % 3}")
            scores.append(f"q{q},d{d},{d * 0.5}")
    for s, q in enumerate(rng.permutation(np.repeat(np.arange(40), 25))):     # sessions in time order, queries mixed
        shown = rng.permutation(8)[:5]
        rows += [f"{s},q{q},d{d},{p},{int(rng.random() < (d % 3 + 1) / (3 * p))}" for p, d in enumerate(shown, 1)]
    (tmp_path / "my_log.csv").write_text("session_id,query_id,doc_id,position,click\n" + "\n".join(rows) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "scores.csv").write_text("query_id,doc_id,score\n" + "\n".join(scores) + "\n")
    lines = [ln.split("#")[0].strip() for ln in _blocks("bash", README)[1].splitlines()
             if ln.startswith("python -m ultr_core")]
    assert len(lines) == 3
    monkeypatch.chdir(tmp_path)
    for line in lines:
        rc = main(shlex.split(line)[3:])
        out = capsys.readouterr()
        assert rc == 0, f"{line}\n{out.err[-2000:]}"
        assert "Traceback" not in out.err and out.out.strip(), line
