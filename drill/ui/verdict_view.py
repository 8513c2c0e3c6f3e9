"""A judge's verdict as text: one line for the answer panel, the full panel beside the editor."""

from __future__ import annotations

from rich.text import Text

from drill.kernel.verdict import Verdict, collective_figures


def one_line(v: Verdict) -> str:
    if v.compiled is False:
        return "did not compile"
    words = {True: "correct", False: "wrong", None: "correctness not checked"}[v.correct]
    if v.timing is not None and v.timing.collective and v.vs_torch is not None:
        return words + f", {v.vs_torch:.2f}× {v.timing.baseline}'s bus bandwidth at {v.timing.name}"
    if v.pct_of_ceiling is not None and v.timing is not None:
        words += f", {v.pct_of_ceiling:.0f} % of the {v.timing.ceiling_name} ceiling"
    if v.vs_torch is not None:
        words += f", {v.vs_torch:.2f}× PyTorch"
    return words


OUTCOME = {True: ("\ncorrect\n", "bold green"), False: ("\nWRONG\n", "bold red")}


def head_style(v: Verdict) -> str:
    if v.compiled is False or v.correct is False:
        return "bold red"
    return "bold green" if v.correct else "bold yellow"


def render_verdict(v: Verdict, source: str, target_pct: float, suggested: int | None, *, held: bool = False) -> Text:
    """The verdict panel: compiler output, cases, figures, what was not checked, the grade it suggests (`held`:
    a mock's question, whose grade is not shown until the mock ends)."""
    out = Text()
    lines = source.splitlines()
    # the outcome first, where a short pane shows it; the evidence for it below
    notes = list(v.not_checked)
    words = one_line(v)
    if v.correct is None and v.compiled is not False and notes:
        words = f"not checked: {notes.pop(0)}"  # the judge's reason says what was not checked: said once
    head = words + (f" · suggested grade {suggested}" if suggested is not None and not held else "")
    out.append(head + "\n", style=head_style(v))
    out.append(f"{v.device or 'judge'}\n", style="dim")
    if v.compiled:  # "did not compile" is the head line
        secs = f" in {v.compile_seconds * 1000:.0f} ms" if v.compile_seconds else ""
        out.append(f"compiled{secs}\n", style="green")
    for m in v.messages:
        line = m.get("line") or 0
        where = "file"
        if line:
            where = f"line {line}" + (f":{m['column']}" if m.get("column") else "")
        style = "red" if m.get("severity") == "error" else "yellow"
        out.append(f"{where}: {m.get('severity')}: {m.get('message')}\n", style=style)
        if line and 0 < line <= len(lines):
            out.append(f"    {lines[line - 1].strip()}\n", style="dim")
    for r in v.resources:
        spills = r.get("spill_store_bytes") or r.get("spill_load_bytes")
        out.append(
            f"{r.get('name')}: {r.get('registers', 0)} regs · {r.get('shared_bytes', 0)} B shared · {r.get('stack_bytes', 0)} B stack"
            + (f" · SPILLS {r.get('spill_store_bytes', 0)}/{r.get('spill_load_bytes', 0)} B" if spills else "")
            + "\n",
            style="red" if spills else "",
        )
    if v.cases:
        out.append("\n")
    for c in v.cases:
        out.append("✓ " if c.ok else "✗ ", style="green" if c.ok else "bold red")
        out.append(c.name)
        if c.message:
            out.append(f"  {c.message}", style="red")
        out.append("\n")
    if v.correct is not None and v.compiled is not False:  # over the figures; "not checked" is the head's alone
        out.append(*OUTCOME[v.correct])
    for t in v.timings:
        if t.collective:
            out.append(f"{t.name}: {collective_figures(t)}\n", style="bold" if t is v.timing else "")
            continue
        rate = f"{t.tflops:,.0f} TFLOPS · " if t.tflops is not None else ""
        out.append(f"{t.name}: {t.ms:.3f} ms · {rate}{t.gbps:,.0f} GB/s")
        if t.pct_of_ceiling is not None:
            out.append(f" · {t.pct_of_ceiling:.1f} % of {t.ceiling_figure}", style="bold")
        if t.vs_torch is not None:
            out.append(f" · {t.vs_torch:.2f}× PyTorch")
        out.append("\n")
    for ev in v.evidence:
        style = {True: "dim", False: "bold red", None: "yellow"}[ev.ok]
        out.append(ev.line() + (f": {ev.refused}" if ev.ok is False and ev.refused else "") + "\n", style=style)
    for e in v.errors:
        out.append(f"error: {e}\n", style="red")
    for n in notes:
        out.append(f"not checked: {n}\n", style="yellow")
    out.append(f"\ntarget {target_pct:g} %", style="bold")
    if held:
        out.append(" · the grade is held until the mock ends")
    elif suggested is None:  # the head line gave the grade when there is one
        out.append(" · no suggested grade: reveal the reference and grade yourself")
    out.append("\n")
    return out
