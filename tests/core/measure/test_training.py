"""--task training: forward, loss, backward and optimizer step per call, eager against compiled,
from the same start state (core.measure.training), called in-process on tiny models."""

import dataclasses

import pytest

from core.measure.training import TrainingSteps, loss_of
from core.vocab.config import CompileConfig, ModelSpec
from tests.core.helpers import MLP_MODEL, TINY_GPT2, make_spec
from tests.core.helpers import run_in_process as run


def test_mlp_training_step_compiled_with_aot_eager(write_model):
    path = write_model(MLP_MODEL, "mlp.py")
    spec = make_spec(
        path,
        backend="aot_eager",
        iters=4,
        warmup=1,
        task="training",
        optimizer="adamw",
        op_profile_calls=0,
        config=CompileConfig(backend="aot_eager", compile_optimizer=True),
    )
    outcome, result, _ = run(spec)
    assert outcome == "completed", result.failure_detail
    s = result.summary()
    assert s["task"] == "training" and s["config"].endswith("compiled optimizer")
    assert s["backward_compile_s"] is not None and s["forward_compile_s"] > 0
    assert s["accuracy"] == "pass"
    assert result.accuracy.outputs == 5  # the loss and four gradients (two weights, two biases)
    assert s["eager_peak_mb"] and s["compiled_peak_mb"]
    assert "training step" in result.model_info.description


def test_reset_restores_weights_and_optimizer_state():
    import torch

    model = torch.nn.Linear(4, 2)
    steps = TrainingSteps(model, (torch.randn(3, 4),), "adamw")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    moments = steps.optimizer.state[model.weight]["exp_avg"]
    step = steps.step(model, "eager")
    for _ in range(3):
        step(torch.randn(3, 4))
    assert not torch.equal(model.weight, before["weight"])
    steps.reset()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    assert steps.optimizer.state[model.weight]["exp_avg"] is moments  # copied in place: guards stay valid


def test_loss_is_the_models_own_when_it_returns_one():
    import torch

    x = torch.ones(2, requires_grad=True)
    assert loss_of({"loss": x.sum() * 3, "logits": x}).item() == 6
    assert loss_of((x * 2, x)).item() == pytest.approx(3)


def test_hf_causal_lm_trains_on_its_own_loss():
    spec = make_spec("hf:gpt2", backend="eager", iters=2, warmup=1, task="training", op_profile_calls=0)
    spec = dataclasses.replace(
        spec, model=ModelSpec("hf:gpt2", batch_size=2, seq_len=8, hf_class="AutoModelForCausalLM", hf_config=TINY_GPT2)
    )
    outcome, result, _ = run(spec)
    assert outcome == "completed", result.failure_detail
    assert "labels = input_ids" in result.model_info.description
    assert result.accuracy.status == "pass"
