"""Toy records for the one-table test (issue #45): one click model, one algorithm, one Playground knob and one page,
each added as one record in an extension module (``ULTR_EXTENSIONS=toy_records``) without touching ``ultr_core``."""
from ultr_core.algorithms.record import AlgorithmSpec
from ultr_core.app.knob import Knob
from ultr_core.app.pagespec import PageSpec
from ultr_core.clickmodels.models import DCM
from ultr_core.clickmodels.spec import ClickModelSpec
from ultr_core.logs.engines import LogEngine


class Hasty(DCM):
    """A DCM whose users rarely go on after a click (λ₁ = 0.2): a class of its own, nothing else to write."""

    DEFAULT_GAMMA = 0.2


CLICK_MODELS = (ClickModelSpec("hasty", "Hasty", Hasty, "mle", "a toy: DCM with λ₁ = 0.2", "as DCM",
                               "attractiveness", colour="#00aa55", behaviour="scan down; rarely go on after a click"),)
ALGORITHM_SPECS = (AlgorithmSpec("toy_naive", "ToyNaive", "#123456", "position", "listwise", "learners:Naive",
                                 cite="a toy: the Naive learner under another name", latex=r"\mathcal{L} = 0",
                                 playground=True),)
PAGES = (PageSpec("../tests/toy_page.py", "Toy page", ":material/star:"),)
#: a Playground knob for a simulation parameter the Playground does not show (its URL key, widget and setting)
KNOBS = (Knob("convention", "convention", str, options=("eye_tracking", "reciprocal"), label="observation curve",
              help="a toy: the observation curve's convention"),)
#: an out-of-core engine: DuckDB's functions under another key, each call counted (``ig``, ``click-models`` and
#: ``evaluate`` offer it, check it and run it through its record alone)
LOG_ENGINES = (LogEngine("toy", "toy_records:toy_counts", "toy_records:toy_sessions", "toy_records:toy_rows",
                         "a toy: DuckDB under another name"),)
CALLS = []


def toy_counts(*a, **k):
    from ultr_core.logs.ingestion import duckdb_counts
    CALLS.append("counts")
    return duckdb_counts(*a, **k)


def toy_sessions(*a, **k):
    from ultr_core.clickmodels.patterns import duckdb_sessions
    CALLS.append("sessions")
    return duckdb_sessions(*a, **k)


def toy_rows(*a, **k):
    from ultr_core.clickmodels.outofcore import duckdb_rows
    CALLS.append("rows")
    return duckdb_rows(*a, **k)
