"""Run one test of ``numba.tests.test_parfors`` with its parallel side routed
through xpuc, and write what happened as JSON (to stdout, or to ``--result``).

    python -m tests.conformance.worker TestPrangeBasic.test_prange01

``run.py`` starts one worker per test, so that a crash, a hang or the state a
test leaves behind (compiled kernels, patched Numba globals) stays in it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import unittest
from types import TracebackType
from typing import Any

import xpuc

ExcInfo = tuple[type[BaseException], BaseException, TracebackType]

# Long enough for an MLIR diagnostic or a Numba error with its context.
MESSAGE_CHARS = 4000
TRACEBACK_CHARS = 6000


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not other for other in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def describe(err: ExcInfo, subtest: str | None = None) -> dict[str, Any]:
    exc_type, exc, tb = err
    return {
        "type": f"{exc_type.__module__}.{exc_type.__qualname__}",
        "message": str(exc).strip()[:MESSAGE_CHARS],
        # xpuc's deliberate refusals: a construct, or a Numba option it
        # cannot honour (pipeline_class, parallel=False on an offload)
        "refusal": isinstance(exc, (xpuc.UnsupportedError, xpuc.ConflictingOptionsError)),
        # a refusal that something re-raised as another error is not clean
        "refusal_in_chain": any(isinstance(e, xpuc.UnsupportedError) for e in _chain(exc)[1:]),
        "subtest": subtest,
        "traceback": "".join(traceback.format_exception(exc_type, exc, tb))[-TRACEBACK_CHARS:],
    }


class Recorder(unittest.TestResult):
    """Keeps every failure and error of a test, its subtests' included."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[dict[str, Any]] = []
        self.skip_reason: str | None = None

    def addError(self, test: unittest.TestCase, err: ExcInfo) -> None:
        self.problems.append(describe(err))

    def addFailure(self, test: unittest.TestCase, err: ExcInfo) -> None:
        self.problems.append(describe(err))

    def addSubTest(
        self, test: unittest.TestCase, subtest: unittest.TestCase, err: ExcInfo | None
    ) -> None:
        if err is not None:
            self.problems.append(describe(err, subtest=str(subtest).removeprefix(str(test))))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self.skip_reason = reason


def run_test(test_id: str, device: str) -> dict[str, Any]:
    """Run ``test_id`` (``Class.test_name``) routed to ``device``."""
    # numba.tests.support decides when it is imported whether the parfor tests
    # marked @needs_subprocess run: this process is the subprocess they need
    os.environ["SUBPROC_TEST"] = "1"
    from . import routing  # imports numba.tests.test_parfors, so only now

    routing.install(device)
    suite = unittest.defaultTestLoader.loadTestsFromName(test_id, routing.parfor_tests)
    recorder = Recorder()
    xpuc.reset_stats()
    start = time.perf_counter()
    suite.run(recorder)
    seconds = time.perf_counter() - start
    stats = xpuc.stats()
    return {
        "test": test_id,
        "seconds": round(seconds, 3),
        "skip_reason": recorder.skip_reason,
        "problems": recorder.problems,
        "xpuc": {
            "functions": routing.ACTIVITY.functions,
            "calls": routing.ACTIVITY.calls,
            "kernels_compiled": stats["kernels_compiled"],
            "kernel_launches": stats["kernel_launches"],
            "delegated": sorted(routing.ACTIVITY.delegated),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", help="Class.test_name in numba.tests.test_parfors")
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--result", help="write the JSON record here instead of stdout")
    args = parser.parse_args(argv)
    record = run_test(args.test, args.device)
    if args.result:
        with open(args.result, "w") as out:
            json.dump(record, out)
    else:
        json.dump(record, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
