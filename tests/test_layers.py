"""The domain never imports the UI or the GPU stack; the CLI's start-up stays light."""

import subprocess
import sys

import pytest

DOMAIN = [
    "drill.sm2",
    "drill.session",
    "drill.stats",
    "drill.cards.loader",
    "drill.store.store",
    "drill.store.fast",
    "drill.calc.expressions",
    "drill.cards.templating",
    "drill.cards.checking",
    "drill.kernel.client",
]


def loaded_after(import_line: str) -> set[str]:
    code = f"import sys; {import_line}; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("module", DOMAIN)
def test_domain_imports_no_textual_and_no_gpu_stack(module):
    loaded = loaded_after(f"import {module}")
    assert not loaded & {"textual", "torch", "triton", "cupy"}


def test_cli_and_app_import_no_gpu_stack_and_no_sqlmodel():
    loaded = loaded_after("import drill.cli, drill.ui.app, drill.ui.review; drill.cli.build_parser()")
    assert not loaded & {"torch", "triton", "cupy", "sqlmodel", "sqlalchemy"}
