"""A new judge reads its requests at once and compiles its first CUDA job while torch imports."""

import io
import json
import os
import threading
import time

import pytest

from drill.judge.inbox import Inbox, compile_ahead, is_cuda_run
from drill.kernel_shared import nvrtc
from tests.conftest import stretched

pytestmark = pytest.mark.skipif(
    not nvrtc.available(), reason="libnvrtc not installed (pip install nvidia-cuda-nvrtc-cu12)"
)

SOURCE = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n'


def run_request(source=SOURCE, language="cuda", filename="mine.cu"):
    job = {"card": "reduce", "language": language, "harness": "h", "filename": filename}
    return {"op": "run", "id": 1, "job": job, "source": source, "timing": "first"}


@pytest.fixture
def cpu_arch(monkeypatch):
    monkeypatch.setenv("DRILL_JUDGE_CPU", "1")
    monkeypatch.setenv("DRILL_CUDA_ARCH", "sm_80")
    return "sm_80"


@pytest.mark.parametrize(
    "request_",
    [
        {"op": "quit"},
        {"op": "calibrate", "id": 3},
        run_request(language="triton"),
        {"op": "run", "id": 1, "job": "not a job", "source": SOURCE},
        {"op": "run", "id": 1, "job": {"language": "cuda"}, "source": 42},
        None,
        ["op", "run"],
    ],
)
def test_only_a_cuda_run_is_compiled_ahead(request_, cpu_arch):
    assert compile_ahead(request_) is None


def test_the_build_made_ahead_is_what_the_judge_gets_once(cpu_arch):
    source = SOURCE + "// once\n"
    ahead = compile_ahead(run_request(source))
    assert ahead is not None and ahead.key == (source, "mine.cu", cpu_arch)
    assert compile_ahead(run_request(source)) is None  # claimed already
    ahead.run()
    got = nvrtc.compile_cuda(source, "mine.cu", arch=cpu_arch)
    assert got is ahead.result and got.ok and got.arch == cpu_arch
    again = nvrtc.compile_cuda(source, "mine.cu", arch=cpu_arch)
    assert again is not got and again.ok  # handed over once; later builds are fresh


def test_a_judge_that_asks_before_the_build_ends_waits_for_it(cpu_arch):
    source = SOURCE + "// waits\n"
    ahead = compile_ahead(run_request(source))
    assert ahead is not None
    got = []
    asker = threading.Thread(target=lambda: got.append(nvrtc.compile_cuda(source, "mine.cu", arch=cpu_arch)))
    asker.start()
    asker.join(0.2)
    assert asker.is_alive()  # nothing to hand over yet: it waits rather than compiling again
    ahead.run()
    asker.join(30)
    assert got == [ahead.result]


def test_another_arch_or_name_is_compiled_as_asked(cpu_arch):
    source = SOURCE + "// other\n"
    ahead = compile_ahead(run_request(source))
    assert ahead is not None
    ahead.run()
    other = nvrtc.compile_cuda(source, "mine.cu", arch="sm_90")
    assert other is not ahead.result and other.arch == "sm_90"
    assert nvrtc.compile_cuda(source, "kernel.cu", arch=cpu_arch) is not ahead.result
    assert nvrtc.compile_cuda(source, "mine.cu", arch=cpu_arch) is ahead.result


def test_a_failed_build_ahead_still_reports_the_learners_error(cpu_arch):
    broken = 'extern "C" __global__ void k(float* x) { x[0] = y; }\n'
    ahead = compile_ahead(run_request(broken))
    assert ahead is not None
    ahead.run()
    got = nvrtc.compile_cuda(broken, "mine.cu", arch=cpu_arch)
    assert not got.ok and got.errors and got.errors[0].line == 1


def test_the_inbox_gives_every_line_in_order_and_ends_with_the_stream(cpu_arch):
    import json

    lines = [json.dumps(run_request(SOURCE + "// inbox\n")) + "\n", '{"op": "quit"}\n', "junk\n"]
    assert list(Inbox(io.StringIO("".join(lines)))) == lines


@pytest.mark.parametrize(
    "lines, cuda_first",
    [
        ([run_request()], True),
        ([run_request(language="triton", filename="mine.py")], False),
        ([{"op": "calibrate", "id": 1}], False),
        ([], False),
    ],
    ids=["cuda run", "triton run", "calibrate", "nothing sent"],
)
def test_the_first_request_decides_whether_torch_is_imported_at_start(cpu_arch, lines, cuda_first):
    text = "".join(json.dumps(line) + "\n" for line in lines)
    inbox = Inbox(io.StringIO(text))
    assert is_cuda_run(inbox.first_request(wait_s=2)) is cuda_first
    assert is_cuda_run(inbox.first_request(wait_s=2)) is cuda_first  # asked again: the same line, not the next
    assert [json.loads(line) for line in inbox] == lines  # the line looked at is still served, first


def test_a_judge_started_before_any_request_looks_no_longer_than_it_is_told():
    read, write = os.pipe()
    with os.fdopen(read) as stream, os.fdopen(write, "w") as sink:
        inbox = Inbox(stream)
        t0 = time.perf_counter()
        assert inbox.first_request(wait_s=0.05) is None
        assert time.perf_counter() - t0 < stretched(1.0)
        sink.write(json.dumps(run_request()) + "\n")
        sink.flush()
        assert json.loads(next(iter(inbox)))["op"] == "run"  # a request sent later is still served


def test_cupy_imported_ahead_leaves_a_judge_running_where_cupy_is_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import ahead runs beside the wait for the first request: a CuPy that fails to import must not raise
    there (the runtime's own import reports it and judges with torch)."""
    import builtins
    import sys
    import threading

    from drill.judge.__main__ import import_cupy_ahead

    real_import = builtins.__import__

    def refuse_cupy(name: str, *args: object, **kwargs: object) -> object:
        if name == "cupy":
            raise ImportError("libcuda.so.1: cannot open shared object file")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    raised: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    monkeypatch.setattr(builtins, "__import__", refuse_cupy)
    thread = import_cupy_ahead()
    thread.join(timeout=stretched(30))
    assert not thread.is_alive()
    assert raised == []
    assert "cupy" not in sys.modules
