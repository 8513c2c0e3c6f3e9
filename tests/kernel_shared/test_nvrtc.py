"""Compiling CUDA on a machine without a GPU: errors at the learner's lines, and ptxas's resource report."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from drill import paths
from drill.kernel_shared import nvrtc

pytestmark = pytest.mark.skipif(
    not nvrtc.available(), reason="libnvrtc not installed (pip install nvidia-cuda-nvrtc-cu12)"
)

BROKEN = textwrap.dedent(
    """\
    // drill: block=256 grid=auto
    extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
    \tif (i < n)
            atomicAdd(out, x[i] * scale);
    }
    """
)


def test_compile_error_points_at_the_learners_line_and_column():
    result = nvrtc.compile_cuda(BROKEN, "reduce.cu")
    assert not result.ok
    assert result.cubin == b""
    [error] = result.errors
    assert error.line == 6
    assert BROKEN.splitlines()[5][error.column - 1 :].startswith("scale")
    assert "scale" in error.message and "undefined" in error.message
    assert str(error).startswith("line 6: error:")


def test_every_error_is_reported_with_its_own_line():
    source = 'extern "C" __global__ void k(float* y)\n{\n    y[0] = a;\n    y[1] = b\n}\n'
    result = nvrtc.compile_cuda(source, "two.cu")
    lines = sorted(m.line for m in result.errors)
    assert lines[0] == 3
    assert len(lines) >= 2 and all(line in (3, 4, 5) for line in lines)


def test_warnings_do_not_fail_the_build():
    source = 'extern "C" __global__ void k(float* y)\n{\n    int unused = 3;\n    y[0] = 1.f;\n}\n'
    result = nvrtc.compile_cuda(source, "warn.cu")
    assert result.ok and result.cubin
    assert [(m.severity, m.line) for m in result.messages] == [("warning", 3)]


def test_resource_report_of_the_bundled_kernels():
    starter = nvrtc.compile_cuda((paths.kernels_dir() / "transpose.cu").read_text(), "transpose.cu")
    answer = nvrtc.compile_cuda((paths.answers_dir() / "transpose.cu").read_text(), "transpose.cu")
    assert starter.ok and answer.ok
    [s], [a] = starter.resources, answer.resources
    assert s.name == a.name == "transpose"
    # the starter's 32 x 32 tile; the answer's 64 x 64 tile with one float of padding per row
    assert (s.shared_bytes, a.shared_bytes) == (32 * 32 * 4, 64 * 65 * 4)
    assert 0 < a.registers <= 255 and a.spill_store_bytes == 0


def test_spills_and_stack_show_in_the_report():
    # a run-time index into a local array forces it into local memory (a stack frame)
    source = textwrap.dedent(
        """\
        extern "C" __global__ void k(float* y, int j)
        {
            float local[64] = {};
            for (int i = 0; i < 256; ++i) local[(int)y[i] & 63] += y[i + 256];
            y[0] = local[j & 63];
        }
        """
    )
    [r] = nvrtc.compile_cuda(source, "stack.cu").resources
    assert r.stack_bytes >= 256


LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'alpha' for 'sm_90'
ptxas info    : Function properties for alpha
ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 3.1 ms
ptxas info    : Compiling entry function 'beta' for 'sm_90'
ptxas info    : Function properties for beta
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
"""


@pytest.mark.parametrize(
    "name, registers, smem, stack, spill_st, spill_ld, cmem, barriers",
    [("alpha", 40, 2048, 8, 4, 12, 368, 1), ("beta", 8, 0, 0, 0, 0, 360, 0)],
)
def test_parse_resources(name, registers, smem, stack, spill_st, spill_ld, cmem, barriers):
    found = {r.name: r for r in nvrtc.parse_resources(LOG)}
    r = found[name]
    assert (r.registers, r.shared_bytes, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes) == (
        registers,
        smem,
        stack,
        spill_st,
        spill_ld,
    )
    assert (r.constant_bytes, r.barriers) == (cmem, barriers)


@pytest.mark.parametrize(
    "log, expected",
    [
        ('k.cu(12): error: identifier "q" is undefined\n  q = 1;\n  ^\n', [(12, 1, "error")]),
        ('k.cu(3): warning #177-D: variable "a" was declared but never referenced\n', [(3, 0, "warning")]),
        ("other.h(9): error: bad thing\n", [(0, 0, "error")]),  # not the learner's file: no line of theirs
        ("nothing to see\n", []),
    ],
)
def test_parse_messages(log, expected):
    got = [(m.line, m.column, m.severity) for m in nvrtc.parse_messages(log, "k.cu")]
    assert got == expected


@pytest.mark.parametrize(
    "folder, name",
    [("kernels", "reduce.cu"), ("answers", "reduce.cu"), ("kernels", "transpose.cu"), ("answers", "transpose.cu")],
)
def test_the_cubin_says_what_ptxas_said(folder, name):
    # the fallback used when a compile comes back without ptxas's report
    result = nvrtc.compile_cuda((getattr(paths, f"{folder}_dir")() / name).read_text(), name)
    from_log = [(r.name, r.registers, r.shared_bytes, r.stack_bytes) for r in result.resources]
    from_elf = [(r.name, r.registers, r.shared_bytes, r.stack_bytes) for r in nvrtc.cubin_kernels(result.cubin)]
    assert from_elf == from_log and from_log


def test_each_compile_is_a_fresh_build_with_its_own_report():
    source = (paths.answers_dir() / "reduce.cu").read_text()
    first, second = nvrtc.compile_cuda(source, "r.cu"), nvrtc.compile_cuda(source, "r.cu")
    assert first.resources == second.resources and "ptxas info" in second.log


def test_builds_in_fresh_processes_keep_the_ptxas_report():
    # NVRTC 12.9+ can answer a repeated build from its cache, without ptxas's lines
    code = (
        "from drill import paths; from drill.kernel_shared import nvrtc;"
        "r = nvrtc.compile_cuda((paths.answers_dir() / 'reduce.cu').read_text(), 'reduce.cu');"
        "print(r.resources[0].report, 'ptxas info' in r.log)"
    )
    outs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        for _ in range(2)
    ]
    assert outs == [["ptxas", "True"], ["ptxas", "True"]]


def test_the_system_wide_search_runs_only_when_the_known_places_fail(monkeypatch, tmp_path):
    asked = []

    def system_search():
        asked.append(True)
        return [str(tmp_path / "libnvrtc-system.so")]

    monkeypatch.setattr(nvrtc, "_lib", None)
    monkeypatch.setattr(nvrtc, "_system_library", system_search)
    nvrtc.load_library()  # the wheel's library is found where pip put it
    assert asked == []

    monkeypatch.setattr(nvrtc, "_lib", None)
    monkeypatch.setattr(nvrtc, "_candidates", lambda: [str(tmp_path / "libnvrtc-gone.so")])
    with pytest.raises(nvrtc.NvrtcUnavailable) as caught:
        nvrtc.load_library()
    assert asked == [True]
    assert "libnvrtc-gone.so" in str(caught.value) and "libnvrtc-system.so" in str(caught.value)


def test_the_library_tried_first_is_named_with_its_builtins_and_loaded_by_neither(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = tmp_path / "libnvrtc.so.12"
    builtins = tmp_path / "libnvrtc-builtins.so.12.9"
    lib.write_bytes(b"not a library")
    builtins.write_bytes(b"not a library either")
    monkeypatch.setenv("DRILL_NVRTC", str(lib))
    assert nvrtc.first_candidate_files() == [str(lib), str(builtins)]
