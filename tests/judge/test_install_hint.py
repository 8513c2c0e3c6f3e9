"""One line installs what kernel cards need: the judge says the line the README gives."""

from pathlib import Path

from drill.judge import runtime as judge_runtime
from drill.judge.runtime import KERNELS_INSTALL


def test_the_readme_gives_the_install_line():
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert f"`{KERNELS_INSTALL}`" in readme


def test_a_judge_without_torch_says_the_readmes_install_line(monkeypatch):
    def no_torch(self):
        raise ImportError("No module named 'torch'", name="torch")

    monkeypatch.setattr(judge_runtime, "cuda_device_count", lambda: 0)
    monkeypatch.setattr(judge_runtime.Runtime, "_import_torch", no_torch)
    runtime = judge_runtime.Runtime(None, torch_now=False)
    events: list[dict] = []
    assert runtime.ensure_torch(events.append) is False
    (note,) = [e["text"] for e in events if e.get("event") == "note"]
    assert "torch is not installed" in note and KERNELS_INSTALL in note
    assert "pip install torch triton numpy" not in note
