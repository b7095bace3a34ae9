"""Declared parameter constraints (ultr_core.constraints): every configuration field is declared, and a refused
value's message names the field, the value and what is allowed."""
import pytest

from ultr_core.algorithms import TrainConfig
from ultr_core.app.playground import PlaygroundSettings
from ultr_core.constraints import Interval, Options, undeclared
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import ClickModelConfig
from ultr_core.simulation.logspec import LogSpec


@pytest.mark.parametrize("cls", [TrainConfig, ClickModelConfig, LogSpec])
def test_every_field_is_declared(cls):
    assert undeclared(cls) == []


def test_every_playground_field_is_declared_here_or_by_the_class_it_builds():
    missing = [f for f in undeclared(PlaygroundSettings) if f not in PlaygroundSettings.DELEGATED]
    assert missing == []
    built = set(ClickModelConfig.CONSTRAINTS) | set(LogSpec.CONSTRAINTS)
    names = {"contexts": "n_contexts", "blocks": "shuffle_blocks", "dataset": "dataset", "seed": "seed"}
    assert all(names.get(f, f) in built for f in PlaygroundSettings.DELEGATED)


@pytest.mark.parametrize("cls, field, value, words", [
    (TrainConfig, "lr", 0.0, "a number in (0, 10]"),
    (TrainConfig, "batch_size", 0, "a whole number from 1 to 65,536"),
    (TrainConfig, "batch_size", 2.5, "a whole number from 1 to 65,536"),
    (TrainConfig, "optimizer", "rmsprop", "one of 'adam', 'adagrad' or 'sgd'"),
    (TrainConfig, "clip_norm", -1.0, "None or a number in (0, ∞)"),
    (TrainConfig, "lbd_t", 1.0, "None or a number in [0, 1)"),
    (TrainConfig, "lr", float("nan"), "a number in (0, 10]"),
    (TrainConfig, "hidden", (64, 0), "a non-empty sequence of layer sizes"),
    (ClickModelConfig, "eta", 11.0, "a number in [0, 10]"),
    (ClickModelConfig, "topk", 0, "None or a whole number ≥ 1"),
    (ClickModelConfig, "n_contexts", 2_000_000, "a whole number from 0 to 1,000,000"),
    (ClickModelConfig, "shuffle_blocks", True, "a whole number from 1 to 100"),
    (LogSpec, "n_sessions", 0, "a whole number from 1 to 6,000,000"),
    (PlaygroundSettings, "steps", 5, "a whole number from 50 to 3,000"),
])
def test_a_refused_value_names_field_value_and_range(cls, field, value, words):
    with pytest.raises(ConfigError) as err:
        cls(**{field: value})
    assert err.value.field == field
    assert err.value.problem.startswith(f"must be {words}")
    assert err.value.problem.endswith(f"got {value!r}" if not isinstance(value, float) or value == value
                                      else "got nan")


@pytest.mark.parametrize("interval, inside, outside", [
    (Interval(float, 0, 1, closed="left"), [0, 0.5, 0.999], [1, -0.001, float("inf")]),
    (Interval(float, 0, 1, closed="right"), [1, 1e-9], [0, 1.0001]),
    (Interval(float, 0, 1, closed="neither"), [0.5], [0, 1]),
    (Interval(int, 1, None), [1, 10**12, 3.0], [0, 1.5, True]),
])
def test_interval_ends(interval, inside, outside):
    assert all(interval.accepts(v) for v in inside)
    assert not any(interval.accepts(v) for v in outside)


def test_options_refuse_unhashable_values_without_raising():
    assert not Options("a", "b").accepts(["a"])
