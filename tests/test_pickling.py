"""xpuc.jit functions and kernels pickle as Numba's dispatchers do (the
function, by value where it cannot be imported, and the options; never
compiled code), with pickle and cloudpickle, into this process and others."""

import pickle
import subprocess
import sys

import cloudpickle
import numpy as np
import pytest

import xpuc

DEVICE = "opencl:cpu"


@xpuc.jit(fastmath=False)
def axpy(a, x, y):
    return a * x + y


@xpuc.kernel("void(float64[::1], float64[::1])")
def doubled(a, out):
    i = xpuc.get_global_id(0)
    out[i] = 2.0 * a[i]


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_a_jit_function_round_trips(dumps):
    copy = pickle.loads(dumps(axpy))
    assert isinstance(copy, xpuc.JitFunction) and copy._options == axpy._options
    x = np.arange(5.0)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        np.testing.assert_array_equal(copy(2.0, x, x), 3 * x)
    assert xpuc.stats()["kernel_launches"] == 1


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps])
def test_a_kernel_round_trips_with_its_signatures(dumps):
    copy = pickle.loads(dumps(doubled))
    assert isinstance(copy, xpuc.KernelFunction)
    assert copy.signatures == doubled.signatures and copy.ndim == doubled.ndim
    a, out = np.arange(4.0), np.zeros(4)
    with xpuc.device_context(DEVICE):
        copy[4](a, out)
    np.testing.assert_array_equal(out, 2 * a)


def run_pickled(payload: bytes, code: str) -> str:
    """Run ``code`` in a fresh process with ``f`` unpickled from ``payload``
    (which it has as ``payload``)."""
    program = f"import pickle, sys\nimport numpy as np\nimport xpuc\n" \
              f"payload = sys.stdin.buffer.read()\nf = pickle.loads(payload)\n{code}"
    done = subprocess.run([sys.executable, "-c", program], input=payload,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def test_a_local_jit_function_travels_to_another_process_by_value():
    offset = 0.5

    @xpuc.jit
    def shifted(x):
        return np.sqrt(x) + offset  # a closure: no module can give it back by name

    payload = pickle.dumps(shifted)
    code = ("with xpuc.device_context('opencl:cpu'):\n"
            "    r = f(np.arange(4.0))\n"
            "print(r.tolist(), xpuc.stats()['kernel_launches'])")
    printed = run_pickled(payload, code)
    assert printed == f"{(np.sqrt(np.arange(4.0)) + offset).tolist()} 1"


def test_unpickling_again_gives_the_function_already_compiled():
    """Dask sends a function with each task: the second copy must not compile again."""
    @xpuc.jit
    def cubed(x):
        return x * x * x

    payload = pickle.dumps(cubed)
    assert pickle.loads(payload) is cubed  # in the process that made it
    code = ("again = pickle.loads(payload)\n"
            "with xpuc.device_context('opencl:cpu'):\n"
            "    f(np.arange(3.0))\n"
            "    compiled = xpuc.stats()['kernels_compiled']\n"
            "    again(np.arange(3.0))\n"
            "print(again is f, compiled > 0, xpuc.stats()['kernels_compiled'] == compiled)")
    assert run_pickled(payload, code) == "True True True"


def test_a_local_kernel_travels_to_another_process_by_value():
    @xpuc.kernel
    def squares(out):
        i = xpuc.get_global_id(0)
        out[i] = i * i

    code = ("out = np.zeros(5, np.int64)\n"
            "with xpuc.device_context('opencl:cpu'):\n"
            "    f[5](out)\n"
            "print(out.tolist())")
    assert run_pickled(cloudpickle.dumps(squares), code) == "[0, 1, 4, 9, 16]"
