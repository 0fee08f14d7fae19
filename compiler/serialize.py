"""Pickling of jit functions and kernels as Numba pickles its dispatchers:
the Python function (by value where it cannot be imported by name: closures,
``__main__``; with Numba's cloudpickle) and the options, never compiled code,
so that Dask and multiprocessing can ship them to other processes.

Each pickled object carries an id: unpickling it again in a process (Dask
sends a function with every task) gives the object made the first time, with
what it compiled, instead of a new one that compiles again. The process
keeps every object so made (a weak reference would lose it between two of
Dask's tasks), as Numba keeps its unpickled dispatchers."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from numba.core import serialize

_by_id: dict[str, Any] = {}
_lock = threading.Lock()


def reduce_with_function(instance: Any, py_func: Callable, *state: Any) -> tuple:
    """``__reduce__``'s value for ``instance``, which ``type(instance)(py_func,
    *state)`` makes again."""
    with _lock:
        key = instance.__dict__.get("_pickle_id")
        if key is None:
            key = instance._pickle_id = uuid.uuid4().hex
            _by_id[key] = instance
    return _rebuild, (type(instance), key, serialize.dumps(py_func), state)


def _rebuild(cls: type, key: str, pickled_function: bytes, state: tuple) -> Any:
    with _lock:
        found = _by_id.get(key)
        if found is None:
            found = cls(serialize.loads(pickled_function), *state)
            found._pickle_id = key
            _by_id[key] = found
    return found
