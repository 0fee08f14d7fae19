"""The translation rules of parfor bodies and kernels, one module per domain;
importing this package registers them all in the tables of translation.py.

- arithmetic: operators, calls on scalars and complex numbers, float(),
  casts, attributes (np.pi, .real, a namedtuple's fields, a.shape)
- arrays: element reads and writes, views and slices, np.empty, tuples
- array_reductions: reductions into arrays in a prange (acc += row), atomic
- body_checks: the shape checks of np.min, np.max and np.dot on a body's arrays
- computed_arrays: arrays a body makes of a size known when running (array
  expressions, x.copy(), np.reshape, np.sum along an axis, x[mask]), each
  element computed where read
- control_flow: for over range(), a prange nested in a prange body
- printing: print() of scalars and string constants, by the device's printf
- products: a @ b and np.dot of vectors and matrices, computed where used
- reductions: IndexValue and min/max of two (np.argmin, np.argmax)
- threads: numba.get_num_threads and friends

The rules only explicit kernels see (work-item functions, barrier, local
arrays, atomics) are in ../kernel_intrinsics.py."""

from . import (
    arithmetic,
    arrays,
    body_checks,
    computed_arrays,
    control_flow,
    printing,
    products,
    reductions,
    threads,
)

__all__ = ["arithmetic", "arrays", "body_checks", "computed_arrays", "control_flow", "printing",
           "products", "reductions", "threads"]
