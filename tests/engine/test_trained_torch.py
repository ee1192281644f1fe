"""The NumPy forward against the torch definition, and the training script's smoke run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine import trained
from engine.tolerance import check_close
from engine.trained import binding_task as task

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def torch_models():
    torch = pytest.importorskip("torch")
    from engine.trained.binding_torch import BindingModel

    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    golden = BindingModel.from_arrays(arrays, dtype=torch.float64)
    reference = BindingModel.from_arrays(arrays, dtype=torch.float32)
    return torch, golden, reference


def _torch_probs(torch, net, programs, ablate=()):
    ids, qpos, _ = task.encode_batch(programs)
    with torch.no_grad():
        logits = net(torch.as_tensor(ids), ablate=ablate)
    at_q = logits[torch.arange(len(programs)), torch.as_tensor(qpos)]
    return torch.softmax(at_q.double(), -1).numpy()


def test_fixed_programs_agree_under_the_tolerance_rule(torch_models):
    torch, golden, reference = torch_models
    model = trained.load("binding")
    programs = [task.parse(t) for t in model.examples.values()] + task.dataset(11, 25)
    for p in programs:
        run = model.run(p.text)
        test = np.array([run.probs[a] for a in model.answers])
        g = _torch_probs(torch, golden, [p])[0]
        r = _torch_probs(torch, reference, [p])[0]
        verdict = check_close(test, g, r)
        assert verdict.passed, (p.text, verdict)


@pytest.mark.parametrize("ablate", [(), ((0, 0),), ((1, 0),), ((1, 1),), ((0, 1), (1, 0))])
def test_every_prediction_of_a_fixed_set_agrees(torch_models, ablate):
    torch, golden, reference = torch_models
    model = trained.load("binding")
    programs = task.dataset(12, 300)
    edits = [trained.AblateHead(layer, head) for layer, head in ablate]
    probs, _ = model.forward_batch(programs, edits)
    g = _torch_probs(torch, golden, programs, ablate)
    r = _torch_probs(torch, reference, programs, ablate)
    verdict = check_close(probs, g, r)
    assert verdict.passed, verdict
    np.testing.assert_array_equal(probs.argmax(1), g.argmax(1))


def test_round_trip_of_the_weights(torch_models):
    _, _, reference = torch_models
    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    back = reference.to_arrays()
    assert set(back) == set(arrays)
    for k in arrays:
        np.testing.assert_array_equal(back[k], arrays[k])


def test_training_script_runs_a_few_steps(tmp_path):
    pytest.importorskip("torch")
    from engine.trained import train_binding

    rc = train_binding.main(
        ["--seeds", "0", "--steps", "3", "--out", str(tmp_path), "--threads", "1"]
    )
    assert rc == 0
    model = trained.BindingModel(trained.load_arrays(tmp_path / "binding.npz"))
    assert model.run("a=5; ?a").answer in model.answers
    card = json.loads((tmp_path / "binding.json").read_text())
    assert card["training"]["steps"] == 3 and card["training"]["seed"] == 0
    assert card["architecture"]["parameters"] == sum(a.size for a in model.w.values())
    assert (tmp_path / "binding.md").read_text().startswith("# ")
