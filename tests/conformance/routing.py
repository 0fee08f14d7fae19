"""Route the parallel side of Numba's parfor tests through xpuc.

Numba's tests compile a function serially (the reference) and with
``parallel=True``, run both and compare them with plain Python. ``install``
turns every ``parallel=True`` compilation of ``numba.tests.test_parfors`` into
an ``xpuc.jit`` function that is called inside a device context, and leaves
the serial and Python sides to Numba. It patches that module and its test base
class, so it is only meant for a worker process that runs one test.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any

import numba
import numba.tests.test_parfors as parfor_tests

import xpuc

__all__ = ["ACTIVITY", "Activity", "OffloadedCompileResult", "OffloadedDispatcher", "install"]


@dataclass
class Activity:
    """What the routed functions did during a test."""

    functions: int = 0  # xpuc.jit functions made for the test's parallel side
    calls: int = 0  # calls of them under the device context
    # attributes that only Numba's own parallel compile can answer (its LLVM
    # library, parfor diagnostics...), read by the test: the report lists them
    # so that a pass is not mistaken for xpuc having produced them
    delegated: set[str] = field(default_factory=set)


ACTIVITY = Activity()
_device = "opencl:cpu"


def _call_on_device(function: xpuc.JitFunction, *args: Any, **kwargs: Any) -> Any:
    ACTIVITY.calls += 1
    with xpuc.device_context(_device):
        return function(*args, **kwargs)


class OffloadedCompileResult:
    """Stands for the ``CompileResult`` of ``njit(sig, parallel=True)`` that
    ``TestParforsBase`` compares: its ``entry_point`` runs through xpuc.

    Any other attribute describes Numba's CPU backend, which xpuc does not
    replace; it comes from Numba's own parallel compile, made on first use."""

    def __init__(self, func: Callable, sig: tuple, flags: dict[str, Any]) -> None:
        self.function = xpuc.jit(sig, **flags)(func)
        self._func, self._sig, self._flags = func, sig, flags
        self._numba: Any = None
        ACTIVITY.functions += 1

    def entry_point(self, *args: Any) -> Any:
        return _call_on_device(self.function, *args)

    def offloads_a_parfor(self) -> bool:
        """Whether xpuc lowered a parfor in place of Numba's scheduler (one
        whose body Numba's passes emptied has no kernel to launch, and
        neither has Numba's gufunc any work)."""
        try:
            return bool(self.function.inspect_lowered())
        except xpuc.XpucError:  # never compiled for a device: nothing was offloaded
            return False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not an attribute of a CompileResult
            raise AttributeError(name)
        ACTIVITY.delegated.add(name)
        if self._numba is None:
            self._numba = numba.njit(self._sig, **self._flags)(self._func).overloads[self._sig]
        return getattr(self._numba, name)


class OffloadedDispatcher:
    """Stands for the dispatcher that ``njit(..., parallel=True)`` returns in a
    test body: calls run through xpuc, and other attributes (``overloads``,
    ``parallel_diagnostics``...) come from Numba's own parallel dispatcher,
    compiled on first use for the argument types the test called with."""

    def __init__(self, function: xpuc.JitFunction, make_numba: Callable[[], Any]) -> None:
        self.function = function
        self.py_func = function.py_func
        self._make_numba = make_numba
        self._numba: Any = None
        self._argtypes: set[tuple] = set()
        ACTIVITY.functions += 1

    @property
    def _numba_type_(self) -> Any:
        """Passed into Numba code, it is the xpuc function (its CPU build)."""
        return self.function._numba_type_

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = _call_on_device(self.function, *args, **kwargs)
        self._argtypes.add(tuple(numba.typeof(arg) for arg in args))
        return result

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        ACTIVITY.delegated.add(name)
        if self._numba is None:
            self._numba = self._make_numba()
            if self._numba._can_compile:  # explicit signatures compile eagerly
                for argtypes in self._argtypes:
                    self._numba.compile(argtypes)
        return getattr(self._numba, name)


def _routed(decorator: Callable[..., Any]) -> Callable[..., Any]:
    """``decorator`` (``numba.njit`` or ``numba.jit``), whose ``parallel``
    compilations go to xpuc; serial ones stay Numba's."""

    def route(*args: Any, **options: Any) -> Any:
        if not options.get("parallel"):
            return decorator(*args, **options)
        made = xpuc.jit(*args, **options)
        if isinstance(made, xpuc.JitFunction):  # called as decorator(func, ...)
            return OffloadedDispatcher(made, lambda: decorator(*args, **options))
        return lambda func: OffloadedDispatcher(
            made(func), lambda: decorator(*args, **options)(func)
        )

    return route


class _RoutedNumba:
    """``numba`` as the code of a test method sees it: ``njit`` and ``jit``
    routed, anything else Numba's own."""

    njit = staticmethod(_routed(numba.njit))
    jit = staticmethod(_routed(numba.jit))

    def __getattr__(self, name: str) -> Any:
        return getattr(numba, name)


_ROUTED_NUMBA = "_xpuc_routed_numba"


def _route_numba_attribute_calls(cls: type) -> None:
    """Make the test methods of ``cls`` that call ``numba.njit`` or
    ``numba.jit`` look ``numba`` up as a ``_RoutedNumba``.

    Only the method's own code is changed (one entry of its names), not the
    module's ``numba``: the functions it defines keep the real module, which
    Numba's passes compare by identity (``numba.prange`` calls are only dead
    code, and fusable, when their module *is* numba)."""
    for name, method in list(vars(cls).items()):
        code = getattr(method, "__code__", None)
        if code is None or "numba" not in code.co_names:
            continue
        if not {"njit", "jit"} & set(code.co_names):
            continue
        names = tuple(_ROUTED_NUMBA if n == "numba" else n for n in code.co_names)
        routed = FunctionType(code.replace(co_names=names), method.__globals__, method.__name__,
                              method.__defaults__, method.__closure__)
        setattr(cls, name, functools.wraps(method)(routed))


def install(device: str) -> None:
    """Route the parallel side of ``numba.tests.test_parfors`` to ``device``."""
    global _device
    _device = device
    base = parfor_tests.TestParforsBase
    compile_this = base._compile_this
    check_scheduling = base.check_scheduling

    def routed_compile_this(self: Any, func: Callable, sig: tuple, **flags: Any) -> Any:
        if flags.get("parallel"):
            return OffloadedCompileResult(func, sig, flags)
        return compile_this(self, func, sig, **flags)

    def offload_scheduling(self: Any, cres: Any, scheduler_type: str | None) -> None:
        # Numba asserts that its CPU scheduler is called, i.e. that the
        # function has a parfor; xpuc's counterpart is an offloaded kernel.
        # Tests that expect no parfor look for this message in the failure.
        if not isinstance(cres, OffloadedCompileResult):
            check_scheduling(self, cres, scheduler_type)
        elif not cres.offloads_a_parfor():
            raise AssertionError("'@do_scheduling' not found: xpuc offloaded no parfor")

    base._compile_this = routed_compile_this
    base.check_scheduling = offload_scheduling
    parfor_tests.njit = _routed(numba.njit)
    setattr(parfor_tests, _ROUTED_NUMBA, _RoutedNumba())
    for value in list(vars(parfor_tests).values()):
        if isinstance(value, type) and value.__module__ == parfor_tests.__name__:
            _route_numba_attribute_calls(value)
