"""How the judge puts a fault into words, and finds the learner's line in it."""

import ast

import pytest

from drill.judge.judging import describe_fault
from drill.judge.programs import learner_line


def fault(class_name: str, message: str) -> Exception:
    return type(class_name, (RuntimeError,), {})(message)


@pytest.mark.parametrize(
    "exc, kind, words",
    [
        (
            fault(
                "AcceleratorError",
                "CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported",
            ),
            "cuda",
            "an illegal memory access",
        ),
        (
            fault("CUDADriverError", "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"),
            "cuda",
            "an illegal memory access",
        ),
        (fault("CUDADriverError", "CUDA_ERROR_MISALIGNED_ADDRESS: misaligned address"), "cuda", "misaligned address"),
        (
            fault("CUDADriverError", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch"),
            "launch",
            "too many resources",
        ),
        (
            fault("CUDADriverError", "CUDA_ERROR_INVALID_VALUE: invalid argument"),
            "launch",
            "invalid launch configuration",
        ),
        (fault("AcceleratorError", "CUDA error: unspecified launch failure"), "cuda", "the kernel crashed"),
        (fault("OutOfMemoryError", "CUDA out of memory. Tried to allocate 16384.00 GiB"), "oom", "out of GPU memory"),
        (ValueError("shapes do not match"), "runtime", "ValueError: shapes do not match"),
        (fault("RuntimeError", "a message that mentions cuda and an error"), "runtime", "RuntimeError: a message"),
    ],
)
def test_describe_fault(exc, kind, words):
    got_kind, got_words = describe_fault(exc)
    assert got_kind == kind
    assert words in got_words
    assert "\n" not in got_words  # one line: the asynchronous-report boilerplate is dropped


class CompilationError(Exception):
    """Shaped like triton.compiler.errors.CompilationError: the jitted function's source and an AST node."""

    def __init__(self, src, node, error_message):
        super().__init__(f"at {node.lineno}:{node.col_offset}:")
        self.src, self.node, self.error_message = src, node, error_message


def test_a_triton_compile_error_is_mapped_to_the_files_line(tmp_path):
    src = "def kernel(x):\n    a = 1\n    b = tl.arange(0, 1000)\n"
    path = tmp_path / "softmax.py"
    path.write_text("import triton\n\n\n@triton.jit\n" + src)
    node = ast.parse("tl.arange(0, 1000)").body[0]
    node.lineno, node.col_offset = 3, 8
    exc = CompilationError(src, node, "arange's range must be a power of 2")
    assert learner_line(exc, path) == 7
    kind, words = describe_fault(exc)
    assert kind == "compile" and words.endswith("arange's range must be a power of 2")


def test_a_python_error_is_found_in_the_traceback(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("def f():\n    return 1 / 0\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ZeroDivisionError) as err:
        namespace["f"]()
    assert learner_line(err.value, path) == 2


def test_without_nvrtc_a_cuda_card_is_not_checked_rather_than_failed(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from drill import paths
    from drill.judge.judging import Judge
    from drill.kernel.verdict import VerdictBuilder
    from drill.kernel_shared import nvrtc

    def missing():
        raise nvrtc.NvrtcUnavailable("libnvrtc not found")

    monkeypatch.setattr(nvrtc, "load_library", missing)
    runtime = SimpleNamespace(
        gpu=False, arch="sm_90", workdir=tmp_path, device_words="CPU", cupy_missing=False, release_memory=lambda: None
    )
    job = {
        "card": "reduce",
        "language": "cuda",
        "filename": "reduce.cu",
        "harness": str(paths.kernels_dir() / "harness" / "reduce_harness.py"),
    }
    builder = VerdictBuilder("reduce")
    Judge(runtime).run(job, (paths.kernels_dir() / "reduce.cu").read_text(), "first", builder.feed)
    verdict = builder.result()
    assert builder.finished and verdict.compiled is None and verdict.correct is None
    assert verdict.errors == [] and verdict.exit_code() == 0
    assert verdict.not_checked == ["compiling, correctness and speed: libnvrtc not found"]
