"""Harness for the `fused-cross-entropy` card: cross-entropy loss and its gradient over a large vocabulary, in Triton.

Contract with the learner's file:
    def cross_entropy(logits, targets, loss) -> None
logits is (rows, vocab), contiguous, 16-bit (bfloat16 on a GPU, float16 under the interpreter); targets is (rows,)
int64, every value in [0, vocab); loss is (rows,) float32. The file writes
    loss[i] = logsumexp(logits[i, :]) - logits[i, targets[i]]
and overwrites logits, in place, with the gradient of the mean loss:
    logits[i, j] <- (softmax(logits[i, :])[j] - (j == targets[i])) / rows
so nothing the size of the logits is allocated besides them: no softmax, no log-probabilities, no gradient buffer.
"""

LANGUAGE = "triton"
ENTRY = ("cross_entropy",)
# besides the file's own Triton kernels, what a call may ask torch for (drill.judge.evidence.Allowance):
# scratch buffers (per-row statistics), views, and zeroing them
ALLOWED = ("allocation", "views", "fill")
GUARD = 256  # elements past the gradient, NaN, checked after every run: the logits buffer is also an output


def _case(rows, vocab, dtype, **extra):
    label = extra.pop("label", "")
    return {"name": f"{rows}x{vocab}" + (f" {label}" if label else ""), "rows": rows, "vocab": vocab,
            "dtype": dtype, **extra}  # fmt: skip


def cases(kit):
    if kit.gpu:
        out = [_case(r, v, "bfloat16") for r, v in [(1, 1), (3, 33), (37, 1000), (5, 50257), (16, 128256), (2, 200001)]]
        big = _case(4, 5000, "bfloat16", label="large logits", scale=40.0)
    else:  # the interpreter runs every program in numpy, and has no bfloat16
        out = [_case(r, v, "float16") for r, v in [(1, 1), (3, 33), (4, 1000), (2, 9000)]]
        big = _case(3, 700, "float16", label="large logits", scale=40.0)
    # logits in the hundreds: exp overflows float32 unless the running maximum is subtracted first
    out.append(big)
    return out


def timing_cases(kit):
    return [_case(8192, 128256, "bfloat16"), _case(4096, 256000, "bfloat16"), _case(32768, 32000, "bfloat16")]


def bytes_moved(case):
    # the logits read once and the gradient written once over them; targets read, loss written
    return 2 * 2 * case["rows"] * case["vocab"] + 12 * case["rows"]


def bytes_written(case):
    return 2 * case["rows"] * case["vocab"] + 4 * case["rows"]


def make_inputs(case, kit):
    torch = kit.torch
    rows = case["rows"]
    vocab = case["vocab"]
    dt = getattr(torch, case["dtype"])
    n = rows * vocab
    work = kit.randn(n + GUARD, dtype=dt)
    work[n:].fill_(float("nan"))
    return {
        "fresh": kit.randn(rows, vocab, scale=case.get("scale", 1.0), dtype=dt),
        "targets": torch.randint(0, vocab, (rows,), generator=kit.generator, device=kit.device),
        "logits": work[:n].view(rows, vocab),
        "guard": work[n:],
        "loss": kit.output(rows),
    }


def reference(inputs, kit):
    torch = kit.torch
    x = inputs["fresh"].double()
    rows = x.shape[0]
    targets = inputs["targets"]
    lse = torch.logsumexp(x, dim=1)
    grad = torch.softmax(x, dim=1)
    grad[torch.arange(rows, device=x.device), targets] -= 1.0
    return {"loss": lse - x.gather(1, targets[:, None])[:, 0], "grad": grad / rows}


def launcher(program, inputs, kit):
    logits = inputs["logits"]
    targets = inputs["targets"]
    loss = inputs["loss"]
    fresh = inputs["fresh"]
    return kit.Launch(
        run=lambda: program.module.cross_entropy(logits, targets, loss),
        result=lambda: {"loss": loss, "grad": logits},
        prepare=lambda: logits.copy_(fresh),  # the logits again before every run: the last one overwrote them
    )


def compare(result, ref, inputs, kit):
    torch = kit.torch
    if not bool(torch.isnan(inputs["guard"]).all()):
        return kit.Check(False, f"wrote past the end of the logits (the {GUARD} elements after them changed)")
    # loss: a float32 sum of vocab exponentials, then one subtraction
    check = kit.allclose(result["loss"], ref["loss"], rtol=1e-4, atol=1e-4, label="loss")
    if not check.ok:
        return check
    # the gradient is rounded to 16 bits once (2^-8 relative in bfloat16); the smallest probabilities are far below
    # any fixed tolerance, so each element is checked against its own size, down to 10^-3 of an average one
    rows, vocab = ref["grad"].shape
    return kit.allclose(result["grad"], ref["grad"], rtol=1e-2, atol=1e-3 / (rows * vocab), label="grad")


def baseline(inputs, kit):
    torch = kit.torch
    x = inputs["fresh"].detach().clone().requires_grad_()
    targets = inputs["targets"]

    def forward_backward():  # what a training step runs: the mean loss, then autograd's backward through it
        x.grad = None
        torch.nn.functional.cross_entropy(x, targets).backward()
        return x.grad

    return forward_backward
