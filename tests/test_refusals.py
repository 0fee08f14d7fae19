"""Refusals name the user's line and the user's names (issue 33, item 2).

Numba inlines library code into the user's function (xpuc's NumPy
overloads and dpnp constructors, the parallel loops Numba's parfor pass puts
in place of ``np.max`` or ``np.dot``); whatever of it cannot be offloaded is
refused at the user's line, naming the user's call or variable, never a file
inside xpuc or Numba, a function of theirs or a compiler temporary. Where a
construct below is offloaded instead, its answer must be right."""

import inspect
import re

import dpnp
import numba
import numpy as np
import pytest
from device_support import DEVICE

import xpuc

# what a refusal may never show: a path inside xpuc or Numba, a name Numba's
# inliner made, one of its temporaries, a Numba type where a user's word belongs
_INTERNAL = re.compile(r"numba/|compiler/frontend|xpuc/|__locals__|\$|_v\d|typeref|"
                       r"used as a scalar|Literal\[")


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn.py_func)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _refused_well_or_right(fn, args, expected, line_text, *named, source=None):
    """``fn(*args)`` gives ``expected``, or is refused at the line holding
    ``line_text`` (in ``source``, by default ``fn``) with a message naming each
    of ``named`` and nothing internal."""
    try:
        result = fn(*args)
    except xpuc.UnsupportedError as error:
        message = str(error)
        line = _line_of(source or fn, line_text)
        assert message.startswith(f"{__file__}:{line}: "), message
        assert not _INTERNAL.search(message.replace(__file__, "")), message
        for name in named:
            assert name in message, message
        return message
    np.testing.assert_allclose(dpnp.asnumpy(result), expected)
    return None


@xpuc.jit
def row_dots(A):
    out = np.empty(A.shape[0])
    for j in numba.prange(A.shape[0]):
        out[j] = np.dot(A[j, :], A[j, :])
    return out


@xpuc.jit
def row_maxima(x):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = np.max(x[i])
    return out


def test_library_calls_in_a_body_are_refused_as_the_users_call():
    host = np.arange(12.0).reshape(3, 4)
    message = _refused_well_or_right(row_dots, (dpnp.asarray(host),),
                                     (host * host).sum(axis=1), "np.dot(", "np.dot(...)")
    if message is not None:
        assert "_check_vector_sizes" not in message
    message = _refused_well_or_right(row_maxima, (dpnp.asarray(host),), host.max(axis=1),
                                     "np.max(", "np.max(...)")
    if message is not None:
        assert "max_checker" not in message


@xpuc.jit
def broadcast_column_sums(x):
    m = np.empty(x.shape, x.dtype)
    m[:] = np.sum(x, axis=0)
    return m


def test_an_array_a_library_call_made_is_named_by_the_call():
    host = np.arange(6.0).reshape(2, 3)
    _refused_well_or_right(broadcast_column_sums, (dpnp.asarray(host),),
                           np.broadcast_to(host.sum(axis=0), host.shape),
                           "m[:] = np.sum", "np.sum(...)")


@xpuc.jit
def body_constructor(x):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        t = dpnp.empty(3)
        t[0] = x[i]
        out[i] = t[0]
    return out


@xpuc.jit
def body_constructor_of_a_shape(x, k):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        t = dpnp.empty(shape=(k, 2))
        t[0, 0] = x[i]
        out[i] = t[0, 0]
    return out


@xpuc.jit
def block_products(G, H):
    out = np.empty(G.shape[0])
    for k in numba.prange(G.shape[0]):
        P = G[k] @ H[k]
        out[k] = P[0, 0]
    return out


def test_arrays_made_in_a_body_are_refused_in_the_users_words():
    x = np.arange(4.0)
    _refused_well_or_right(body_constructor, (dpnp.asarray(x),), x, "dpnp.empty(3)",
                           "dpnp.empty(...)")
    _refused_well_or_right(body_constructor_of_a_shape, (dpnp.asarray(x), 3), x,
                           "dpnp.empty(shape", "dpnp.empty(...)")
    blocks = np.arange(16.0).reshape(4, 2, 2)
    _refused_well_or_right(block_products, (dpnp.asarray(blocks), dpnp.asarray(blocks)),
                           (blocks @ blocks)[:, 0, 0], "G[k] @ H[k]", "G")


def test_library_code_runs_at_the_users_line_in_the_ir():
    """Locations of inlined code are the user's: the MLIR's locations (and so
    any failure of a later stage) name the user's file, never xpuc's or Numba's."""
    @xpuc.jit
    def column_sums(x):
        return np.sum(x, axis=0)

    x = dpnp.asarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(dpnp.asnumpy(column_sums(x)), [3.0, 5.0, 7.0])
    text = "\n".join(lowered.source for lowered in column_sums.inspect_lowered())
    locations = set(re.findall(r'loc\("([^"]+)"', text))
    assert locations == {__file__}, locations


