"""Research scale (issue #49): the paper-scale command runs, the device and thread options, the CUDA path against
the CPU's results where a GPU exists (skipped with a reason elsewhere; nothing here requires one)."""
from __future__ import annotations

import json
import os

import pytest
from clihelp import cli, refused

TINY = ["--sessions", 200, "--set", "steps=2", "--set", "eval_every=1", "--json"]


@pytest.mark.slow
def test_paper_scale_runs_through_the_cli(capsys):
    """``--paper-scale`` crashed with "got multiple values for keyword argument 'clicks'" on every dataset."""
    rc, out, _ = cli(["train", "--paper-scale"] + TINY, capsys)
    d = json.loads(out)
    t = d["config"]["train"]
    assert rc == 0 and t["hidden"] == [512, 256, 128] and t["clicks"] == "online" and t["steps"] == 2
    assert t["device"] == "auto" and t["threads"] == min(os.cpu_count() or 1, 64)     # all cores at paper scale


@pytest.mark.slow
def test_device_and_threads_options(capsys):
    rc, out, _ = cli(["train", "--device", "cpu", "--threads", 2] + TINY, capsys)
    t = json.loads(out)["config"]["train"]
    assert rc == 0 and t["device"] == "cpu" and t["threads"] == 2
    rc, out, _ = cli(["train"] + TINY, capsys)
    t = json.loads(out)["config"]["train"]
    assert t["device"] == "cpu" and t["threads"] == 1                                # small fits: one thread
    refused(["train", "--threads", 0] + TINY, capsys, "threads")
    import torch
    if not torch.cuda.is_available():
        refused(["train", "--device", "cuda"] + TINY, capsys, "--device", "no CUDA device")


def test_the_cuda_path_gives_the_cpus_results(capsys):
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine (the GPU check runs where one is lent)")
    args = ["--sessions", 2000, "--set", "steps=100", "--set", "eval_every=50", "--json"]
    for alg in ("dla", "lbd"):
        metrics = {}
        for device in ("cpu", "cuda"):
            rc, out, _ = cli(["train", "--algorithm", alg, "--device", device] + args, capsys)
            assert rc == 0
            metrics[device] = json.loads(out)["metrics"]["ndcg@10"]
        assert metrics["cuda"] == pytest.approx(metrics["cpu"], abs=0.01), (alg, metrics)
