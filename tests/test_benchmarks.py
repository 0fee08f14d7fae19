"""The benchmark suite's harness (``benchmarks/suite.py``): steady calls in
interleaved rounds, and numba-dpex's peer process driven over its protocol,
here by stand-in peers (numba-dpex lives in an environment of its own), whose
answers, wrong answers, failures and crashes each end up in the workload's
row."""

import sys
from pathlib import Path

import dpctl
import numpy as np
import pytest

BENCHMARKS = Path(__file__).parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import suite  # noqa: E402
from workloads import WORKLOADS  # noqa: E402

(TRIAD,) = (w for w in WORKLOADS if w.name == "triad")
SCALE = 0.01


def test_rounds_rotate_through_the_implementations(monkeypatch):
    monkeypatch.setattr(suite, "QUIET_S", 0.0)
    order = []

    def steady(name, ms):
        return lambda: order.append(name) or ms.pop(0)

    medians = suite.interleaved_steady_ms(
        {"a": steady("a", [3.0, 1.0, 2.0]), "b": steady("b", [5.0, 4.0, 6.0]),
         "c": steady("c", [7.0, 9.0, 8.0])}, rounds=3)
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert medians == {"a": 2.0, "b": 5.0, "c": 8.0}


# A stand-in for peer_dpex.py: same arguments and protocol; it "runs" the
# triad with NumPy, its result scaled by FACTOR, and fails as told by MODE.
PEER = """\
import argparse, json, os, sys, time
import numpy as np
sys.path.insert(0, {benchmarks!r})
from workloads import WORKLOADS

parser = argparse.ArgumentParser()
parser.add_argument("name")
parser.add_argument("--scale", type=float)
parser.add_argument("--device")
parser.add_argument("--out")
options = parser.parse_args()
(workload,) = (w for w in WORKLOADS if w.name == options.name)
if {mode!r} == "no import":
    raise ModuleNotFoundError("No module named 'numba_dpex'")
print(json.dumps({{"ready": True}}), flush=True)
for request in sys.stdin:
    if request.strip() == "first":
        if {mode!r} == "error":
            print(json.dumps({{"error": "LoweringError: Failed in dpjit"}}), flush=True)
            continue
        if {mode!r} == "crash":
            os._exit(3)
        inputs = workload.make_inputs(np.random.default_rng(0), options.scale)
        (result,) = workload.reference(*inputs)
        np.save(os.path.join(options.out, "result-0.npy"), result * {factor})
        print(json.dumps({{"first_call_ms": 1.5, "results": 1}}), flush=True)
    elif request.startswith("turn "):
        print(json.dumps({{"ms": 0.25}}), flush=True)
"""


def peer(tmp_path: Path, mode: str = "", factor: float = 1.0) -> suite.DpexPeer:
    script = tmp_path / "peer.py"
    script.write_text(PEER.format(benchmarks=str(BENCHMARKS), mode=mode, factor=factor))
    started = suite.DpexPeer(TRIAD, SCALE, "opencl:cpu", sys.executable, script=script)
    started.wait_ready()
    return started


def run_triad(peer: suite.DpexPeer) -> dict:
    try:
        return suite.run_workload(TRIAD, SCALE, 2, dpctl.SyclQueue("opencl:cpu"), peer)
    finally:
        peer.close()


def test_an_agreeing_peer_is_timed_in_the_rounds(tmp_path):
    rows = run_triad(peer(tmp_path))
    assert rows[suite.DPEX]["first_call_ms"] == 1.5
    assert rows[suite.DPEX]["steady_ms"] == 0.25
    assert rows[suite.DPEX]["GB/s"] == pytest.approx(
        TRIAD.streamed_bytes(TRIAD.make_inputs(np.random.default_rng(0), SCALE)) / 0.25 / 1e6)
    for name in ("NumPy", suite.PARALLEL, suite.USM):
        assert rows[name]["steady_ms"] > 0


@pytest.mark.parametrize("mode, factor, failure", [
    ("", 1.001, "triad: numba-dpex dpjit disagrees"),
    ("error", 1.0, "LoweringError: Failed in dpjit"),
    ("crash", 1.0, "exit status 3"),
    ("no import", 1.0, "ModuleNotFoundError: No module named 'numba_dpex'"),
])
def test_a_failing_peer_is_a_finding_of_the_run(tmp_path, mode, factor, failure):
    rows = run_triad(peer(tmp_path, mode, factor))
    assert failure in rows[suite.DPEX]["failed"]
    assert rows[suite.DPEX].get("wrong_results", False) == (mode == "")
    assert "steady_ms" not in rows[suite.DPEX]
    assert rows[suite.USM]["steady_ms"] > 0


@pytest.mark.parametrize("name", ["k-means update", "k-means step",
                                  "Jacobi 2-D over rows, 50 steps"])
def test_the_loop_shapes_agree_with_numpy_on_every_implementation(name):
    # issue 32's shapes: few long iterations, and a stencil over rows
    (workload,) = (w for w in WORKLOADS if w.name == name)
    rows = suite.run_workload(workload, SCALE, 1, dpctl.SyclQueue("opencl:cpu"), None)
    assert {"NumPy", "numba.njit", suite.PARALLEL, suite.IN_CONTEXT, suite.USM} <= set(rows)
    assert all(row["steady_ms"] > 0 for row in rows.values())


def test_serial_baselines_can_be_left_out():
    rows = suite.run_workload(TRIAD, SCALE, 1, dpctl.SyclQueue("opencl:cpu"), None,
                              leave_out=suite.SERIAL)
    assert set(rows) == {suite.PARALLEL, suite.IN_CONTEXT, suite.USM}