def test_an_unsupported_callee_of_a_library_call_names_the_users_call_only():
    """A dpnp constructor in a body with a shape no kernel can allocate."""
    @xpuc.jit
    def sized_by_data(x, n):
        out = np.empty(x.shape[0])
        for i in numba.prange(x.shape[0]):
            t = dpnp.zeros(n + i)
            out[i] = t[0] + x[i]
        return out

    with pytest.raises(xpuc.UnsupportedError) as error:
        sized_by_data(dpnp.ones(4), 2)
    message = str(error.value)
    assert message.startswith(f"{__file__}:{_line_of(sized_by_data, 'dpnp.zeros')}: ")
    assert "dpnp.zeros(...)" in message
    assert not _INTERNAL.search(message.replace(__file__, "")), message


@xpuc.jit
def sines_into(a, out):
    out[:] = np.sin(a)


def test_a_refusal_in_library_code_nested_in_library_code_is_said_once():
    """``out[:] = f(a)`` becomes library code holding a parfor whose body is
    library code: each statement's refusal context sees the refusal, which
    names the user's line, the statement as written and the reason once."""
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as error:
        sines_into(np.ones(4, np.complex128), np.zeros(4, np.complex128))
    message = str(error.value)
    # named as the user wrote it: xpuc's rewrite of the store is no call of theirs
    assert message.startswith(f"{__file__}:{_line_of(sines_into, 'out[:]')}: "
                              "'out[:] = np.sin(a)' cannot be offloaded: "), message
    assert message.count("cannot be offloaded") == 1, message
    assert message.endswith(": call to numpy.sin on complex numbers in a parfor body")


@numba.njit
def corner_of_square(blocks, i):
    block = blocks[i]
    square = block @ block
    return square[0, 0]


@xpuc.jit
def corners(blocks):
    out = np.empty(blocks.shape[0])
    for i in numba.prange(blocks.shape[0]):
        out[i] = corner_of_square(blocks, i)
    return out


def test_a_device_functions_variables_keep_their_names():
    """Inlined where it is called, a device function's variables are named as
    its code names them, not as Numba's inliner renamed them."""
    blocks = np.arange(16.0).reshape(4, 2, 2)
    message = _refused_well_or_right(corners, (dpnp.asarray(blocks),),
                                     (blocks @ blocks)[:, 0, 0], "block = blocks[i]", "'block'",
                                     source=corner_of_square)
    if message is not None:
        assert "corner_of_square" not in message


@xpuc.jit
def binned_means(data, radius, bins):
    res = np.zeros(bins)
    for i in numba.prange(bins):
        mask = np.logical_and(i / bins <= radius, radius < (i + 1) / bins)
        res[i] = data[mask].mean()
    return res


def test_an_array_expression_in_a_body_is_refused_as_an_array_made_there():
    """dpbench's azimint_naive, with dpnp arrays."""
    data, radius = np.arange(20.0), np.linspace(0.0, 0.99, 20)
    expected = [data[(i / 4 <= radius) & (radius < (i + 1) / 4)].mean() for i in range(4)]
    _refused_well_or_right(binned_means, (dpnp.asarray(data), dpnp.asarray(radius), 4),
                           expected, "mask = np.logical_and", "an array made in a parfor body")


# ---- constructs no rule translates, named as the user wrote them ----------------

def _makes_a_list(out, src):
    for i in numba.prange(out.shape[0]):
        pair = [src[i], 1.0]
        out[i] = pair[0]


def _makes_a_set(out, src):
    for i in numba.prange(out.shape[0]):
        seen = {1, 2}
        out[i] = len(seen) + src[i]


def _makes_a_dict(out, src):
    for i in numba.prange(out.shape[0]):
        table = {1: src[i]}
        out[i] = table[1]


def _sets_an_attribute(out, src):
    for i in numba.prange(out.shape[0]):
        src.shape = (4,)
        out[i] = 1.0


def _enters_object_mode(out, src):
    for i in numba.prange(out.shape[0]):
        with numba.objmode(x="float64"):
            x = 1.0
        out[i] = x + src[i]


@pytest.mark.parametrize("fn, line_text, construct", [
    (_makes_a_list, "pair = [src[i], 1.0]", "a list in a parfor body"),
    (_makes_a_set, "seen = {1, 2}", "a set in a parfor body"),
    (_makes_a_dict, "table = {1: src[i]}", "a dict in a parfor body"),
    (_sets_an_attribute, "src.shape = (4,)", "setting an attribute in a parfor body"),
    (_enters_object_mode, "with numba.objmode", "call to numba.objmode in a parfor body"),
], ids=["list", "set", "dict", "setattr", "objmode"])
def test_constructs_without_a_rule_are_named_as_written_not_as_numba_ir(fn, line_text,
                                                                        construct):
    """Not ``expression 'build_list'``, ``SetAttr``, or an object's repr."""
    jitted = xpuc.jit(fn)
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        jitted(np.zeros(4), np.ones(4))
    message = str(refusal.value)
    assert message == f"{__file__}:{_line_of(jitted, line_text)}: {construct}", message
