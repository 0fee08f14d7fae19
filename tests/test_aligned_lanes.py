"""Streaming kernels whose vectors of work-items start on cache lines of the
arrays they stream (passes/aligned_lanes.py): over a large array off a cache
line the host splits the launch in three, each from its ``first`` element."""

import dpctl
import numpy as np
import pytest
from device_support import DEVICE, offload
from numba import prange

import xpuc
import xpuc.runtime
from xpuc.targets import target_for

TARGET = target_for(dpctl.SyclDevice(DEVICE))


def triad(a, b, c, s):
    for i in prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def shifted(a, b):
    for i in prange(a.shape[0] - 1):
        a[i] = b[i + 1]


def launch_sizes(capfd, call) -> list[int]:
    """The global size of each launch ``call()`` made under the device context."""
    capfd.readouterr()
    xpuc.runtime.trace_launches(True)
    try:
        offload(call)
    finally:
        xpuc.runtime.trace_launches(False)
    return [int(line.rsplit("(", 1)[1].rstrip(")")) for line in capfd.readouterr().err.splitlines()
            if line.startswith("xpuc: launched kernel")]


def at(offset: int, n: int, dtype) -> np.ndarray:
    """A writable array of ``n`` elements whose data starts ``offset`` bytes
    past a cache line."""
    itemsize = np.dtype(dtype).itemsize
    block = np.zeros(n * itemsize + 2 * TARGET.cache_line_bytes, np.uint8)
    start = -block.ctypes.data % TARGET.cache_line_bytes + offset
    return block[start:start + n * itemsize].view(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("offset_elements", [0, 1, 2, 5])
def test_a_large_stream_off_a_cache_line_launches_its_head_apart(capfd, dtype, offset_elements):
    itemsize = np.dtype(dtype).itemsize
    n = (1 << 20) // itemsize + 12345  # over a MiB, and no multiple of a vector
    a = at(offset_elements * itemsize, n, dtype)
    b, c = (np.random.default_rng(k).random(n).astype(dtype) for k in (1, 2))
    sizes = launch_sizes(capfd, lambda: xpuc.jit(triad)(a, b, c, dtype(3.0)))
    head = -offset_elements % (TARGET.cache_line_bytes // itemsize)
    granule = 64 * TARGET.vector_lanes
    body = (n - head) // granule * granule
    assert sizes == [size for size in (head, body, n - head - body) if size]
    np.testing.assert_allclose(a, b + dtype(3.0) * c, rtol=1e-6)


def test_a_small_stream_launches_once(capfd):
    n = 1000
    a, b, c = at(16, n, np.float64), np.arange(n, dtype=np.float64), np.ones(n)
    assert launch_sizes(capfd, lambda: xpuc.jit(triad)(a, b, c, 2.0)) == [n]
    np.testing.assert_array_equal(a, b + 2.0)


def test_a_stream_off_its_element_size_launches_once(capfd):
    n = 1 << 18
    block = np.zeros(n * 8 + 8, np.uint8)
    a = np.frombuffer(block.data, np.float64, n, offset=4 + -block.ctypes.data % 8)
    b, c = np.ones(n), np.ones(n)
    assert launch_sizes(capfd, lambda: xpuc.jit(triad)(a, b, c, 2.0)) == [n]
    np.testing.assert_array_equal(a, 3.0)


def test_a_kernel_indexing_off_its_id_is_not_split(capfd):
    n = 1 << 18
    a, b = at(16, n, np.float64), np.arange(n, dtype=np.float64)
    function = xpuc.jit(shifted)
    assert launch_sizes(capfd, lambda: function(a, b)) == [n - 1]
    np.testing.assert_array_equal(a[:-1], b[1:])
    assert all(launch.aligns is None
               for lowered in function.inspect_lowered() for launch in lowered.plan.launches)
