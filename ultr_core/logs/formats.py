"""The one table of click-log formats: every place that names a format (the CLI's ``--format`` choices, the
Upload page's list and labels, the columns a text format yields, the document key it means by default, the
sniffing rule and the message for a file no reader accepts) derives from :data:`LOG_FORMATS`.

Adding a format is one :class:`LogFormat` record here plus its reader (a function ``reader(con, name) -> dict``
that builds the DuckDB view ``norm``; see :mod:`ultr_core.logs.normalise`), named by ``"module:function"`` so
this table sits before the readers in the order a log passes.  ``tests/logs/test_formats.py`` fails when a record is
incomplete or a reader is missing.

>>> [f.name for f in LOG_FORMATS]
['csv', 'tsv', 'parquet', 'yandex', 'yandex2013', 'baidu', 'pyclick', 'ultra']
>>> FORMATS_BY_NAME["pyclick"].label
'PyClick sessions'
>>> sniff_rule(["q1", "a,b : a;"], ["q1\\ta,b : a;"])
'pyclick'
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ultr_core.constraints import Interval, Options, Rule, validate
from ultr_core.errors import ConfigError

__all__ = ["LogFormat", "LOG_FORMATS", "FORMATS_BY_NAME", "FORMAT_NAMES", "TEXT_FORMATS", "TABULAR_FORMATS",
           "BAIDU_COLUMNS", "accepted", "sniff_rule", "NORMALISED"]

#: the columns every format's normalised view starts with (one row per displayed document)
NORMALISED = ("session_id", "query_id", "doc_id", "position", "click")
#: Baidu-ULTR display features kept as numeric columns (field index of the 32-field document line)
BAIDU_COLUMNS = {"multimedia_type": 5, "serp_height": 10, "displayed_time": 11, "displayed_count": 14,
                 "slipoff_count_after_click": 16, "dwelling_time": 17}
_PYCLICK = re.compile(r"^[^\t]+\t[^\t:;]+:[^\t:]*(;|$)")


def _yandex2013(f, lines) -> bool:
    if len(f) >= 4 and f[1] == "M":
        return True
    return len(f) >= 4 and ((f[2] in ("Q", "T") and len(f) > 6 and "," in f[6])
                            or (f[2] == "C" and len([x for x in f if x]) == 5))


@dataclass(frozen=True)
class LogFormat:
    """One click-log format.  ``kind``: ``tabular`` (a header row, columns mapped by the user), ``text`` (a
    reader builds the normalised view) or ``folder`` (an ULTRA directory, or a zip / tar.gz of one)."""

    name: str
    label: str                      # what the Upload page shows
    kind: str
    accepted: str                   # one phrase for the message on a file no reader accepts
    columns: tuple = NORMALISED     # what the normalised view holds (text formats); tabular: the file's own
    document: str = "query"         # the default document key: (query, doc_id) pair, or "global"
    reader: str = ""                # "module:function" building the view ``norm`` (text formats)
    extensions: tuple = ()          # file-name endings that tell the format (".gz" may follow)
    sniff: Callable | None = None   # (tab-split fields of the first line, first lines) -> bool
    priority: int = 0               # sniffing order: a more specific rule first (a WSCD 2013 line looks like 2011)
    help: str = ""                  # one Markdown sentence for the Upload page's "Accepted formats"

    CONSTRAINTS = {
        "name": [Rule(lambda n: isinstance(n, str) and n.isidentifier(), "an identifier")],
        "label": [Rule(lambda s: isinstance(s, str) and s, "a label")], "kind": [Options("tabular", "text", "folder")],
        "accepted": [Rule(lambda s: isinstance(s, str) and s, "a phrase")],
        "columns": [Rule(lambda c: isinstance(c, tuple), "a tuple of columns")],
        "document": [Options("query", "global")],
        "reader": [Rule(lambda r: isinstance(r, str) and (r == "" or r.count(":") == 1), "'' or 'module:function'")],
        "extensions": [Rule(lambda e: isinstance(e, tuple) and all(x.startswith(".") for x in e), "'.ext' endings")],
        "sniff": [None, Rule(callable, "a function (fields, lines) -> bool")],
        "priority": [Interval(int, 0, 100)],
        "help": [Rule(lambda s: isinstance(s, str) and s.strip() != "", "its help sentence (every format has one)")],
    }

    def __post_init__(self):
        validate(self, where=f"log format {self.name!r}")
        if self.kind == "text" and (not self.reader or self.sniff is None):
            raise ConfigError(f"log format {self.name!r}.reader", "a text format needs a reader and a sniffing rule")


LOG_FORMATS = (
    LogFormat("csv", "CSV", "tabular", "CSV/TSV with a header row (query_id, doc_id, position, click …)",
              columns=(), extensions=(".csv",),
              help="one row per displayed document with columns for the query, the document (or feature columns "
                   "that identify it), the 1-based position and the click (0/1); optional session id and shown flag. "
                   "Any other column can serve as a bias factor (e.g. a vertical or device type)."),
    LogFormat("tsv", "TSV", "tabular", "TSV with a header row", columns=(), extensions=(".tsv",),
              help="as CSV, tab-separated."),
    LogFormat("parquet", "Parquet", "tabular", "Parquet", columns=(), extensions=(".parquet", ".pq"),
              help="as CSV; read with its footer and dictionaries sized first."),
    LogFormat("yandex", "Yandex relevance prediction (2011)", "text",
              "Yandex relevance prediction (SessionID TimePassed Q|C …)", reader="ultr_core.logs.yandex:_yandex",
              sniff=lambda f, lines: len(f) >= 4 and f[2] in ("Q", "T", "C"), priority=1,
              help="as NAVER's CLARA2 and click-model libraries use it; tab-separated, padded rows fine: query rows "
                   "`SessionID TimePassed Q QueryID RegionID URL1 … URLn`, click rows `SessionID TimePassed C URLID`."),
    LogFormat("yandex2013", "Yandex WSCD 2013", "text", "Yandex WSCD 2013 (SessionID M Day USERID …)",
              columns=NORMALISED + ("domain",), reader="ultr_core.logs.yandex:_yandex2013", sniff=_yandex2013,
              help="the personalized-search log: `M`, `Q`/`T` and `C` records; each URL's domain becomes a column."),
    LogFormat("baidu", "Baidu-ULTR sessions", "text", "Baidu-ULTR sessions (qid line, 32-field document lines)",
              columns=NORMALISED + tuple(BAIDU_COLUMNS), reader="ultr_core.logs.sessions:_baidu",
              sniff=lambda f, lines: len(lines) > 1 and len(f) <= 3 and len(lines[1].split("\t")) >= 28, priority=2,
              help="raw sessions: query lines and 32-field document lines; display features (`multimedia_type`, "
                   "`serp_height`, `displayed_time`, …) become columns usable as bias factors."),
    LogFormat("pyclick", "PyClick sessions", "text", "PyClick sessions (query<TAB>url,url,… : clicked,…;)",
              reader="ultr_core.logs.sessions:_pyclick", sniff=lambda f, lines: bool(_PYCLICK.match(lines[0])),
              priority=3, help="the Yandex WSCD samples of PyClick: `query<TAB>url,url,… : clicked,…;`."),
    LogFormat("ultra", "ULTRA folder (zip / tar.gz)", "folder",
              "an ULTRA folder (train/train.init_list, train.feature)", document="global",
              help="one `.zip` or `.tar.gz`, or its files dropped together (`train/train.init_list`, "
                   "`train/train.feature`, optional `train.clicks`, `train.labels`; `valid/` and `test/` are not "
                   "needed) — e.g. the identifiability paper's `dataset_fully_simulation/K=2` folder zipped."),
)
FORMATS_BY_NAME = {f.name: f for f in LOG_FORMATS}
FORMAT_NAMES = tuple(FORMATS_BY_NAME)
TEXT_FORMATS = tuple(f.name for f in LOG_FORMATS if f.kind == "text")
TABULAR_FORMATS = tuple(f.name for f in LOG_FORMATS if f.kind == "tabular")


def accepted() -> str:
    """The formats a reader accepts, for the message on a file that none accepts (csv and tsv as one)."""
    return "; ".join(f.accepted for f in LOG_FORMATS if f.name != "tsv")


def sniff_rule(fields: list[str], lines: list[str]) -> str | None:
    """The text format whose rule matches the first line's tab-split ``fields`` (and the first ``lines``)."""
    for f in sorted((f for f in LOG_FORMATS if f.sniff is not None), key=lambda f: f.priority):
        if f.sniff(fields, lines):
            return f.name
    return None
