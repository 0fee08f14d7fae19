"""The CPU device's decision on inner loops (``Target.parallel_inner_loops``,
frontend/inner_loops.py), measured: the suite's workloads whose independent
inner loop a GPU makes a second parallel dimension, each compiled both ways
for the CPU device (rows as work-items, its choice; and a work-item per
(i, j), a GPU's), results compared, steady calls interleaved, medians.

    python benchmarks/bench_inner_loops.py [--scale S] [--repeat R] [--device D]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics

import numpy as np
from timing import call_times, cpu_model
from workloads import WORKLOADS

import xpuc
from xpuc import targets
from xpuc.array_library import tensor as dpt

NAMES = ("pairwise distances", "Mandelbrot", "Jacobi 2-D over rows, 50 steps")


def _compiled(function, args: tuple, widened: bool):
    """``function`` jitted and called once on ``args``, its inner loops as the
    device's Target decides, or (``widened``) as a GPU's does."""
    jitted = xpuc.jit(function)
    target_for = targets.target_for
    if widened:
        targets.target_for = lambda device: dataclasses.replace(target_for(device),
                                                                parallel_inner_loops=True)
    try:
        jitted(*args)
    finally:
        targets.target_for = target_for
    return jitted


def _results(jitted, make_args, outputs: tuple[int, ...]) -> list[np.ndarray]:
    args = make_args()
    returned = jitted(*args)
    values = [args[i] for i in outputs] if outputs else [returned]
    return [dpt.asnumpy(v) for v in values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--device", default="opencl:cpu")
    options = parser.parse_args()
    print(f"{cpu_model()}, {options.device}, USM arrays, scale {options.scale}, "
          f"medians of {options.repeat}")
    print("| workload | shape | rows as work-items (ms) | a work-item per (i, j) (ms) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    rng = np.random.default_rng(0)
    for workload in (w for w in WORKLOADS if w.name in NAMES):
        inputs = workload.make_inputs(rng, options.scale)

        def make_args(inputs=inputs):
            return tuple(dpt.asarray(a, device=options.device) if isinstance(a, np.ndarray)
                         else a for a in inputs)

        args = make_args()
        rows, pairs = (_compiled(workload.function, args, widened) for widened in (False, True))
        for got, expected in zip(_results(pairs, make_args, workload.outputs),
                                 _results(rows, make_args, workload.outputs)):
            np.testing.assert_allclose(got, expected, rtol=workload.rtol)
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(options.repeat):
            for widened, jitted in ((False, rows), (True, pairs)):
                times[widened] += call_times(lambda jitted=jitted, args=args: jitted(*args), 1)
        row_ms, pair_ms = (statistics.median(times[w]) for w in (False, True))
        print(f"| {workload.name} | {inputs[0].shape} | {row_ms:.2f} | {pair_ms:.2f} | "
              f"{row_ms / pair_ms:.2f}× |")


if __name__ == "__main__":
    main()
