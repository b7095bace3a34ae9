"""Issue #61, item 12: options that do nothing are refused before the log is read, ``--set`` cannot contradict a
dedicated flag, an empty estimator list is not the defaults, and a system path is never read as a side file."""
import pytest
from clihelp import refused


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("session_id,query_id,doc_id,position,click\n1,q,a,1,1\n1,q,b,2,0\n")
    return path


@pytest.mark.parametrize("args, words", [
    (["ig", "/no/such.csv", "--certainty", "0"], ["--certainty", "1 to 100", "got 0"]),
    (["ig", "/no/such.csv", "--swap-impressions", "50"], ["--swap-impressions", "applies to --certainty"]),
    (["ig", "/no/such.csv", "--objective", "mean"], ["--objective", "applies to --certainty"]),
    (["ig", "/no/such.csv", "--certainty", "2", "--swap-impressions", "0"], ["--swap-impressions", "got 0"]),
    (["train", "--set", "threads=64", "--threads", "2"], ["--set threads", "use --threads"]),
    (["train", "--set", "device=cuda"], ["--set device", "use --device"]),
    (["train", "--user-model", "pbm", "--continuation", "0.5"], ["--continuation", "PBM users draw no continuation"]),
])
def test_options_that_do_nothing_or_contradict_are_refused_by_name(capsys, args, words):
    refused(args, capsys, *words)          # /no/such.csv: the option is refused before the log is looked for


def test_an_empty_estimator_list_is_refused_not_read_as_the_defaults(capsys, log):
    refused(["evaluate", str(log), "--estimators", ","], capsys, "--estimators", "name at least one estimator")


@pytest.mark.parametrize("option, what", [("--ranking", "scores file"), ("--judgements", "judgements file")])
def test_a_system_path_is_never_read_as_a_side_file(capsys, log, option, what):
    command = "evaluate" if option == "--ranking" else "click-models"
    err = refused([command, str(log), option, "/proc/self/environ"], capsys, option, f"cannot be read as a {what}")
    assert "PATH=" not in err and "HOME" not in err
