"""A simulated click log as a short, reproducible string — what a shared link carries.

A :class:`LogSpec` names the data (by a built-in spec or a data-root *name*, never a path), the
click model, the number of sessions and the seeds; :meth:`LogSpec.simulate` rebuilds exactly the
same log.  The string form is ``DATASET/key=value/…`` with the keys of :data:`KEYS`:

>>> s = LogSpec.parse("synthetic:500/eta=1.5/topk=5/sessions=20000/seed=3")
>>> (s.dataset, s.click.eta, s.click.topk, s.n_sessions, s.seed)
('synthetic:500', 1.5, 5, 20000, 3)
>>> LogSpec.parse(s.to_string()) == s
True
>>> LogSpec.parse("synthetic/user_model=dbn/continuation=0.8").click.gamma
0.8
>>> LogSpec.parse("synthetic/user=dbn/gamma=0.8") == LogSpec.parse("synthetic/user_model=dbn/continuation=0.8")
True
>>> LogSpec.parse("synthetic/eta=99")
Traceback (most recent call last):
...
ultr_core.errors.ConfigError: eta: must be a number in [0, 10], got 99.0
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ultr_core.constraints import Rule, validate
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.params import MAX_SESSIONS, PARAM, PARAMS, resolve_name  # noqa: F401  (MAX_SESSIONS: re-exported)

__all__ = ["LogSpec", "KEYS"]

#: string key -> (field, type), a view of the schema's linked parameters; "click." fields go to the
#: ClickModelConfig (older spellings — user, gamma — are read through :func:`resolve_name`)
KEYS = {p.name: (p.field, p.kind) for p in PARAMS if p.link}
#: keys whose value may be ``none``
NONE_KEYS = tuple(p.name for p in PARAMS if p.link and p.accepts_none)


#: the most candidate documents (queries × list length) a link's built-in synthetic data set may build in the app
#: (the Simulate page's own widget stops at 5,000 queries of 10)
APP_MAX_DOCUMENTS = 250_000


@dataclass(frozen=True)
class LogSpec:
    """Everything that decides a simulated log (see the module docstring)."""

    dataset: str = "synthetic"          #: ``synthetic[:N]``, ``ig:K`` or a data-root name (``mq2008``)
    click: ClickModelConfig = field(default_factory=ClickModelConfig)
    n_sessions: int = PARAM["sessions"].default
    seed: int = PARAM["seed"].default
    data_seed: int = PARAM["data_seed"].default

    #: what the fields accept (:mod:`ultr_core.constraints`; the numbers' from the schema); the name rule is
    #: checked below
    CONSTRAINTS = {"dataset": [Rule(lambda d: isinstance(d, str), "a data set name")],
                   "click": [Rule(lambda c: isinstance(c, ClickModelConfig), "a ClickModelConfig")],
                   **{p.field: list(p.domain) for p in PARAMS if not p.on_click}}

    def __post_init__(self):
        head = self.dataset.partition(":")[0]
        if not self.dataset or "/" in self.dataset or "\\" in self.dataset or head in ("mq2008", "yahoo", "ultra") \
                and ":" in self.dataset:
            raise ConfigError("dataset", f"{self.dataset[:40]!r} is not a dataset name (paths are not accepted)")
        validate(self)

    def to_string(self) -> str:
        c, d = self.click, ClickModelConfig()
        parts = [self.dataset]
        for key, (dotted, _) in KEYS.items():
            head, _, tail = dotted.partition(".")
            value = getattr(c, tail) if head == "click" else getattr(self, dotted)
            default = getattr(d, tail) if head == "click" else getattr(LogSpec, dotted, None)
            if key in ("sessions", "seed") or value != default:
                parts.append(f"{key}={'none' if value is None else value}")
        return "/".join(parts)

    @classmethod
    def parse(cls, text: str) -> "LogSpec":
        """Read :meth:`to_string`'s form; a malformed part raises :class:`ConfigError` naming it."""
        text = str(text).strip()
        if not text or len(text) > 400:
            raise ConfigError("log", "a log spec is 'DATASET/key=value/…' (at most 400 characters)")
        dataset, *items = text.split("/")
        click, top = {}, {}
        for item in items:
            key, sep, raw = item.partition("=")
            key = resolve_name(key)
            if not sep or key not in KEYS:
                raise ConfigError("log", f"{item[:30]!r}: expected key=value with key one of {', '.join(KEYS)}")
            dotted, kind = KEYS[key]
            try:
                value = None if raw.lower() == "none" and key in NONE_KEYS else kind(raw)
            except ValueError:
                raise ConfigError(key, f"{raw[:20]!r} is not a {kind.__name__}") from None
            head, _, tail = dotted.partition(".")
            (click if head == "click" else top)[tail or head] = value
        return cls(dataset=dataset.strip(), click=ClickModelConfig(**click), **top)

    @classmethod
    def from_values(cls, dataset: str, values: dict, **click_changes) -> "LogSpec":
        """A spec from parameter values by their schema names or older spellings (CLI options, page widgets);
        those not given keep their defaults.

        >>> LogSpec.from_values("synthetic", {"eta": 2.0, "gamma": 0.5, "user": "dbn", "sessions": 100}).to_string()
        'synthetic/eta=2.0/user_model=dbn/continuation=0.5/sessions=100/seed=0'
        """
        named = {resolve_name(k): v for k, v in values.items()}
        top = {PARAM[n].attr: v for n, v in named.items() if not PARAM[n].on_click}
        return cls(dataset=dataset, click=ClickModelConfig.from_values(named, **click_changes), **top)

    def resolved_dataset(self) -> str:
        """The :func:`~ultr_core.data.sources.load_dataset` spec: built-ins as they are, names through the
        data roots (:func:`~ultr_core.data.roots.dataset_spec`)."""
        from ultr_core.data.roots import BUILTIN, dataset_spec
        if self.dataset.partition(":")[0] in BUILTIN:
            return self.dataset
        return dataset_spec(self.dataset)

    def simulate_within(self, max_rows: int):
        """(spec, dataset, simulator, log, note): the log with its sessions clamped so that it holds at most
        ``max_rows`` rows (the app's limit for every entry point: a link asking for more is corrected, and
        ``note`` says so; None when nothing changed)."""
        from ultr_core.data.sources import load_dataset
        from ultr_core.simulation.simulated import app_sessions, longest_list
        base, notes = self._within_documents()
        ds = load_dataset(base.resolved_dataset(), base.data_seed)
        list_len = max(longest_list(ds.train), 1)
        n = app_sessions(base.n_sessions, list_len, max_rows)
        spec = base
        if n < base.n_sessions:
            spec = replace(base, n_sessions=n)
            notes.append(f"sessions={base.n_sessions:,} would simulate {base.n_sessions * list_len:,} rows, above the "
                         f"app's limit of {max_rows:,}: clamped to {n:,} sessions")
        return (spec, *spec.simulate(), "; ".join(notes) or None)

    def _within_documents(self) -> tuple["LogSpec", list]:
        """The spec with a built-in synthetic data set held to :data:`APP_MAX_DOCUMENTS` candidates (a link's
        ``synthetic:N:L`` is bounded by what it builds, not only by its rows), and the note saying so."""
        kind, _, rest = self.dataset.partition(":")
        n_txt, _, l_txt = rest.partition(":")
        if kind.strip().lower() != "synthetic" or not n_txt.strip().isdigit() or (l_txt and not l_txt.isdigit()):
            return self, []                     # malformed specs are the loader's to refuse
        n, size = int(n_txt), int(l_txt or 10)
        if n * size <= APP_MAX_DOCUMENTS:
            return self, []
        fit = max(10, APP_MAX_DOCUMENTS // max(size, 1))
        data = f"synthetic:{fit}" + (f":{size}" if l_txt else "")
        return replace(self, dataset=data), [f"{self.dataset} would build {n * size:,} candidate documents, above the "
                                             f"app's limit of {APP_MAX_DOCUMENTS:,}: clamped to {data}"]

    def simulate(self):
        """(dataset, simulator, log), exactly as the Simulate page builds them."""
        from ultr_core.simulation.simulated import simulate_log
        click = self.click
        if self.dataset.startswith("ig") and click.logging != "given":
            click = replace(click, logging="given")
        return simulate_log(self.resolved_dataset(), click, n_sessions=self.n_sessions, seed=self.seed,
                            data_seed=self.data_seed)
