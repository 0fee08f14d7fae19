"""The conformance harness (tests/conformance) on a few of Numba's prange tests
whose outcome is known: it routes them through xpuc, classifies them, and
writes its report."""

import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# Array writes (with an if/elif body, on a strided view) that xpuc offloads.
PASSING = [f"TestPrangeBasic.test_prange{n}" for n in ("01", "02", "04", "22", "23")]
# Writes arrays into a Python list in a parfor, which a kernel cannot hold.
REFUSED = "TestPrangeBasic.test_prange25"


def test_harness_classifies_known_outcomes(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "tests.conformance.run", "--classes", "TestPrangeBasic",
               "--jobs", "2", "--out", str(tmp_path)]
    for pattern in [*PASSING, REFUSED]:
        command += ["-k", pattern]
    run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=240)
    assert (tmp_path / "conformance.json").exists(), run.stdout + run.stderr
    report = json.loads((tmp_path / "conformance.json").read_text())
    classes = {test["test"]: test["class"] for test in report["tests"]}
    assert classes == {**dict.fromkeys(PASSING, "pass"), REFUSED: "refusal"}, (
        run.stdout + run.stderr
    )
    assert report["counts"]["other"] == 0
    assert run.returncode == 0, run.stdout + run.stderr
    categories = {test["test"]: test["category"] for test in report["tests"]}
    assert "of type list(array(float64" in categories[REFUSED]
    assert "| refusal | 1 |" in (tmp_path / "conformance.md").read_text()
