"""``xpuc.atomic``: atomic updates of array elements in explicit kernels, each
returning the value the element held before."""

from .frontend.kernel_atomics import (  # noqa: A004  (min and max, as SYCL names them)
    add,
    and_,
    compare_exchange,
    exchange,
    load,
    max,
    min,
    or_,
    store,
    sub,
    xor,
)

__all__ = ["add", "and_", "compare_exchange", "exchange", "load", "max", "min", "or_", "store",
           "sub", "xor"]
