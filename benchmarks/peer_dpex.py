"""Runs one workload of ``workloads.py`` under numba-dpex's ``dpjit``, for
``suite.py``, which drives it over stdin and stdout. It runs in numba-dpex's
own environment (an older Numba, NumPy and dpctl than xpuc's: see the
README), so it imports nothing of xpuc's; it makes the same inputs as the
suite (same generator, seed and scale).

    <peer python> benchmarks/peer_dpex.py NAME --scale S --device D --out OUT

Once its modules are imported it answers ``{"ready": true}``; then each
request is a line, each answer one line of JSON:

- ``first``: make the inputs and time the first call (which compiles); write
  what it produced to ``OUT/result-K.npy`` for the suite to check. Answers
  ``{"first_call_ms": ..., "results": K}``, or ``{"error": ...}`` naming the
  exception that failed the call.
- ``turn K``: K untimed calls, then one timed call. Answers ``{"ms": ...}``.

The process ends when its stdin does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import dpnp
import numpy as np
from numba_dpex import dpjit
from timing import steady_ms
from workloads import WORKLOADS


def _answer(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--out", required=True)
    options = parser.parse_args()
    (workload,) = (w for w in WORKLOADS if w.name == options.name)
    offloaded = dpjit(workload.function)
    args = None
    _answer(ready=True)

    def call():
        returned = offloaded(*args)
        queue.wait()  # in case a kernel is still running when the call returns
        return returned

    for request in sys.stdin:
        if request.strip() == "first":
            inputs = workload.make_inputs(np.random.default_rng(0), options.scale)
            args = tuple(dpnp.asarray(a, device=options.device)
                         if isinstance(a, np.ndarray) else a for a in inputs)
            queue = next(a.sycl_queue for a in args if isinstance(a, dpnp.ndarray))
            start = time.perf_counter()
            try:
                returned = call()
            except Exception as failure:  # a peer's failure is a finding of the suite
                _answer(error=traceback.format_exception_only(failure)[0].splitlines()[0])
                return
            first = (time.perf_counter() - start) * 1e3
            # the first call's results: the outputs before steady calls rerun on them
            results = ([args[i] for i in workload.outputs] if workload.outputs
                       else list(returned) if isinstance(returned, tuple) else [returned])
            for k, value in enumerate(results):
                np.save(os.path.join(options.out, f"result-{k}.npy"),
                        dpnp.asnumpy(value) if isinstance(value, dpnp.ndarray)
                        else np.asarray(value))
            _answer(first_call_ms=first, results=len(results))
        elif request.startswith("turn "):
            _answer(ms=steady_ms(call, int(request.split()[1])))
        else:
            raise ValueError(f"unknown request {request!r}")


if __name__ == "__main__":
    main()
