"""Harness for the `scan` card: the inclusive prefix sum of a float32 vector, in CUDA.

Contract with the learner's file:
    extern "C" __global__ void scan(const float* x, float* out, unsigned long long* tile_status,
                                    unsigned int* tile_counter, int n)
launched once: out[i] = x[0] + ... + x[i]. The `// drill:` line sets `block` (threads) and `items` (elements per
thread); the grid is one block per tile of block · items elements. tile_status holds one 64-bit word per tile and
tile_counter one 32-bit word, all zero before every launch: room for the tiles to pass their sums to each other.
The inputs are whole numbers, so every prefix is exact in float32 and any order of additions must give it exactly.
"""

from drill.kernel_shared.launch import block_dims

LANGUAGE = "cuda"
ENTRY = ("scan",)
LAUNCH_KEYS = ("block", "items")
ALLOWED = ()  # the launches are the file's kernels and nothing else (drill.judge.evidence.Allowance)


def cases(kit):
    sizes = (1, 31, 1023, 1024, 1025, 4096, 4097, 1_000_003, 20_000_000)
    return [{"name": f"n={n:,}", "n": n} for n in sizes]


def timing_cases(kit):
    return [{"name": "n=2^28", "n": 1 << 28}]


def bytes_moved(case):
    return 8 * case["n"]  # each element read once and its prefix written once


def bytes_written(case):
    return 4 * case["n"]


def make_inputs(case, kit):
    # whole numbers of a few units: prefixes stay below 2^24 (about 8 · sqrt(n) at 2^28), exact in float32
    return {"x": kit.randn(case["n"], scale=8.0, whole=True), "out": kit.output(case["n"]), "n": case["n"]}


def reference(inputs, kit):
    return kit.float64(inputs["x"]).cumsum(0)


def launcher(program, inputs, kit):
    decl = program.decl
    block = block_dims(decl.get("block", "256"), decl.line)
    threads = block[0] * block[1] * block[2]
    items = int(decl.get("items", "1"))
    if not 1 <= items <= 64:
        from drill.kernel_shared.launch import LaunchError

        raise LaunchError(decl.line, f"items={items}: give 1 to 64 elements per thread")
    n = inputs["n"]
    tiles = -(-n // (threads * items))
    status = kit.scratch(2 * tiles)  # 64-bit words
    counter = kit.scratch(1)
    x, out = inputs["x"], inputs["out"]

    def prepare():
        kit.zero(status)
        kit.zero(counter)

    def run():
        program.launch("scan", (tiles, 1, 1), block, kit.args(x, out, status, counter, kit.int32(n)), 0)

    return kit.Launch(run=run, result=lambda: out, prepare=prepare)


def compare(result, ref, inputs, kit):
    return kit.exact(result, ref, label="out")


def baseline(inputs, kit):  # torch's way, timed once per GPU with torch's kit
    x = inputs["x"]
    return lambda: kit.torch.cumsum(x, 0)
