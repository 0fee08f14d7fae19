"""Run Numba's parfor tests (numba.tests.test_parfors) through xpuc and report
how each fares: pass, refusal, no_parfor, other (see outcome.CLASSES).

    python -m tests.conformance.run [--classes C ...] [-k PATTERN] [--jobs N] [--out DIR]

from the repository root. Each test runs in its own worker process, at most
``--jobs`` at a time, each stopped after ``--timeout`` seconds. The report is
written to DIR/conformance.json and DIR/conformance.md. The exit status is 1
when any test lands in "other", 0 otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numba
import numba.tests.test_parfors as parfor_tests

from . import report
from .outcome import classify

REPO_ROOT = Path(__file__).resolve().parents[2]
# Runs whole test classes in Numba subprocesses of its own, out of our reach.
NOT_RUN = {"TestParforsRunner"}
OUTPUT_TAIL_CHARS = 3000


def test_classes() -> dict[str, type[unittest.TestCase]]:
    """The test classes of numba.tests.test_parfors that have tests."""
    loader = unittest.TestLoader()
    return {
        name: value
        for name, value in vars(parfor_tests).items()
        if isinstance(value, type)
        and issubclass(value, unittest.TestCase)
        and value.__module__ == parfor_tests.__name__
        and name not in NOT_RUN
        and loader.getTestCaseNames(value)
    }


def select(classes: list[str], patterns: list[str]) -> list[str]:
    """``Class.test_name`` of every test of ``classes`` whose id contains one
    of ``patterns`` (all tests when there are none)."""
    loader = unittest.TestLoader()
    known = test_classes()
    return [
        f"{name}.{test}"
        for name in classes
        for test in loader.getTestCaseNames(known[name])
        if not patterns or any(p in f"{name}.{test}" for p in patterns)
    ]


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return str(-returncode)


def run_one(test_id: str, device: str, timeout: float) -> dict[str, Any]:
    """The worker's record for ``test_id``, or one that says how it died."""
    with tempfile.TemporaryDirectory(prefix="xpuc-conformance-") as scratch:
        result_path = Path(scratch) / "result.json"
        command = [sys.executable, "-m", "tests.conformance.worker", test_id,
                   "--device", device, "--result", str(result_path)]
        start = time.perf_counter()
        # its own session, so that a timeout ends the worker's children too
        worker = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            output, _ = worker.communicate(timeout=timeout)
            crash = None
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            output, _ = worker.communicate()
            crash = f"timeout after {timeout:g} s"
        seconds = round(time.perf_counter() - start, 3)
        if crash is None and result_path.exists():
            record = json.loads(result_path.read_text())
            record["wall_seconds"] = seconds
            return record
        if crash is None:
            crash = (f"crash: signal {_signal_name(worker.returncode)}" if worker.returncode < 0
                     else f"crash: exit status {worker.returncode}")
        return {"test": test_id, "crash": crash, "wall_seconds": seconds,
                "output_tail": output[-OUTPUT_TAIL_CHARS:]}


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    try:
        commit = git("rev-parse", "--short", "HEAD")
        return commit + (" (modified)" if git("status", "--porcelain", "compiler") else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    known = test_classes()
    parser = argparse.ArgumentParser(
        prog="python -m tests.conformance.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--classes", nargs="+", choices=sorted(known), metavar="CLASS",
                        default=sorted(known), help="test classes (default: all)")
    parser.add_argument("-k", dest="patterns", action="append", default=[], metavar="PATTERN",
                        help="only tests whose Class.test_name contains PATTERN (repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="workers at a time (default 2)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per test")
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--out", type=Path, default=Path("build/conformance"),
                        help="report folder (default build/conformance)")
    args = parser.parse_args(argv)

    tests = select(args.classes, args.patterns)
    if not tests:
        parser.error("no test selected")
    print(f"{len(tests)} tests, {args.jobs} workers, device {args.device}", flush=True)
    start = time.perf_counter()
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, test, args.device, args.timeout) for test in tests]
        for done, future in enumerate(as_completed(futures), 1):
            record = future.result()
            klass, category = classify(record)
            results.append({"test": record["test"], "class": klass, "category": category,
                            "record": record})
            note = f"  {category}" if klass not in ("pass", "no_parfor") else ""
            print(f"[{done:>{len(str(len(tests)))}}/{len(tests)}] {klass:<13} "
                  f"{record['test']} ({record['wall_seconds']:.1f} s){note}", flush=True)

    meta = {
        "command": shlex.join(["python", "-m", "tests.conformance.run",
                               *(sys.argv[1:] if argv is None else argv)]),
        "device": args.device,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "numba": numba.__version__,
        "xpuc": importlib.metadata.version("xpuc"),
        "commit": _commit(),
        "jobs": args.jobs,
        "timeout": args.timeout,
        "seconds": round(time.perf_counter() - start, 1),
    }
    summary = report.summarize(results, meta)
    json_path, markdown_path = report.write(summary, args.out)
    counts = summary["counts"]
    print(", ".join(f"{name} {n}" for name, n in counts.items()), flush=True)
    print(f"report: {json_path} {markdown_path}", flush=True)
    return 1 if counts["other"] else 0


if __name__ == "__main__":
    sys.exit(main())
