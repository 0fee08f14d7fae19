"""Run the lit + FileCheck suite of ``lit_tests/`` as one pytest test."""

import os
import subprocess
import sys

import pytest

LIT_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lit_tests")


def test_lit_suite():
    pytest.importorskip("lit", reason="the lit suite needs lit (pip install lit)")
    pytest.importorskip("filecheck", reason="the lit suite needs filecheck (pip install filecheck)")
    # lit has no __main__ module; its entry point is lit.main.main. Run by this
    # interpreter, lit.cfg.py gives the tests the same xpuc (``%xpuc``)
    result = subprocess.run(
        [sys.executable, "-c", "from lit.main import main; main()", "-v", LIT_TESTS],
        check=False, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, f"lit failed:\n{result.stdout}\n{result.stderr}"
