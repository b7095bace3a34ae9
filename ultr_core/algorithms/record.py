"""The record of the algorithm table (:mod:`~ultr_core.algorithms.specs`), apart from the table so that an
extension module (:mod:`ultr_core.extensions`) can build records while the table is being built.  Imports without
torch."""
from __future__ import annotations

from dataclasses import dataclass, field

from ultr_core.constraints import Options, Rule, validate

__all__ = ["AlgorithmSpec", "FAMILIES", "LOSSES", "formula_lines"]

#: what an algorithm corrects: nothing (the floor and ceiling), position bias (group level), individual-level
#: observation (LBD's coupling), top-k selection bias, or biases beyond examination (trust bias, stochastic logging)
FAMILIES = ("reference", "position", "individual", "selection", "beyond")
LOSSES = ("pointwise", "pairwise", "listwise")


def formula_lines(*parts: str) -> str:
    r"""Several formulas as one display, one per line (KaTeX ``gathered``), so that none is cut off
    in a narrow column (a 1024-px projector).

    >>> formula_lines("a = 1", "b = 2")
    '\\begin{gathered}a = 1 \\\\ b = 2\\end{gathered}'
    """
    return r"\begin{gathered}" + r" \\ ".join(parts) + r"\end{gathered}"


@dataclass(frozen=True)
class AlgorithmSpec:
    """One learning algorithm: ``key`` (CLI, configs, links), ``label`` (charts and tables), ``colour`` (the same
    on every page), ``family`` (:data:`FAMILIES`), ``loss`` (:data:`LOSSES`), ``learner`` (``"module:name"`` under
    ``ultr_core.algorithms``: a learner class, or the closed-form fitter of the selection models), ``cite`` (paper
    and equation), ``latex`` (the loss it minimises), ``params`` (the :class:`TrainConfig` fields it reads) and
    ``curve`` (what its drawn observation curve is)."""

    key: str
    label: str
    colour: str
    family: str
    loss: str
    learner: str
    cite: str
    latex: str
    params: tuple = ()
    #: what its observation curve in the app is (the Playground's and Train page's observation tile draws it ÷ its
    #: position 1); required of every learner whose ``observation()`` returns a curve, empty otherwise
    curve: str = ""
    #: the method whose fitted ranker this one aggregates (RankAgg: IPS), fitted first; "" for none
    aggregates: str = ""
    #: offered by the Playground (besides the two references, which every run trains)
    playground: bool = False
    #: a paper protocol's name → the TrainConfig changes it uses for this method (the CLD study's two protocols)
    protocols: dict = field(default_factory=dict)

    CONSTRAINTS = {
        "key": [Rule(lambda k: isinstance(k, str) and k.isidentifier() and k.islower(), "a lower-case identifier")],
        "label": [Rule(lambda s: isinstance(s, str) and s, "a label")],
        "cite": [Rule(lambda s: isinstance(s, str) and s, "a citation (paper and equation)")],
        "latex": [Rule(lambda s: isinstance(s, str) and s, "the equation it implements (LaTeX)")],
        "curve": [Rule(lambda s: isinstance(s, str), "what its observation curve is, or ''")],
        "family": [Options(*FAMILIES)], "loss": [Options(*LOSSES)],
        "colour": [Rule(lambda c: isinstance(c, str) and len(c) == 7 and c[0] == "#"
                        and all(ch in "0123456789abcdefABCDEF" for ch in c[1:]), "a colour #rrggbb")],
        "learner": [Rule(lambda s: isinstance(s, str) and s.count(":") == 1, "'module:name'")],
        "params": [Rule(lambda p: isinstance(p, tuple) and all(isinstance(x, str) for x in p), "a tuple of fields")],
        "aggregates": [Rule(lambda a: isinstance(a, str), "an algorithm key or ''")],
        "playground": [Options(True, False)],
        "protocols": [Rule(lambda p: isinstance(p, dict) and all(isinstance(v, dict) for v in p.values()),
                           "protocol name → TrainConfig changes")],
    }

    @property
    def needs_topk(self) -> bool:
        """Selection-bias models need candidates below a top-k cut-off (shown = False) to learn from."""
        return self.family == "selection"

    @property
    def reference(self) -> bool:
        """A floor or ceiling (no debiasing, or the true labels) that the Playground trains beside every method."""
        return self.family == "reference"

    def __post_init__(self):
        validate(self, where=f"algorithm {self.key!r}")
