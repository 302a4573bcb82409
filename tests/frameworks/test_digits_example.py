"""examples/digits_fp8.py: one epoch on scikit-learn's digits in PyTorch with FP8 layers,
every step's outputs and gradients replayed bit for bit by NumPy softfp8.nn.Linear twins
(the example raises on the first differing element)."""
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("digits_fp8", ROOT / "examples" / "digits_fp8.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)


@pytest.mark.parametrize("recipe", ["delayed", "nvfp4"])
def test_one_epoch_replayed(recipe):
    r8, r32, elements = ex.run(recipe, epochs=1, seed=0)
    # 1197 training digits in batches of 64: 18 full batches and one of 45
    assert r8["steps"] == r32["steps"] == 19
    per_step = 64 * 128 + 128 + 128 * 10 + 10            # weight and bias gradients
    assert elements == 19 * per_step + (18 * 64 + 45) * 10  # + the outputs
    assert r8["accuracy"] > 0.6 and r32["accuracy"] > 0.6     # chance: 0.1


def test_seeded():
    a, b = (ex.run("delayed", epochs=1, seed=3)[0] for _ in range(2))
    assert a["loss"] == b["loss"] and a["accuracy"] == b["accuracy"]
