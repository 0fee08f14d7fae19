"""The benchmark suite: every workload of ``workloads.py`` under NumPy,
``numba.njit``, ``numba.njit(parallel=True)`` and xpuc (NumPy arguments in a
device context, and USM arguments), same inputs, one invocation. Checks that
results agree, times the first call and the median of steady calls, reports
bandwidth of streaming workloads next to the triad's, and the host overhead per
offloaded call and per launched parfor next to an empty dpctl submit+wait.

    python benchmarks/suite.py [--scale S] [--repeat R] [--only NAME] [--json PATH]

``--scale 1`` is the size of PEERS.md's figures; CI-sized runs use ``--scale 0.01``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import dpctl
import dpctl.tensor as dpt
import numba
import numpy as np
from workloads import WORKLOADS, Workload

import xpuc


def _timed(run: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Milliseconds of the first call, median of ``repeat`` more, first result."""
    start = time.perf_counter()
    result = run()
    first = (time.perf_counter() - start) * 1e3
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return first, statistics.median(times), result


def _results(workload: Workload, args: tuple, returned: object,
             is_reference: bool) -> list[np.ndarray]:
    """What a call produced: its outputs, or what it returned (the NumPy
    reference always returns its results)."""
    values = [args[i] for i in workload.outputs] if workload.outputs and not is_reference else (
        list(returned) if isinstance(returned, tuple) else [returned])
    return [dpt.asnumpy(v) if isinstance(v, dpt.usm_ndarray) else np.asarray(v)
            for v in values]


def _implementations(workload: Workload, queue: dpctl.SyclQueue) -> dict[str, Callable]:
    """name -> (args -> (call, args as that implementation takes them))."""
    fn = workload.function
    serial, parallel, offloaded = numba.njit(fn), numba.njit(parallel=True)(fn), xpuc.jit(fn)

    def in_context(*args):
        with xpuc.device_context(queue):
            return offloaded(*args)

    def to_usm(args):
        return tuple(xpuc.asarray(a, queue=queue) if isinstance(a, np.ndarray) else a
                     for a in args)

    found = {}
    if workload.reference is not None:
        found["NumPy"] = (workload.reference, lambda args: args)
    found["numba.njit"] = (serial, lambda args: args)
    found["numba.njit(parallel=True)"] = (parallel, lambda args: args)
    found["xpuc, NumPy in context"] = (in_context, lambda args: args)
    found["xpuc, USM"] = (offloaded, to_usm)
    return found


def run_workload(workload: Workload, scale: float, repeat: int,
                 queue: dpctl.SyclQueue) -> dict:
    inputs = workload.make_inputs(np.random.default_rng(0), scale)
    rows, expected = {}, None
    for name, (call, prepare) in _implementations(workload, queue).items():
        print(f"  {name} ...", flush=True)
        args = prepare(copy.deepcopy(inputs))
        first, steady, returned = _timed(lambda call=call, args=args: call(*args), repeat)
        # the first call's results, from a fresh copy (timing reruns on the same arrays)
        args = prepare(copy.deepcopy(inputs))
        results = _results(workload, args, call(*args), name == "NumPy")
        if expected is None:  # the first implementation, NumPy where it has one
            expected = results
        for got, want in zip(results, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=workload.rtol, atol=1e-12,
                                       err_msg=f"{workload.name}: {name} disagrees")
        row = {"first_call_ms": first, "steady_ms": steady}
        if workload.streamed_bytes is not None:
            row["GB/s"] = workload.streamed_bytes(inputs) / steady / 1e6
        rows[name] = row
    return rows


PARFORS_IN_MANY = 4


def launch_overheads(queue: dpctl.SyclQueue, repeat: int = 2000) -> dict[str, float]:
    """Microseconds of host overhead, median of ``repeat`` calls on one-element
    USM arrays (no copies, next to no work): an empty dpctl submit+wait, an
    xpuc call with one parfor and one with ``PARFORS_IN_MANY``; their
    difference splits the cost into a part per launched parfor (the slope)
    and a part per call."""
    def empty_submit():
        queue.submit_barrier().wait()

    @xpuc.jit
    def one_parfor(a):
        for i in numba.prange(a.shape[0]):
            a[i] += 1.0

    @xpuc.jit
    def four_parfors(a):
        for i in numba.prange(a.shape[0]):
            a[i] += 1.0
        for i in numba.prange(a.shape[0]):
            a[i] *= 2.0
        for i in numba.prange(a.shape[0]):
            a[i] -= 3.0
        for i in numba.prange(a.shape[0]):
            a[i] *= 0.5

    tiny = xpuc.asarray(np.zeros(1), queue=queue)
    found = {}
    for name, run in (("empty dpctl submit+wait", empty_submit),
                      ("xpuc call, 1 parfor", lambda: one_parfor(tiny)),
                      (f"xpuc call, {PARFORS_IN_MANY} parfors", lambda: four_parfors(tiny))):
        run()  # compiles
        _, steady, _ = _timed(run, repeat)
        found[name] = steady * 1e3
    one, many = found["xpuc call, 1 parfor"], found[f"xpuc call, {PARFORS_IN_MANY} parfors"]
    found["per launched parfor (slope)"] = (many - one) / (PARFORS_IN_MANY - 1)
    found["per call, besides its parfors"] = one - found["per launched parfor (slope)"]
    return found


def overhead_lines(overheads: dict[str, float]) -> list[str]:
    """The overheads as Markdown rows, each with its ratio to the empty submit."""
    empty = overheads["empty dpctl submit+wait"]
    return ["| host overhead | µs | × empty submit+wait |", "|---|---:|---:|"] + [
        f"| {name} | {value:.1f} | {value / empty:.1f}× |" for name, value in overheads.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", help="run workloads whose name contains this")
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results",
                                                            "suite.json"))
    args = parser.parse_args()
    queue = dpctl.SyclQueue(args.device)
    selected = [w for w in WORKLOADS if not args.only or args.only.lower() in w.name.lower()]
    results = {}
    for workload in selected:
        print(f"{workload.name}:", flush=True)
        results[workload.name] = run_workload(workload, args.scale, args.repeat, queue)
    overheads = launch_overheads(queue)

    names = list(dict.fromkeys(n for rows in results.values() for n in rows))
    print(f"\nsteady ms, median of {args.repeat} (first call in parentheses); scale "
          f"{args.scale}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{queue.sycl_device.name}, {time.strftime('%Y-%m-%d')}\n")
    print("| workload | " + " | ".join(names) + " | xpuc USM vs Numba parallel |")
    print("|---|" + "---:|" * (len(names) + 1))
    for workload, rows in results.items():
        cells = []
        for name in names:
            row = rows.get(name)
            cell = "n/a" if row is None else f"{row['steady_ms']:.2f} ({row['first_call_ms']:.0f})"
            if row and "GB/s" in row:
                cell += f" {row['GB/s']:.1f} GB/s"
            cells.append(cell)
        ratio = rows["numba.njit(parallel=True)"]["steady_ms"] / rows["xpuc, USM"]["steady_ms"]
        print(f"| {workload} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
    print("\n" + "\n".join(overhead_lines(overheads)))
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as out:
        json.dump({"scale": args.scale, "device": queue.sycl_device.name, "results": results,
                   "overheads_us": overheads}, out, indent=2)


if __name__ == "__main__":
    main()
