"""A GGUF file the lab cannot run is refused with a ValueError that names the file and the
problem, before anything is dequantised; Llama 3's rope factors are applied as transformers'
Llama applies its scaled frequencies."""

from __future__ import annotations

import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

import gguf  # noqa: E402
import numpy as np  # noqa: E402

from engine.tolerance import check_close  # noqa: E402
from engine.trained.gguf_model import load_file  # noqa: E402
from engine.trained.gguf_weights import ModelFile  # noqa: E402
from engine.trained.random_gguf import write_random  # noqa: E402


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return write_random(tmp_path_factory.mktemp("good") / "good.gguf", "llama")


def _refused(path, **options) -> str:
    with pytest.raises(ValueError) as caught:
        load_file(path, name="x", **options)
    assert str(caught.value).startswith(f"{path.name}: "), caught.value
    return str(caught.value)


@pytest.mark.parametrize("keep", [0.0001, 0.05, 0.5, 0.9999])
def test_a_truncated_file_is_refused_by_name(good, tmp_path, keep):
    cut = tmp_path / "cut.gguf"
    data = good.read_bytes()
    cut.write_bytes(data[: int(len(data) * keep)])
    assert "not a complete GGUF file" in _refused(cut)


def test_a_file_that_is_not_gguf_is_refused_by_name(tmp_path):
    text = tmp_path / "notes.gguf"
    text.write_text("a shopping list, not a model\n" * 20, encoding="utf-8")
    assert "GGUF magic" in _refused(text)


def test_an_architecture_the_lab_does_not_run_is_named_with_the_three_it_runs(tmp_path):
    path = tmp_path / "mamba.gguf"
    writer = gguf.GGUFWriter(str(path), "mamba")
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    message = _refused(path)
    assert "'mamba'" in message and all(a in message for a in ("llama", "qwen2", "gpt2"))


def test_a_model_over_the_operators_limit_is_refused_before_it_is_read(good):
    size = ModelFile(good).float32_mb()
    assert 0.1 < size < 10
    message = _refused(good, max_mb=size / 2)
    assert "--max-model-mb" in message and "float32" in message
    assert load_file(good, name="x", max_mb=size * 1.01).n_layers == 2


def test_a_missing_file_is_named(tmp_path):
    assert "no such file" in _refused(tmp_path / "gone.gguf")


def test_rope_factors_scale_the_frequencies_as_transformers_llama_does(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    factors = np.linspace(1.0, 8.0, 8)  # d_head 16: one factor per frequency pair
    path = write_random(tmp_path / "llama3.gguf", "llama", rope_factors=factors)
    plain = write_random(tmp_path / "plain.gguf", "llama")
    ours, unscaled = load_file(path, name="l3"), load_file(plain, name="plain")
    text = "The bank approved the loan because it was safe, and then the bank"
    run = ours.run(text)

    def peer(dtype):
        # transformers does not read rope_freqs from a GGUF: give its rotary table the scaled
        # frequencies by hand, the way its Llama 3 rope type computes them.
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(tmp_path), gguf_file=path.name, dtype=dtype
        ).eval()
        rotary = model.model.rotary_emb
        rotary.inv_freq = rotary.inv_freq / torch.as_tensor(factors, dtype=rotary.inv_freq.dtype)
        return model(torch.tensor([list(run.ids)])).logits[0, -1].detach().numpy()

    assert check_close(run.logits, peer(torch.float64), peer(torch.float32)).passed
    assert not np.allclose(run.logits, unscaled.run(text).logits, atol=1e-3)


def test_a_tokenizer_the_lab_cannot_rebuild_is_refused_by_name(tmp_path):
    path = tmp_path / "wordpiece.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_block_count(1)
    writer.add_context_length(8)
    writer.add_embedding_length(4)
    writer.add_feed_forward_length(16)
    writer.add_head_count(1)
    writer.add_layer_norm_eps(1e-5)
    writer.add_tokenizer_model("bert")
    writer.add_token_list(["[UNK]", "a", "b"])
    writer.add_tensor("token_embd.weight", np.zeros((3, 4), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    message = _refused(path)
    assert "'bert'" in message
