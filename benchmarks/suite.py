"""The benchmark suite: every workload of ``workloads.py`` under NumPy,
``numba.njit``, ``numba.njit(parallel=True)``, xpuc (NumPy arguments in a
device context, and USM arguments) and numba-dpex's ``dpjit`` (when its
environment exists), same inputs, one invocation. Checks that results agree,
times the first call and the median of steady calls, reports bandwidth of
streaming workloads next to the triad's, and the host overhead per
offloaded call and per launched parfor next to dpctl's submit+wait of a
barrier and of an empty kernel.

    python benchmarks/suite.py [--scale S] [--repeat R] [--only NAME] [--json PATH]
                               [--dpex-python PATH] [--leave-out NAME ...]

``--scale 1`` is the size of PEERS.md's figures; CI-sized runs use ``--scale 0.01``.
numba-dpex needs an older stack than xpuc's, in a virtual environment of its
own (the README says how to make one); the suite runs ``peer_dpex.py`` with
that environment's Python, one process per workload, and takes the steady calls
of all implementations in interleaved rounds (``interleaved_steady_ms``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ctypes
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import dpctl
import dpctl.program
import numba
import numpy as np
from timing import call_times, steady_ms
from workloads import WORKLOADS, Workload, four_steps

import xpuc
from xpuc.array_library import tensor as dpt
from xpuc.passes import lower


def _results(workload: Workload, args: tuple, returned: object,
             is_reference: bool) -> list[np.ndarray]:
    """What a call produced: its outputs, or what it returned (the NumPy
    reference always returns its results)."""
    values = [args[i] for i in workload.outputs] if workload.outputs and not is_reference else (
        list(returned) if isinstance(returned, tuple) else [returned])
    return [dpt.asnumpy(v) if isinstance(v, dpt.usm_ndarray) else np.asarray(v)
            for v in values]


SERIAL = ("NumPy", "numba.njit")
PARALLEL, IN_CONTEXT, USM, DPEX = ("numba.njit(parallel=True)", "xpuc, NumPy in context",
                                   "xpuc, USM", "numba-dpex dpjit")


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
    found[PARALLEL] = (parallel, lambda args: args)
    found[IN_CONTEXT] = (in_context, lambda args: args)
    found[USM] = (offloaded, to_usm)
    return found




def _dpex_environment(python: str) -> dict[str, str]:
    """numba-dpex's process environment: its wheels' RPATHs are broken, and
    its OpenCL CPU runtime must be the one of its own stack (PEERS.md)."""
    lib = Path(python).absolute().parents[1] / "lib"  # not resolved: bin/python is a link
    no_vendors = tempfile.mkdtemp(prefix="xpuc-no-icd-vendors-")  # hides a system PoCL
    return {**os.environ, "LD_LIBRARY_PATH": str(lib),
            "OCL_ICD_FILENAMES": str(lib / "libintelocl.so"), "OCL_ICD_VENDORS": no_vendors}


def _error_line(stderr: str) -> str | None:
    """The exception a failed Python process reported: its last line naming an
    error (Numba appends context lines after it)."""
    errors = [line for line in stderr.splitlines() if re.match(r"[\w.]+(Error|Exception)\b", line)]
    return errors[-1] if errors else None


PEER_SCRIPT = Path(__file__).with_name("peer_dpex.py")


class DpexPeer:
    """numba-dpex running ``workload`` in a process of its own environment
    (``peer_dpex.py``), driven over its stdin and stdout. Start every peer
    before this process launches anything (``start_dpex_peers``); a peer
    whose call failed, or whose process ended, is ``failed`` with why (a
    peer's failure is a finding of the run, not its end). ``script`` is
    the peer's program: ``peer_dpex.py``, or one that speaks its protocol."""

    def __init__(self, workload: Workload, scale: float, device: str, python: str,
                 script: Path = PEER_SCRIPT) -> None:
        self.failed: str | None = None
        self._out = tempfile.TemporaryDirectory(prefix="xpuc-dpex-")
        # a file, not a pipe: a peer writing warnings must not block on a full pipe
        self._stderr = tempfile.TemporaryFile("w+")
        self._process = subprocess.Popen(
            [python, str(script), workload.name,
             "--scale", str(scale), "--device", device, "--out", self._out.name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env=_dpex_environment(python))

    def _answer(self) -> dict:
        answer = self._process.stdout.readline()
        if not answer:
            self._stderr.seek(0)
            raise RuntimeError(_error_line(self._stderr.read())
                               or f"exit status {self._process.wait()}")
        return json.loads(answer)

    def _request(self, request: str) -> dict:
        try:
            self._process.stdin.write(request + "\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # the process ended: _answer says how
        return self._answer()

    def wait_ready(self) -> None:
        """Wait until the peer has imported its modules (which takes seconds
        of both cores)."""
        try:
            self._answer()
        except RuntimeError as ended:
            self.failed = str(ended)

    def first_call(self) -> tuple[float, list[np.ndarray]] | None:
        """Milliseconds of the first call and what it produced; None if it
        failed."""
        if self.failed is not None:
            return None
        try:
            answer = self._request("first")
        except RuntimeError as ended:
            answer = {"error": str(ended)}
        if "error" in answer:
            self.failed = answer["error"]
            return None
        return answer["first_call_ms"], [
            np.load(os.path.join(self._out.name, f"result-{k}.npy"))
            for k in range(answer["results"])]

    def steady_ms(self) -> float:
        return self._request(f"turn {WARM_CALLS}")["ms"]

    def close(self) -> None:
        self._process.stdin.close()
        self._process.wait()
        self._stderr.close()
        self._out.cleanup()


def start_dpex_peers(workloads: list[Workload], scale: float, device: str,
                     python: str) -> dict[str, DpexPeer]:
    """A ``DpexPeer`` per workload, started before this process runs anything
    on the device: starting a process once the device runtime's worker
    threads exist leaves them broken in this one (oneTBB: "Unable to join
    threads to shut down before fork()"), and everything timed after it ran
    up to 4 times slower. Once ready, each waits for its first request, doing
    nothing."""
    peers = {w.name: DpexPeer(w, scale, device, python) for w in workloads}
    for peer in peers.values():
        peer.wait_ready()
    return peers


def _check(workload: Workload, name: str, results: list[np.ndarray],
           expected: list[np.ndarray]) -> None:
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=workload.rtol, atol=1e-12,
                                   err_msg=f"{workload.name}: {name} disagrees")


def pipeline_ms(functions: list[xpuc.JitFunction], repeat: int = 5) -> list[float]:
    """Milliseconds the MLIR pipeline takes to lower each parfor of
    ``functions`` from its first stage's input to SPIR-V, as at a first call:
    the median of ``repeat`` lowerings (one alone moved by 3x with the
    machine's load)."""
    return [statistics.median(call_times(
        lambda lowered=lowered: lower(lowered.source, lowered.target, lowered.until,
                                      lowered.stages, keep_texts=False), repeat))
            for function in functions for lowered in function.inspect_lowered()]


# a turn of ``interleaved_steady_ms``: QUIET_S idle, then WARM_CALLS untimed
# calls and one timed. Numba's OpenMP threads spin about 8 ms after a call, the
# device runtime's TBB threads 1 ms, and spinning threads would take a core from
# the next implementation; after longer idle gaps, the first call or two of an
# implementation ran slower (row L2 norms: 8.9 ms one call after a 50 ms gap,
# 7.0 ms back to back)
QUIET_S, WARM_CALLS = 0.01, 2


def interleaved_steady_ms(steady: dict[str, Callable[[], float]],
                          rounds: int) -> dict[str, float]:
    """The median of ``rounds`` steady milliseconds of each implementation,
    taken in rounds that go through all of them in turn, each round starting
    one further along: the speed of these shared machines changes over
    seconds to minutes (one implementation's triad ran at 29 GB/s, then 40,
    then 29 a minute apart, and the others with it), and only turns taken
    together let such a change fall on every implementation alike."""
    names = list(steady)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        start = round_ % len(names)
        for name in names[start:] + names[:start]:
            time.sleep(QUIET_S)
            samples[name].append(steady[name]())
    return {name: statistics.median(times) for name, times in samples.items()}


def run_workload(workload: Workload, scale: float, repeat: int, queue: dpctl.SyclQueue,
                 dpex: DpexPeer | None, leave_out: tuple[str, ...] = ()) -> dict:
    """Time ``workload`` under each implementation in this process but those
    named in ``leave_out``, and under numba-dpex (if its peer runs), checking
    their results against the first's: first calls one after the other, then ``repeat`` rounds of
    steady calls (``interleaved_steady_ms``)."""
    inputs = workload.make_inputs(np.random.default_rng(0), scale)
    rows, expected, steady = {}, None, {}
    implementations = {name: found for name, found in _implementations(workload, queue).items()
                       if name not in leave_out}
    for name, (call, prepare) in implementations.items():
        print(f"  {name} ...", flush=True)
        args = prepare(copy.deepcopy(inputs))
        (first,) = call_times(lambda call=call, args=args: call(*args), 1)
        # the first call's results, from a fresh copy (steady calls rerun on the same arrays)
        fresh = prepare(copy.deepcopy(inputs))
        results = _results(workload, fresh, call(*fresh), name == "NumPy")
        if expected is None:  # the first implementation, NumPy where it has one
            expected = results
        _check(workload, name, results, expected)
        rows[name] = {"first_call_ms": first}
        steady[name] = functools.partial(steady_ms, functools.partial(call, *args),
                                         WARM_CALLS)
    if dpex is not None:
        print(f"  {DPEX} ...", flush=True)
        outcome = dpex.first_call()
        if outcome is None:
            print(f"    failed: {dpex.failed}", flush=True)
            rows[DPEX] = {"failed": dpex.failed}
        else:
            try:
                _check(workload, DPEX, outcome[1], expected)
                rows[DPEX] = {"first_call_ms": outcome[0]}
                steady[DPEX] = dpex.steady_ms
            except AssertionError as error:
                # a peer's wrong answer is a finding of the run, and no time to beat
                print(f"  {DPEX}: wrong results, left out of the comparison", flush=True)
                rows[DPEX] = {"failed": str(error).strip(), "wrong_results": True}
    print(f"  {repeat} rounds of steady calls ...", flush=True)
    for name, ms in interleaved_steady_ms(steady, repeat).items():
        rows[name]["steady_ms"] = ms
        if workload.streamed_bytes is not None:
            rows[name]["GB/s"] = workload.streamed_bytes(inputs) / ms / 1e6
    rows[USM]["pipeline_ms"] = pipeline_ms([implementations[USM][0]])
    return rows


PARFORS_IN_MANY = 4
OVERHEAD_TURN = 100


# the baselines of launch_overheads: a submit that runs no kernel, one that runs
# an empty kernel (what a launch costs below any runtime of ours), and one that
# runs the kernel of xpuc's one-parfor call (what the device charges for it)
BARRIER, EMPTY_KERNEL = "empty dpctl submit+wait (barrier)", "empty kernel, dpctl submit+wait"
PARFOR_KERNEL = "the 1-parfor call's kernel, dpctl submit+wait"
# the peer of the many-parfor call: its kernels submitted and waited for one after
# another, as its launches are (the device's own cost of back-to-back launches)
PARFOR_KERNELS = f"the {PARFORS_IN_MANY}-parfor call's kernels, dpctl submit+wait each"
# ratios among the overheads (issue 31's targets: at most 1.5 and at most 5)
KERNEL_TO_CALL = "explicit kernel launch / 1-parfor call, USM (×)"
HOST_TO_NUMBA = "1-parfor call kept on the host / Numba parallel's, NumPy (×)"
RATIOS = (KERNEL_TO_CALL, HOST_TO_NUMBA)
NUMPY_LAUNCHED = "xpuc call, 1 parfor, NumPy in a context, launched (cost model off)"
NUMPY_ON_HOST = "xpuc call, 1 parfor, NumPy in a context, kept on the host (cost model)"
NUMBA_PARALLEL = "numba.njit(parallel=True) call, 1 parfor, NumPy"
HOST_PARFOR_MAX = "XPUC_HOST_PARFOR_MAX"  # the runtime's cost-model threshold


@xpuc.kernel
def _nothing():
    pass


@xpuc.kernel
def _increment(a):
    i = xpuc.get_global_id(0)
    a[i] += 1.0


def launch_overheads(queue: dpctl.SyclQueue, repeat: int = 2000) -> dict[str, float]:
    """Microseconds of host overhead, median of ``repeat`` calls on one-element
    arrays (next to no work, and no copies: a device with
    ``usm_system_allocations``, as the CPU device, takes NumPy's memory as it
    is): the two baselines (a dpctl barrier
    submit+wait, and dpctl's submit+wait of an empty one-work-item kernel, its
    SPIR-V built by xpuc), dpctl's submit+wait of the kernel the one-parfor
    call launches (what the device runtime charges for it), an xpuc call with
    one parfor on a USM array and on a NumPy array in a device context
    (launched, and kept on the host by the cost model, next to
    ``numba.njit(parallel=True)`` of the same function), and one with
    ``PARFORS_IN_MANY`` on a USM array, next to dpctl's submit+wait of its
    kernels one after another; the two USM calls' difference splits
    the cost into a part per launched parfor (the slope, next to dpctl's) and a part per call,
    and the one-parfor USM call less its kernel's dpctl submit is xpuc's own."""
    def increment(a):
        for i in numba.prange(a.shape[0]):
            a[i] += 1.0

    one_parfor, numba_parallel = xpuc.jit(increment), numba.njit(parallel=True)(increment)

    four_parfors = xpuc.jit(four_steps)

    with xpuc.device_context(queue):
        _nothing[1]()
    ((name, spirv),) = _nothing.inspect_spirv().items()
    empty_kernel = dpctl.program.create_program_from_spirv(queue, spirv).get_sycl_kernel(name)
    tiny_usm, tiny_numpy = xpuc.asarray(np.zeros(1), queue=queue), np.zeros(1)
    one_parfor(tiny_usm)
    four_parfors(tiny_usm)
    parfor_kernel, *many_kernels = [
        dpctl.program.create_program_from_spirv(queue, spirv).get_sycl_kernel(name)
        for function in (one_parfor, four_parfors)
        for name, spirv in sorted(function.inspect_spirv().items())]
    # the array, and the element its work-items start from (passes/aligned_lanes.py)
    assert all(k.num_args == 2 for k in [parfor_kernel, *many_kernels]), (
        "each parfor kernel takes the array and its first element")
    parfor_args = [tiny_usm.usm_data, ctypes.c_int64(0)]

    def many_kernels_waited() -> None:
        for kernel in many_kernels:
            queue.submit(kernel, parfor_args, [1]).wait()
    one_usm, many_usm = "xpuc call, 1 parfor, USM", f"xpuc call, {PARFORS_IN_MANY} parfors, USM"
    kernel_usm = "xpuc explicit kernel k[1](a), USM (the 1-parfor call's work)"
    runs = {BARRIER: lambda: queue.submit_barrier().wait(),
            EMPTY_KERNEL: lambda: queue.submit(empty_kernel, [], [1]).wait(),
            PARFOR_KERNEL: lambda: queue.submit(parfor_kernel, parfor_args, [1]).wait(),
            PARFOR_KERNELS: many_kernels_waited,
            one_usm: lambda: one_parfor(tiny_usm),
            NUMPY_LAUNCHED: lambda: one_parfor(tiny_numpy),
            NUMPY_ON_HOST: lambda: one_parfor(tiny_numpy),
            NUMBA_PARALLEL: lambda: numba_parallel(tiny_numpy),
            many_usm: lambda: four_parfors(tiny_usm),
            kernel_usm: lambda: _increment[1](tiny_usm),
            "xpuc explicit kernel k[1](a), NumPy in a context": lambda: _increment[1](tiny_numpy)}
    samples: dict[str, list[float]] = {name: [] for name in runs}
    # entered once, as by a user calling many times in it; the USM calls run
    # in it too, on its own queue (placement checks that, by identity)
    with xpuc.device_context(queue):
        for name, run in runs.items():
            with _cost_model(name != NUMPY_LAUNCHED):
                run()  # compiles
        # in turns of OVERHEAD_TURN calls, so that a change in the machine's
        # load falls on the baselines and on xpuc's calls alike
        for _ in range(repeat // OVERHEAD_TURN):
            for name, run in runs.items():
                with _cost_model(name != NUMPY_LAUNCHED):
                    samples[name] += call_times(run, OVERHEAD_TURN)
    found = {name: statistics.median(times) * 1e3 for name, times in samples.items()}
    one, many = found[one_usm], found[many_usm]
    found["per launched parfor (slope)"] = (many - one) / (PARFORS_IN_MANY - 1)
    found["per launched parfor, dpctl's kernels (slope)"] = (
        found[PARFOR_KERNELS] - found[PARFOR_KERNEL]) / (PARFORS_IN_MANY - 1)
    found["per call, besides its parfors"] = one - found["per launched parfor (slope)"]
    found["xpuc's own, 1 parfor, USM (call less its kernel's dpctl submit+wait)"] = (
        one - found[PARFOR_KERNEL])
    found[KERNEL_TO_CALL] = found[kernel_usm] / one
    found[HOST_TO_NUMBA] = found[NUMPY_ON_HOST] / found[NUMBA_PARALLEL]
    return found


@contextlib.contextmanager
def _cost_model(on: bool) -> Iterator[None]:
    """The runtime's cost model on (the device's threshold) or off
    (``XPUC_HOST_PARFOR_MAX=0``, read at each parfor); the variable is as it
    was afterwards."""
    before = os.environ.pop(HOST_PARFOR_MAX, None)
    if not on:
        os.environ[HOST_PARFOR_MAX] = "0"
    try:
        yield
    finally:
        os.environ.pop(HOST_PARFOR_MAX, None)
        if before is not None:
            os.environ[HOST_PARFOR_MAX] = before


def _cell(row: dict | None) -> str:
    if row is None:
        return "n/a"
    if "failed" in row:
        return "wrong results" if row.get("wrong_results") else "failed"
    cell = f"{row['steady_ms']:.2f} ({row['first_call_ms']:.0f})"
    return cell + (f" {row['GB/s']:.1f} GB/s" if "GB/s" in row else "")


# the speed-up columns of markdown_table: column -> (xpuc's path, the peers
# whose fastest it is held against)
SPEEDUPS = {"NumPy in context vs Numba parallel": (IN_CONTEXT, (PARALLEL,)),
            "USM vs Numba parallel": (USM, (PARALLEL,)),
            "USM vs best peer": (USM, (PARALLEL, DPEX))}


def markdown_table(results: dict[str, dict]) -> str:
    """One row per workload, one column per implementation, then the
    ``SPEEDUPS`` (both xpuc paths against Numba's threads, and xpuc with USM
    inputs against the best peer, Numba's threads or numba-dpex), and their
    geometric means."""
    names = list(dict.fromkeys(n for rows in results.values() for n in rows))
    lines = ["| workload | " + " | ".join(names + list(SPEEDUPS)) + " |",
             "|---|" + "---:|" * (len(names) + len(SPEEDUPS))]
    speedups: dict[str, list[float]] = {column: [] for column in SPEEDUPS}
    for workload, rows in results.items():
        for column, (ours, peers) in SPEEDUPS.items():
            fastest = min(rows[n]["steady_ms"] for n in peers if "steady_ms" in rows.get(n, {}))
            speedups[column].append(fastest / rows[ours]["steady_ms"])
        lines.append(f"| {workload} | " + " | ".join(
            [_cell(rows.get(n)) for n in names] + [f"{s[-1]:.2f}x" for s in speedups.values()])
            + " |")
    lines.append("| geometric mean |" + " |" * len(names) + "".join(
        f" {statistics.geometric_mean(s):.2f}x |" for s in speedups.values()))
    return "\n".join(lines)


def overhead_lines(overheads: dict[str, float]) -> list[str]:
    """The overheads as Markdown rows, each with its ratios to the two baselines."""
    barrier, kernel = overheads[BARRIER], overheads[EMPTY_KERNEL]
    return ["| host overhead | µs | × barrier | × empty kernel |", "|---|---:|---:|---:|"] + [
        f"| {name} | {value:.1f} | {value / barrier:.1f}× | {value / kernel:.1f}× |"
        for name, value in overheads.items() if name not in RATIOS] + [""] + [
        f"{ratio}: {overheads[ratio]:.2f}" for ratio in RATIOS]


def print_workloads(results: dict[str, dict]) -> None:
    """The workloads' table, their bandwidth against the triad's, and the MLIR pipeline's time."""
    print(markdown_table(results))
    triad = results.get("triad", {}).get(USM, {}).get("GB/s")
    if triad:
        print(f"\nxpuc USM bandwidth against its triad's ({triad:.1f} GB/s): " + ", ".join(
            f"{w} {rows[USM]['GB/s'] / triad:.0%}" for w, rows in results.items()
            if w != "triad" and "GB/s" in rows[USM]))
    pipeline = [ms for rows in results.values() for ms in rows[USM]["pipeline_ms"]]
    print(f"MLIR pipeline per kernel: median {statistics.median(pipeline):.1f} ms, max "
          f"{max(pipeline):.1f} ms ({len(pipeline)} kernels)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    # the serial baselines take most of a full-size run (NumPy's k-means assignment
    # 2.5 s a call); the results are then checked against Numba's threads
    parser.add_argument("--leave-out", action="append", default=[], choices=SERIAL,
                        help="an implementation to leave out (repeatable)")
    parser.add_argument("--only", help="run workloads whose name contains this (one that "
                        "names none measures the host overheads alone)")
    parser.add_argument("--device", default="opencl:cpu")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results",
                                                            "suite.json"))
    parser.add_argument("--dpex-python", default=os.environ.get("XPUC_DPEX_PYTHON"),
                        help="the Python of numba-dpex's environment (default: "
                             "$XPUC_DPEX_PYTHON; without it numba-dpex is left out)")
    args = parser.parse_args()
    queue = dpctl.SyclQueue(args.device)
    # platform.processor() runs `uname -p`: a process started before the device runs anything
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    selected = [w for w in WORKLOADS if not args.only or args.only.lower() in w.name.lower()]
    if args.dpex_python is None:
        print("numba-dpex: no environment given (--dpex-python), left out", file=sys.stderr)
    dpex = start_dpex_peers(selected, args.scale, queue.sycl_device.filter_string,
                            args.dpex_python) if args.dpex_python else {}
    results = {}
    for workload in selected:
        print(f"{workload.name}:", flush=True)
        peer = dpex.get(workload.name)
        results[workload.name] = run_workload(workload, args.scale, args.repeat, queue, peer,
                                              tuple(args.leave_out))
        if peer is not None:
            peer.close()  # its inputs held memory
    overheads = launch_overheads(queue)

    print(f"\nsteady ms, median of {args.repeat} interleaved rounds (first call in "
          f"parentheses); scale {args.scale}; {machine}, {queue.sycl_device.name}, "
          f"{time.strftime('%Y-%m-%d')}\n")
    if results:  # --only that names no workload: the host overheads alone
        print_workloads(results)
    print("\n" + "\n".join(overhead_lines(overheads)))
    os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
    with open(args.json, "w") as out:
        json.dump({"scale": args.scale, "device": queue.sycl_device.name, "results": results,
                   "overheads_us": overheads}, out, indent=2)


if __name__ == "__main__":
    main()
