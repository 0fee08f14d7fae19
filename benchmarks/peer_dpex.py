"""Times one workload of ``workloads.py`` under numba-dpex's ``dpjit``, for
``suite.py``. It runs in numba-dpex's own environment (an older Numba, NumPy
and dpctl than xpuc's: see the README), so it imports nothing of xpuc's; it
makes the same inputs as the suite (same generator, seed and scale), writes
what the call produced to ``OUT/result-K.npy`` for the suite to check, and
prints its timings as one line of JSON.

    <peer python> benchmarks/peer_dpex.py NAME --scale S --repeat R --device D --out OUT
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import dpnp
import numpy as np
from numba_dpex import dpjit
from workloads import WORKLOADS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--out", required=True)
    options = parser.parse_args()
    (workload,) = (w for w in WORKLOADS if w.name == options.name)
    inputs = workload.make_inputs(np.random.default_rng(0), options.scale)
    args = tuple(dpnp.asarray(a, device=options.device) if isinstance(a, np.ndarray) else a
                 for a in inputs)
    queue = next(a.sycl_queue for a in args if isinstance(a, dpnp.ndarray))
    offloaded = dpjit(workload.function)

    def call():
        returned = offloaded(*args)
        queue.wait()  # in case a kernel is still running when the call returns
        return returned

    start = time.perf_counter()
    returned = call()
    first = (time.perf_counter() - start) * 1e3
    # the first call's results: the outputs before timing reruns on them
    results = ([args[i] for i in workload.outputs] if workload.outputs
               else list(returned) if isinstance(returned, tuple) else [returned])
    for k, value in enumerate(results):
        np.save(os.path.join(options.out, f"result-{k}.npy"),
                dpnp.asnumpy(value) if isinstance(value, dpnp.ndarray) else np.asarray(value))
    times = []
    for _ in range(options.repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"first_call_ms": first, "steady_ms": statistics.median(times),
                      "results": len(results)}))


if __name__ == "__main__":
    main()
