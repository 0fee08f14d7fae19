"""What people write in programs for numba-dpex's dpjit (issue 33, item 3),
offloaded: each construct run on dpnp arrays and on NumPy arrays in a device
context, checked against the plain Python function on NumPy arrays and
checked to launch kernels."""

import cmath

import numba
import numpy as np
import pytest

import xpuc

dpnp = pytest.importorskip("dpnp")

DEVICE = "opencl:cpu"


def run_on_device(function, *values, inputs: str):
    """``function`` jitted and called with the arrays among ``values`` as dpnp
    arrays (``inputs="dpnp"``) or as NumPy arrays in a device context
    (``"numpy"``): its result and the arrays it was given, on the host, and
    how many kernels it launched."""
    jitted = xpuc.jit(function)
    xpuc.reset_stats()
    if inputs == "dpnp":
        args = [dpnp.asarray(v, device=DEVICE) if isinstance(v, np.ndarray) else v
                for v in values]
        result = jitted(*args)
        as_host = dpnp.asnumpy
    else:
        args = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
        with xpuc.device_context(DEVICE):
            result = jitted(*args)
        as_host = np.asarray
    launches = xpuc.stats()["kernel_launches"]
    arrays = [as_host(a) for a in args if not np.isscalar(a)]
    return as_host(result), arrays, launches


def check_offloaded(function, *values, inputs: str, rtol: float = 1e-12) -> None:
    """``function`` on the device gives what it gives in Python on NumPy
    arrays (its result and what it wrote to its arguments), launching kernels."""
    host_args = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    expected = function(*host_args)
    result, arrays, launches = run_on_device(function, *values, inputs=inputs)
    np.testing.assert_allclose(result, expected, rtol=rtol)
    for written, host in zip(arrays, [a for a in host_args if isinstance(a, np.ndarray)]):
        np.testing.assert_allclose(written, host, rtol=rtol)
    assert launches > 0


INPUTS = ["dpnp", "numpy"]


# ---- in-place operators on whole arrays ------------------------------------------


def scale_in_place(a, s):
    a *= s
    return a


def center_rows(data):
    mean = np.sum(data, axis=0) / data.shape[0]
    data -= mean
    return data


def subtract_row(data, row):
    data -= row
    return data


def add_arrays_in_place(a, b):
    a += b
    a /= 2.0
    return a


def scale_in_a_loop(a, steps):
    for _ in range(steps):
        a *= 0.5
    return a


@pytest.mark.parametrize("inputs", INPUTS)
def test_in_place_operator_with_a_scalar(inputs):
    check_offloaded(scale_in_place, np.arange(10.0), 3.0, inputs=inputs)


@pytest.mark.parametrize("inputs", INPUTS)
def test_in_place_operator_broadcasting_a_row(inputs):
    data = np.arange(12.0).reshape(4, 3) ** 2
    check_offloaded(center_rows, data, inputs=inputs)
    check_offloaded(subtract_row, data, np.array([1.0, 2.0, 3.0]), inputs=inputs)


@pytest.mark.parametrize("inputs", INPUTS)
def test_in_place_operators_with_arrays_and_in_host_loops(inputs):
    check_offloaded(add_arrays_in_place, np.arange(6.0), np.ones(6), inputs=inputs)
    check_offloaded(scale_in_a_loop, np.arange(6.0), 3, inputs=inputs)


def in_place_on_a_row(a):
    a[1] += 10.0
    return a


@pytest.mark.parametrize("inputs", INPUTS)
def test_in_place_operator_on_a_view(inputs):
    check_offloaded(in_place_on_a_row, np.arange(6.0).reshape(2, 3), inputs=inputs)


# ---- np.reshape and np.transpose of device arrays --------------------------------


def reshape_then_scale(y, rows):
    return np.reshape(y, (rows, y.size // rows)) * 2.0


def transpose_then_add(y):
    return np.transpose(y) + 1.0


@pytest.mark.parametrize("inputs", INPUTS)
def test_reshape_and_transpose_functions(inputs):
    check_offloaded(reshape_then_scale, np.arange(12.0), 3, inputs=inputs)
    check_offloaded(transpose_then_add, np.arange(12.0).reshape(3, 4), inputs=inputs)


# ---- NumPy reductions of a body's own views --------------------------------------


def row_ranges(x):
    out = np.empty(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = np.max(x[i]) - np.min(x[i])
    return out


def row_norms(a):
    out = np.empty(a.shape[0])
    for j in numba.prange(a.shape[0]):
        out[j] = np.dot(a[j, :], a[j, :])
    return out


def row_dots(a, b):
    out = np.empty(a.shape[0])
    for j in numba.prange(a.shape[0]):
        out[j] = np.dot(a[j, :], b[j, :])
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_min_and_max_of_a_row(inputs):
    x = np.sin(np.arange(20.0)).reshape(5, 4)
    check_offloaded(row_ranges, x, inputs=inputs)
    check_offloaded(row_ranges, x.astype(np.int32) * 7, inputs=inputs)


def test_max_of_an_empty_row_is_the_reductions_start():
    """A kernel cannot raise NumPy's error for an empty array: its maximum in a
    body is where the reduction starts (docs/spec.md)."""
    result, _, launches = run_on_device(row_ranges, np.empty((3, 0)), inputs="numpy")
    assert np.all(result == -np.inf) and launches == 1  # max -inf, min +inf


@pytest.mark.parametrize("inputs", INPUTS)
def test_dot_of_a_row_with_itself(inputs):
    check_offloaded(row_norms, np.arange(12.0).reshape(4, 3), inputs=inputs)


def prefix_dots(a, m):
    out = np.empty(a.shape[0])
    for j in numba.prange(a.shape[0]):
        out[j] = np.dot(a[j, :m], a[(j + 1) % a.shape[0], :m])
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_dot_of_two_rows_sliced_alike(inputs):
    """Their lengths are one slice of one dimension: equal with no check."""
    check_offloaded(prefix_dots, np.arange(20.0).reshape(4, 5), 3, inputs=inputs)


@pytest.mark.parametrize("inputs", INPUTS)
def test_dot_of_rows_of_two_arrays(inputs):
    check_offloaded(row_dots, np.arange(12.0).reshape(4, 3), np.ones((4, 3)) * 0.5,
                    inputs=inputs)


def test_dot_of_rows_of_different_lengths_raises_numpys_error_before_the_launch():
    """The host compares the rows' lengths (the arrays' dimensions) before the
    launch, since a kernel cannot raise."""
    with xpuc.device_context(DEVICE), pytest.raises(ValueError) as error:
        xpuc.jit(row_dots)(np.ones((4, 3)), np.ones((4, 2)))
    line = row_dots.__code__.co_firstlineno + 3
    assert str(error.value) == (f"{__file__}:{line}: incompatible array sizes for "
                                "np.dot(a, b) (vector * vector)")


def triangular_product(alpha, A, B):  # dpbench's trmm
    for i in range(B.shape[0]):
        for j in numba.prange(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha
    return B


@pytest.mark.parametrize("inputs", INPUTS)
def test_dot_of_columns_of_two_arrays_sliced_alike(inputs):
    """``A[i + 1:, i]`` and ``B[i + 1:, j]``: one slice of two arrays' first
    dimensions, which the host compares before the launch."""
    rng = np.random.default_rng(2)
    check_offloaded(triangular_product, 1.5, rng.random((7, 7)), rng.random((7, 5)),
                    inputs=inputs)


def test_dot_of_columns_of_arrays_of_different_heights_raises_before_the_launch():
    with xpuc.device_context(DEVICE), pytest.raises(ValueError) as error:
        xpuc.jit(triangular_product)(1.0, np.ones((4, 4)), np.ones((5, 3)))
    line = triangular_product.__code__.co_firstlineno + 3
    assert str(error.value) == (f"{__file__}:{line}: incompatible array sizes for "
                                "np.dot(a, b) (vector * vector)")


def dots_of_columns_cut_apart(A, B, k, m):
    out = np.empty(B.shape[1])
    for j in numba.prange(B.shape[1]):
        out[j] = np.dot(A[k:, j], B[m:, j])
    return out


def test_dot_of_columns_cut_by_different_bounds_is_refused():
    """Their lengths differ unless ``A.shape[0] - k == B.shape[0] - m``, which
    xpuc does not compare."""
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        xpuc.jit(dots_of_columns_cut_apart)(np.ones((4, 3)), np.ones((5, 3)), 1, 2)
    line = dots_of_columns_cut_apart.__code__.co_firstlineno + 3
    assert str(refusal.value).startswith(f"{__file__}:{line}: np.dot(...) cannot be offloaded")


def symmetric_dots(A, B, out):  # dpbench's symm
    for i in range(B.shape[0]):
        for j in numba.prange(B.shape[1]):
            out[i, j] = B[:i, j] @ A[i, :i]
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_product_of_two_vectors_cut_alike(inputs):
    """``B[:i, j] @ A[i, :i]``: a serial dot in the body, ``B.shape[0]`` and
    ``A.shape[1]`` compared by the host."""
    rng = np.random.default_rng(3)
    check_offloaded(symmetric_dots, rng.random((6, 6)), rng.random((6, 4)), np.zeros((6, 4)),
                    inputs=inputs)


def sparse_rows(A_row, A_col, A_val, x):  # dpbench's spmv
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in numba.prange(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def _sparse_matrix(rows: int, columns: int, seed: int):
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((rows, columns)) < 0.3, rng.random((rows, columns)), 0.0)
    A_col = np.concatenate([np.flatnonzero(row) for row in dense]).astype(np.int64)
    A_row = np.concatenate([[0], np.cumsum([np.count_nonzero(row) for row in dense])])
    return A_row.astype(np.int64), A_col, dense[dense != 0], rng.random(columns)


@pytest.mark.parametrize("inputs", INPUTS)
def test_dot_of_a_slice_with_a_gather(inputs):
    """``vals @ x[cols]``: ``x`` read at ``cols`` in the dot's loop, no array
    made; ``A_col`` and ``A_val`` cut by one slice, compared by the host."""
    check_offloaded(sparse_rows, *_sparse_matrix(9, 7, 4), inputs=inputs)


def test_gather_of_a_slice_of_another_length_raises_before_the_launch():
    A_row, A_col, A_val, x = _sparse_matrix(5, 5, 5)
    with xpuc.device_context(DEVICE), pytest.raises(ValueError) as error:
        xpuc.jit(sparse_rows)(A_row, A_col[:-1], A_val, x)
    line = sparse_rows.__code__.co_firstlineno + 5
    assert str(error.value) == (f"{__file__}:{line}: incompatible array sizes for "
                                "np.dot(a, b) (vector * vector)")


def gathers_elsewhere(x, cols):
    out = np.empty(cols.shape[0])
    for i in numba.prange(cols.shape[0]):
        picked = x[cols]
        out[i] = picked[i] + np.sum(x[cols])
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_gathers_read_where_used(inputs):
    check_offloaded(gathers_elsewhere, np.arange(6.0), np.array([5, 0, -1, 2]), inputs=inputs)


def gather_of_rows(x, rows):
    out = np.empty(rows.shape[0])
    for i in numba.prange(rows.shape[0]):
        out[i] = np.sum(x[rows][i])
    return out


def write_into_a_gather(x, cols):
    for i in numba.prange(cols.shape[0]):
        x[cols][i] = 1.0
    return x


def test_other_gathers_are_refused_by_name():
    with xpuc.device_context(DEVICE):
        with pytest.raises(xpuc.UnsupportedError) as refusal:
            xpuc.jit(gather_of_rows)(np.ones((3, 2)), np.array([0, 2]))
        line = gather_of_rows.__code__.co_firstlineno + 3
        assert str(refusal.value).startswith(
            f"{__file__}:{line}: array 'x' indexed with an array in a parfor body")
        with pytest.raises(xpuc.UnsupportedError) as refusal:
            xpuc.jit(write_into_a_gather)(np.ones(3), np.array([0, 2]))
        line = write_into_a_gather.__code__.co_firstlineno + 2
        assert str(refusal.value) == (
            f"{__file__}:{line}: assignment to an element of a gather of array 'x' (a copy) in "
            "a parfor body")


def correlations(M, data):  # dpbench's correlation and covariance
    data -= np.sum(data, axis=0) / data.shape[0]
    corr = np.eye(M, dtype=data.dtype)
    for i in numba.prange(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M] / 2.0
    return corr


def matrix_vector_rows(A, v, out):
    for i in numba.prange(v.shape[0]):
        out[i, :] = A @ v[i, :]
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_vector_matrix_product_stored_into_slices(inputs):
    """``data[:, i] @ data[:, i + 1:M]``: each element computed where the
    slice stores it, no array made; ``corr.shape`` and ``data.shape[1]``
    compared by the host."""
    check_offloaded(correlations, 5, np.random.default_rng(6).random((7, 5)), inputs=inputs)


@pytest.mark.parametrize("inputs", INPUTS)
def test_matrix_vector_product_stored_into_a_row(inputs):
    rng = np.random.default_rng(7)
    check_offloaded(matrix_vector_rows, rng.random((3, 4)), rng.random((5, 4)), np.zeros((5, 3)),
                    inputs=inputs)


def test_vector_matrix_product_of_another_length_raises_before_the_launch():
    with xpuc.device_context(DEVICE), pytest.raises(AssertionError) as error:
        xpuc.jit(correlations)(5, np.ones((4, 3)))
    line = correlations.__code__.co_firstlineno + 4
    assert str(error.value) == f"{__file__}:{line}: sizes of a slice and an array do not match"


def two_layers(x, w1, b1, w2):  # dpbench's mlp, host code
    hidden = np.maximum(x @ w1 + b1, 0)
    return np.dot(hidden, w2)


@pytest.mark.parametrize("inputs", INPUTS)
def test_product_of_matrices_in_host_code(inputs):
    """``x @ w`` of two matrices outside any loop: on dpnp arrays a parallel
    loop over the product's elements (host code cannot read device arrays)."""
    rng = np.random.default_rng(8)
    check_offloaded(two_layers, rng.random((6, 3)), rng.random((3, 5)), rng.random(5),
                    rng.random((5, 2)), inputs=inputs)


def test_product_of_matrices_of_other_sizes_raises_numpys_error():
    with pytest.raises(ValueError, match=r"incompatible array sizes for np.dot\(a, b\) "
                                         r"\(matrix \* matrix\)"):
        run_on_device(two_layers, np.ones((2, 3)), np.ones((2, 3)), np.ones(3), np.ones((3, 1)),
                      inputs="dpnp")


def product_with_a_made_matrix(x, w):  # lenet's x @ fc1w, x made by the function
    hidden = np.maximum(x, 0.0)
    return hidden @ w


@pytest.mark.parametrize("inputs", INPUTS)
def test_product_of_a_made_matrix_with_a_given_one(inputs):
    """In a device context the product of an array the function made (a
    device array) with a NumPy argument runs on the device too."""
    rng = np.random.default_rng(9)
    check_offloaded(product_with_a_made_matrix, rng.random((4, 3)) - 0.5, rng.random((3, 2)),
                    inputs=inputs)


def products_of_blocks(G, H):
    out = np.empty(G.shape[0])
    for k in numba.prange(G.shape[0]):
        out[k] = np.sum(G[k] @ H[k])
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_product_of_two_matrices_in_a_body(inputs):
    """``G[k] @ H[k]`` computed where ``np.sum`` reads it: no array of the
    body's (NumPy's product is inlined in host code only)."""
    rng = np.random.default_rng(10)
    check_offloaded(products_of_blocks, rng.random((3, 4, 4)), rng.random((3, 4, 4)),
                    inputs=inputs)


def complex_products_of_blocks(G, H, v, out, dots):
    for k in numba.prange(G.shape[0]):
        out[k, :, :] = G[k] @ H[k]
        out[k, 0, :] += G[k] @ v[k]
        dots[k] = v[k] @ H[k, 0]
    return dots


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_products_of_blocks_in_a_body(inputs, dtype):
    """Products of complex matrices and vectors (scattering_self_energies'
    ``G[...] @ dH[a, b, i]``): a matrix product stored into a row of blocks,
    a matrix-vector product added to a row of it, a dot of vectors."""
    rng = np.random.default_rng(11)

    def blocks(*shape):
        return (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)

    check_offloaded(complex_products_of_blocks, blocks(3, 4, 4), blocks(3, 4, 4), blocks(3, 4),
                    np.zeros((3, 4, 4), dtype), np.zeros(3, dtype), inputs=inputs,
                    rtol=1e-5 if dtype == np.complex64 else 1e-12)


def scaled_complex_blocks(H, D, out):
    for k in numba.prange(H.shape[0]):
        scaled = H[k] * D[k, 1]
        out[k, :, :] = scaled
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_complex_array_expression_in_a_body(inputs):
    """scattering_self_energies' ``dHD = dH[a, b, j] * D[q, w, a, b, i, j]``:
    an array expression of complex numbers, computed where read."""
    rng = np.random.default_rng(12)
    H = rng.random((3, 2, 4)) + 1j * rng.random((3, 2, 4))
    D = rng.random((3, 2)) - 1j * rng.random((3, 2))
    check_offloaded(scaled_complex_blocks, H, D, np.zeros_like(H), inputs=inputs)


def product_of_a_product(G, H, out):
    for k in numba.prange(G.shape[0]):
        out[k, :] = (G[k] @ H[k]) @ H[k, 0]
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_product_of_a_product(inputs):
    """A product with a product: each element of the inner one computed where
    the outer one reads it."""
    rng = np.random.default_rng(13)
    check_offloaded(product_of_a_product, rng.random((2, 3, 4)), rng.random((2, 4, 4)),
                    np.zeros((2, 3)), inputs=inputs)


def self_energies(neighbours, dH, G, D, Sigma):  # dpbench's scattering_self_energies, reduced
    for k in numba.prange(G.shape[0]):
        for a in numba.prange(neighbours.shape[0]):
            for i in range(dH.shape[1]):
                dHG = G[k, neighbours[a]] @ dH[a, i]
                dHD = dH[a, i] * D[k, a, i]
                Sigma[k, a] += dHG @ dHD
    return Sigma


@pytest.mark.parametrize("inputs", INPUTS)
def test_complex_products_of_products_added_to_a_block(inputs):
    """``Sigma[k, a] += dHG @ dHD``: the product of a complex product and a
    complex array expression, added in place to a block of ``Sigma`` (the
    store that ends ``a[i] += x`` writes nothing more)."""
    rng = np.random.default_rng(14)

    def blocks(*shape):
        return rng.random(shape) + 1j * rng.random(shape)

    check_offloaded(self_energies, np.array([2, 0, 1]), blocks(3, 2, 4, 4), blocks(2, 3, 4, 4),
                    blocks(2, 3, 2), blocks(2, 3, 4, 4), inputs=inputs)


# ---- arrays made in a body of a size known when running -------------------------


def convolution(input, weights):  # dpbench's conv2d and lenet
    K = weights.shape[0]
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_in = input.shape[3]
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)
    for i in numba.prange(H_out):
        for j in numba.prange(W_out):
            inp = input[:, i:i + K, j:j + K, :].copy()
            output[:, i, j, :] = np.sum(np.sum(np.sum(
                np.reshape(inp, (N, K, K, C_in, 1)) * np.reshape(weights, (1, K, K, C_in, C_out)),
                axis=1), axis=1), axis=1)
    return output


@pytest.mark.parametrize("inputs", INPUTS)
def test_copy_reshape_broadcast_and_sums_along_axes_in_a_body(inputs):
    """conv2d's window: ``.copy()`` of a view, ``np.reshape``, a broadcasting
    product and ``np.sum(..., axis=1)`` three times, none of them held in
    memory, each element computed where the slice store reads it. On USM
    arrays too, where ``np.sum`` along an axis in host code is xpuc's
    parallel loop (numpy_functions.py): in a body it stays NumPy's function."""
    rng = np.random.default_rng(5)
    check_offloaded(convolution, rng.random((2, 7, 6, 3), dtype=np.float32),
                    rng.random((3, 3, 3, 4), dtype=np.float32), inputs=inputs, rtol=1e-5)


@pytest.mark.parametrize("usm_type", ["shared", "host"])
def test_sums_along_axes_in_a_body_of_arrays_the_host_reads(usm_type):
    """A parfor over arrays the host can read may run on the host (SPEC rule
    13), but Numba cannot lower the body's ``np.sum(x, axis=k)`` of USM
    arrays: that parfor always launches, tiny or not."""
    rng = np.random.default_rng(6)
    for shapes in (((2, 7, 6, 3), (3, 3, 3, 4)), ((1, 2, 2, 1), (2, 2, 1, 1))):
        values = [rng.random(shape, dtype=np.float32) for shape in shapes]
        xpuc.reset_stats()
        result = xpuc.jit(convolution)(*(dpnp.asarray(v, device=DEVICE, usm_type=usm_type)
                                         for v in values))
        assert xpuc.stats()["kernel_launches"] > 0
        np.testing.assert_allclose(dpnp.asnumpy(result), convolution(*values), rtol=1e-5)


jitted_convolution = xpuc.jit(convolution)


def padded_convolutions(input, first, second):  # dpbench's resnet, reduced
    padded = np.zeros((input.shape[0], input.shape[1] + 2, input.shape[2] + 2, first.shape[3]))
    padded[:, 1:-1, 1:-1, :] = jitted_convolution(input, first)
    return jitted_convolution(padded, second)


@pytest.mark.parametrize("inputs", INPUTS)
def test_convolution_of_a_padded_convolution(inputs):
    """The second convolution's store ``output[:, i, j, :] = ...`` is
    compared with a length array analysis computes in the body (the slice of
    a whole dimension, ``wrap_index(n, n) - 0``), which is that dimension: the
    host compares it before the launch."""
    rng = np.random.default_rng(7)
    check_offloaded(padded_convolutions, rng.random((2, 5, 4, 3), dtype=np.float32),
                    rng.random((1, 1, 3, 4), dtype=np.float32),
                    rng.random((3, 3, 4, 2), dtype=np.float32), inputs=inputs, rtol=1e-5)


def transfer_matrices(n, H, z, out):  # dpbench's contour_integral, to its np.linalg.inv
    for i in numba.prange(z.shape[0]):
        T = np.zeros((n, n), dtype=np.complex128)
        for m in numba.prange(H.shape[0]):
            T += np.power(z[i], H.shape[0] / 2 - m) * H[m]
        out[i, :, :] = T
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_private_complex_array_of_a_shape_given_by_an_argument(inputs):
    """``np.zeros((n, n), dtype=np.complex128)`` in a body, ``n`` an argument:
    the work-item's own array of complex numbers, updated in place by an
    inner loop (not an array computed where read: the body writes it)."""
    rng = np.random.default_rng(15)
    check_offloaded(transfer_matrices, 3, rng.random((3, 3, 3)) + 1j * rng.random((3, 3, 3)),
                    rng.random(4) + 0.5j, np.zeros((4, 3, 3), np.complex128), inputs=inputs)


def dpnp_zeros_in_a_body(n, H, out):
    for i in numba.prange(H.shape[0]):
        T = dpnp.zeros((n, n), dtype=H.dtype)
        T += H[i]
        out[i, :, :] = T
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_dpnp_zeros_in_a_body(dtype):
    """dpnp's constructor fills its array through ``a.reshape(a.size)[:]``: of
    the work-item's own array, a reshape is a view of its memory."""
    H = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * (1 + 1j if dtype == np.complex128 else 1)
         ).astype(dtype)
    result, _, launches = run_on_device(dpnp_zeros_in_a_body, 3, H, np.zeros_like(H),
                                        inputs="dpnp")
    np.testing.assert_array_equal(result, H)  # zeros, plus H[i]
    assert launches > 0


def inverses(n, H, out):
    for i in numba.prange(H.shape[0]):
        T = np.zeros((n, n), dtype=np.complex128)
        T += H[i]
        out[i, :, :] = np.linalg.inv(T)
    return out


def test_linalg_inv_in_a_body_is_refused_at_its_line():
    H = np.ones((2, 3, 3), np.complex128)
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        xpuc.jit(inverses)(3, H, np.zeros_like(H))
    line = inverses.__code__.co_firstlineno + 4
    assert str(refusal.value) == (
        f"{__file__}:{line}: call to numpy.linalg.inv of an array in a parfor body, where xpuc "
        "computes only numbers and the array functions docs/spec.md lists")


def symmetric_update(alpha, beta, C, A, B):  # dpbench's symm
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in numba.prange(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2
    return C


@pytest.mark.parametrize("inputs", INPUTS)
def test_in_place_update_of_a_slice_with_an_array_expression(inputs):
    """``C[:i, j] += alpha * B[i, j] * A[i, :i]``: the array expression of a
    view (a run-time length) computed where the update reads it."""
    rng = np.random.default_rng(6)
    check_offloaded(symmetric_update, 1.5, 1.2, rng.random((7, 5)), rng.random((7, 7)),
                    rng.random((7, 5)), inputs=inputs)


def radial_means(data, radius, npt):  # dpbench's azimint_naive
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in numba.prange(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def masked_sums_and_counts(x, limits, out):
    for i in numba.prange(limits.shape[0]):
        chosen = x[x < limits[i]]
        out[i, 0] = np.sum(chosen)
        out[i, 1] = chosen.size
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_boolean_mask_gathers_reduced_in_a_body(inputs):
    """``data[mask].mean()``, ``np.sum(x[mask])`` and ``.size``: loops over
    the mask's elements, skipping where it is false, nothing gathered."""
    rng = np.random.default_rng(7)
    check_offloaded(radial_means, rng.random(500), rng.random(500), 9, inputs=inputs)
    check_offloaded(masked_sums_and_counts, rng.random(300), np.linspace(0.0, 1.0, 6),
                    np.zeros((6, 2)), inputs=inputs)


def test_boolean_mask_of_another_length_raises_numpys_error_before_the_launch():
    data, radius = (dpnp.asarray(np.ones(n), device=DEVICE) for n in (10, 9))
    with pytest.raises(IndexError) as error:
        xpuc.jit(radial_means)(data, radius, 4)
    line = radial_means.__code__.co_firstlineno + 7
    assert str(error.value) == (
        f"{__file__}:{line}: boolean index did not match indexed array along axis 0")


def copied_rows(x, out):
    for i in numba.prange(x.shape[0]):
        row = x[i].copy()
        doubled = row * 2.0
        out[i] = np.sum(doubled) + doubled[0] + row.shape[0]
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_copy_and_array_expression_of_a_row_read_where_used(inputs):
    check_offloaded(copied_rows, np.arange(20.0).reshape(4, 5), np.zeros(4), inputs=inputs)


def copy_of_a_written_array(x, out):
    for i in numba.prange(x.shape[0]):
        row = x[i].copy()
        x[i, 0] = 5.0
        out[i] = np.sum(row)
    return out


def mask_read_at_an_element(x, out):
    for i in numba.prange(out.shape[0]):
        out[i] = x[x > i][0]
    return out


def reshape_to_an_unknown_extent(x, out):
    for i in numba.prange(x.shape[0]):
        out[i] = np.sum(np.reshape(x[i].copy(), (-1, 2)), axis=0)[0]
    return out


def shift_within_rows(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] += x[i, :-1]
    return x


def add_shifted_rows(x, y):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] += y[i, :-1] * 2.0
    return x


def view_of_an_array_expression(a, out):
    for i in numba.prange(a.shape[0]):
        doubled = a[i] * 2.0
        tail = doubled[1:]
        tail[0] = 5.0
        out[i] = doubled.sum()
    return out


# each refused body: its function, its arguments, the refused line's offset in
# it, and the message after the location (whole, or its start)
COMPUTED_ARRAY_REFUSALS = [
    (view_of_an_array_expression, ((3, 4), 3), 3,
     "an array computed in a parfor body where it is read (a product with a matrix, an array "
     "expression, a copy) indexed with anything but one integer per dimension", True),
    (copy_of_a_written_array, ((3, 4), 3), 2,
     ".copy() of 'x' in a parfor body: xpuc copies only real arrays from outside the loop "
     "that it does not write", True),
    (mask_read_at_an_element, (5, 3), 2,
     "'x[...]', an array indexed with a boolean array, used in a parfor body otherwise than "
     "by a loop over its elements", False),
    (reshape_to_an_unknown_extent, ((3, 8), 3), 2,
     "reshape in a parfor body to anything but a shape of integers that are not negative", True),
]


@pytest.mark.parametrize(("function", "shapes", "offset", "message", "whole"),
                         COMPUTED_ARRAY_REFUSALS,
                         ids=[refusal[0].__name__ for refusal in COMPUTED_ARRAY_REFUSALS])
def test_body_arrays_that_cannot_be_computed_where_read_are_refused_by_name(
        function, shapes, offset, message, whole):
    args = [np.ones(shape) for shape in shapes]  # refused when compiling: no value matters
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        xpuc.jit(function)(*args)
    expected = f"{__file__}:{function.__code__.co_firstlineno + offset}: {message}"
    if whole:
        assert str(refusal.value) == expected
    else:
        assert str(refusal.value).startswith(expected)


# ---- slice stores between views of one array ------------------------------------


def shift_rows_right(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] = x[i, :-1]
    return x


def shift_rows_left(x):
    for i in numba.prange(x.shape[0]):
        x[i, :-1] = x[i, 1:]
    return x


def shift_rows_right_by_three(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[3:] = row[:-3]
    return x


def row_stored_to_itself(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[:] = row[:]
    return x


def shifted_expression_right(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] = x[i, :-1] * 2.0 + 1.0
    return x


def shifted_update_right(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] -= 2.0 * x[i, :-1]
    return x


def shifted_update_left(x):
    for i in numba.prange(x.shape[0]):
        x[i, :-1] -= 2.0 * x[i, 1:]
    return x


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("function", [shift_rows_right, shift_rows_left, shift_rows_right_by_three,
                                      row_stored_to_itself, shift_within_rows,
                                      shifted_expression_right, shifted_update_right,
                                      shifted_update_left], ids=lambda f: f.__name__)
def test_slice_store_from_another_view_of_the_array_as_memmove(function, inputs):
    """NumPy reads the whole right side before it stores. The serial loop in
    the work-item walks backwards where the stored view starts after the
    loaded one, as ``memmove`` does, forwards otherwise (a forward loop would
    read elements it has already written: Numba's ``parallel=True`` answers
    wrongly for ``shift_rows_right``)."""
    check_offloaded(function, np.arange(28.0).reshape(4, 7), inputs=inputs)


@pytest.mark.parametrize("function", [shift_rows_right, shift_rows_left], ids=lambda f: f.__name__)
def test_slice_store_as_memmove_on_views_of_negative_stride(function):
    """Rows of ``x[:, ::-1]`` run backwards through memory: the stored view
    of ``shift_rows_right`` starts before the loaded one there, so its loop
    walks forwards."""
    base = np.arange(28.0).reshape(4, 7)
    expected = base.copy()
    function(expected[:, ::-1])
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        on_numpy = base.copy()
        xpuc.jit(function)(on_numpy[:, ::-1])
    on_usm = xpuc.asarray(base, queue=DEVICE, usm_type="device")
    xpuc.jit(function)(on_usm[:, ::-1])
    assert xpuc.stats()["kernel_launches"] > 0
    assert np.array_equal(on_numpy, expected)
    assert np.array_equal(dpnp.asnumpy(on_usm), expected)


# ---- slices of a row with other bounds: their lengths compared by the host ----------


def copy_within_rows(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[2:5] = row[0:3]
    return x


def copy_within_rows_at(x, k):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[k + 1:k + 4] = row[k:k + 3]
    return x


def tail_to_head(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[:3] = row[5:]
    return x


def head_to_tail(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[-3:] = row[:3]
    return x


def fewer_to_tail(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[-3:] = row[:2]
    return x


def shift_left_to_the_shape(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[:x.shape[1] - 1] = row[1:]
    return x


def copy_of_fewer_elements(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[2:5] = row[0:2]
    return x


def copy_at_an_element(x, at):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[0:3] = row[at[0]:at[0] + 3]
    return x


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("function, args", [
    (copy_within_rows, ()), (copy_within_rows_at, (2,)), (copy_within_rows_at, (-6,)),
    (tail_to_head, ()), (head_to_tail, ()),
    (add_shifted_rows, (np.arange(32.0).reshape(4, 8) + 1.0,)), (shift_left_to_the_shape, ())],
    ids=["row[2:5] = row[0:3]", "row[k + 1:k + 4] = row[k:k + 3]", "negative k",
         "row[:3] = row[5:]", "row[-3:] = row[:3]", "x[i, 1:] += y[i, :-1] * 2.0",
         "row[:x.shape[1] - 1] = row[1:]"])
def test_slices_of_a_row_with_other_bounds_as_numpy(function, args, inputs):
    """Each length is a slice of a dimension of an array from outside the
    loop with bounds the same in every iteration: the host compares them
    before the launch; views of one row overlap, and the store is ordered as
    ``memmove``."""
    check_offloaded(function, np.arange(32.0).reshape(4, 8), *args, inputs=inputs)


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("function, args, offset, slices", [
    (copy_of_fewer_elements, (), 3, "'row[2:5]' and 'row[:2]'"),
    (copy_within_rows_at, (6,), 3, "'row[k + 1:k + 4]' and 'row[k:k + 3]'"),
    (add_shifted_rows, (np.ones((4, 9)),), 2, "'x[:, 1:]' and 'y[:, :-1]'"),
    (fewer_to_tail, (), 3, "'row[-3:]' and 'row[:2]'")],
    ids=["row[2:5] = row[0:2]", "clipped at the row's end", "rows of other arrays",
         "row[-3:] = row[:2]"])
def test_slices_of_different_lengths_raise_before_the_launch(function, args, offset, slices,
                                                             inputs):
    """Where NumPy raises ValueError, the host raises Numba's AssertionError
    naming the line and the slices as the user could write them (the
    dimension they cut), and nothing is launched."""
    with pytest.raises(AssertionError) as error:
        run_on_device(function, np.arange(32.0).reshape(4, 8), *args, inputs=inputs)
    assert str(error.value) == (f"{__file__}:{function.__code__.co_firstlineno + offset}: "
                                f"sizes of {slices} do not match")
    assert xpuc.stats()["kernel_launches"] == 0


def test_a_slice_bound_read_from_an_array_is_refused():
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        run_on_device(copy_at_an_element, np.ones((4, 8)), np.array([1]), inputs="numpy")
    assert str(refusal.value).startswith(
        f"{__file__}:{copy_at_an_element.__code__.co_firstlineno + 3}: the sizes of 'row[:3]' and "
        "'row[...]' in a parfor body, which xpuc cannot compare before the launch")


def shift_planes(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:, :] = x[i, :-1, :]
    return x


@pytest.mark.parametrize("inputs", INPUTS)
def test_slice_store_between_2d_views_of_the_array_is_refused_by_name(inputs):
    """A 2-D loop has no one direction that reads every element before it is
    written."""
    with pytest.raises(xpuc.UnsupportedError) as refusal:
        run_on_device(shift_planes, np.arange(36.0).reshape(3, 3, 4), inputs=inputs)
    assert str(refusal.value) == (
        f"{__file__}:{shift_planes.__code__.co_firstlineno + 2}: store to a view of 'x' from "
        "another view of it in a parfor body (xpuc orders the loop only of two 1-D views along "
        "one axis with one step)")


def store_to_the_view_it_reads(x):
    for i in numba.prange(x.shape[0]):
        x[i, 1:] = x[i, 1:]
    return x


def rows_copied_to_another_array(x, out):
    for i in numba.prange(x.shape[0]):
        out[i, :] = x[i, :]
    return out


def row_updated_in_place(x, y):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row += y[i]
    return x


def row_scaled_by_a_nested_prange(x, y):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        for j in numba.prange(row.shape[0]):
            row[j] = row[j] * 2.0 + y[i, j]
    return x


@pytest.mark.parametrize("inputs", INPUTS)
def test_stores_to_the_view_they_read_or_to_another_array_stay_offloaded(inputs):
    x, y = np.arange(20.0).reshape(4, 5), np.linspace(0.0, 1.0, 20).reshape(4, 5)
    check_offloaded(store_to_the_view_it_reads, x, inputs=inputs)
    check_offloaded(rows_copied_to_another_array, x, np.zeros((4, 5)), inputs=inputs)
    check_offloaded(row_updated_in_place, x, y, inputs=inputs)
    check_offloaded(row_scaled_by_a_nested_prange, x, y, inputs=inputs)


# ---- complex functions -------------------------------------------------------------


def complex_functions(z, w):
    out = np.empty((4, z.shape[0]), dtype=z.dtype)
    for i in numba.prange(z.shape[0]):
        out[0, i] = cmath.exp(z[i])
        out[1, i] = cmath.log(z[i])
        out[2, i] = z[i] ** w[i]
        out[3, i] = np.exp(z[i]) * 2
    return out


def complex_array_expression(z):
    return np.exp(z) + np.log(z) + z ** 2


inf, nan = np.inf, np.nan
BASES = np.array([1 + 2j, -0.5 + 0.25j, 3j, -2, 0, 0, 0, 0, 1e300 + 1e300j, complex(inf, 0),
                  complex(inf, 1), complex(inf, inf), complex(-inf, 1), complex(-inf, nan),
                  complex(nan, 0), complex(nan, 1), complex(1, inf), 2 + 1j])
EXPONENTS = np.array([0.5 + 1j, 3, -1.5, 2, 0, 2, -1, 1j, 0.5, 1, 2, 0.5, 1, 1, 1, 1, 1, 0])


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_cmath_exp_log_and_power_as_numba_computes_them(inputs, dtype):
    """Special values (infinities, NaNs, a zero base) as Numba gives them on
    the CPU, ZeroDivisionError's cases as NaNs. complex64 is compared with
    complex128's answers, and its power with finite bases only: Numba
    computes a complex64 power in double precision, where the sign of an
    infinite part (inf times the sine of a rounded pi) can differ, and
    makes the result of float parts as ``x + y * I`` in C, which turns an
    infinite imaginary part into a NaN real one."""
    with np.errstate(all="ignore"):
        z, w = BASES.astype(dtype), EXPONENTS.astype(dtype)
        expected = numba.njit(complex_functions)(z.astype(np.complex128),
                                                 w.astype(np.complex128)).astype(dtype)
    result, _, launches = run_on_device(complex_functions, z, w, inputs=inputs)
    if dtype == np.complex64:
        expected[2, ~np.isfinite(z)] = result[2, ~np.isfinite(z)]
    rtol = 1e-12 if dtype == np.complex128 else 1e-5
    np.testing.assert_allclose(result, expected, rtol=rtol)
    assert launches == 1


@pytest.mark.parametrize("inputs", INPUTS)
def test_complex_functions_of_arrays(inputs):
    check_offloaded(complex_array_expression, np.arange(1, 7) * (0.5 - 1.5j), inputs=inputs)


# ---- arrays of a shape given by an argument, made in a body ------------------------


def nearest_labels(x_train, y_train, x_test, k):
    """knn's per-point queue of (distance, label), as dpbench writes it."""
    out = np.empty(x_test.shape[0])
    for i in numba.prange(x_test.shape[0]):
        queue = np.empty(shape=(k, 2))
        for j in range(k):
            queue[j, 0] = abs(x_train[j] - x_test[i])
            queue[j, 1] = y_train[j]
        total = 0.0
        for j in range(k):
            total += queue[j, 0] * queue[j, 1]
        out[i] = total
    return out


def nearest_labels_dpnp(x_train, y_train, x_test, k):
    """The same, with knn's own dpnp.empty(shape=...)."""
    out = np.empty(x_test.shape[0])
    for i in numba.prange(x_test.shape[0]):
        queue = dpnp.empty(shape=(k, 2))
        for j in range(k):
            queue[j, 0] = abs(x_train[j] - x_test[i])
            queue[j, 1] = y_train[j]
        total = 0.0
        for j in range(k):
            total += queue[j, 0] * queue[j, 1]
        out[i] = total
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_body_array_of_a_shape_given_by_an_argument(inputs):
    data = (np.arange(8.0), np.arange(8.0) % 3, np.linspace(0, 7, 5))
    for k in (3, 5):
        check_offloaded(nearest_labels, *data, k, inputs=inputs)
        result, _, launches = run_on_device(nearest_labels_dpnp, *data, k, inputs=inputs)
        np.testing.assert_allclose(result, nearest_labels(*data, k))
        assert launches > 0


def test_each_value_of_such_an_argument_compiles_once():
    data = (np.arange(8.0), np.arange(8.0) % 3, np.linspace(0, 7, 5))
    jitted = xpuc.jit(nearest_labels)
    with xpuc.device_context(DEVICE):
        compiled = []
        for k in (3, 3, 4, 3, 4):
            xpuc.reset_stats()
            np.testing.assert_allclose(jitted(*data, k), nearest_labels(*data, k))
            compiled.append(xpuc.stats()["kernels_compiled"])
    assert compiled == [1, 0, 1, 0, 0]


def body_array_of_a_computed_shape(x):
    out = np.empty(x.shape[0])
    n = x.shape[0] // 2
    for i in numba.prange(x.shape[0]):
        scratch = np.empty(n)
        scratch[0] = x[i]
        out[i] = scratch[0]
    return out


def test_body_array_of_a_shape_known_only_when_running_is_refused():
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        xpuc.jit(body_array_of_a_computed_shape)(np.ones(4))
    line = body_array_of_a_computed_shape.__code__.co_firstlineno + 4
    assert f"{__file__}:{line}: an array made in a parfor body" in str(refusal.value)
    # with an explicit signature, an argument's value cannot be compiled in
    typed = xpuc.jit("float64[:](float64[:], float64[:], float64[:], int64)")(nearest_labels)
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        typed(np.ones(4), np.ones(4), np.ones(2), 2)
    assert "not a constant or integer arguments" in str(refusal.value)


# ---- reductions into arrays -----------------------------------------------------------


def column_sums(a):
    acc = np.zeros(a.shape[1], dtype=a.dtype)
    for i in numba.prange(a.shape[0]):
        acc += a[i]
    return acc


def column_differences(a, acc):
    for i in numba.prange(a.shape[0]):
        acc -= a[i]
    return acc


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_reduction_into_an_array(inputs, dtype):
    a = (np.arange(300 * 5) % 17 - 8).reshape(300, 5).astype(dtype)
    check_offloaded(column_sums, a, inputs=inputs, rtol=1e-6)


@pytest.mark.parametrize("inputs", INPUTS)
def test_reduction_into_an_array_given_keeps_its_values(inputs):
    check_offloaded(column_differences, np.arange(12.0).reshape(4, 3),
                    np.array([100.0, 200.0, 300.0]), inputs=inputs)


def column_sums_of_a_wrong_size(a):
    acc = np.zeros(a.shape[1] + 1)
    for i in numba.prange(a.shape[0]):
        acc += a[i]
    return acc


def reduction_read_in_the_loop(a, out):
    acc = np.zeros(a.shape[1])
    for i in numba.prange(a.shape[0]):
        acc += a[i]
        out[i] = acc[0]
    return acc


def test_reduction_into_an_array_of_another_size_raises_before_the_launch():
    """Numba's array analysis asserts the sizes equal; the host checks them
    (Numba's parallel=True gives zeros here)."""
    with xpuc.device_context(DEVICE), pytest.raises(AssertionError) as error:
        xpuc.jit(column_sums_of_a_wrong_size)(np.ones((4, 3)))
    line = column_sums_of_a_wrong_size.__code__.co_firstlineno + 3
    assert str(error.value).startswith(f"{__file__}:{line}: sizes of ")


def test_reduction_array_read_in_the_loop_is_refused():
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as refusal:
        xpuc.jit(reduction_read_in_the_loop)(np.ones((4, 3)), np.zeros(4))
    line = reduction_read_in_the_loop.__code__.co_firstlineno + 4
    assert f"{__file__}:{line}: the array 'acc' that the loop reduces into" in \
        str(refusal.value)


# ---- len in a body -----------------------------------------------------------------


def row_lengths(a, out):
    for i in numba.prange(out.shape[0]):
        window = np.zeros((3, 2))
        out[i] = len(a[i]) * 100 + len(window) * 10 + len((i, i))
    return out


@pytest.mark.parametrize("inputs", INPUTS)
def test_len_of_arrays_and_tuples(inputs):
    check_offloaded(row_lengths, np.ones((4, 7)), np.zeros(4), inputs=inputs)


def test_len_of_a_kernels_private_array():
    """knn_numba_dpex_k's ``range(len(queue_neighbors))``."""
    @xpuc.kernel
    def lengths(a, out):
        i = xpuc.get_global_id(0)
        neighbors = xpuc.private.array((5, 2), np.float64)
        out[i] = len(a) * 10 + len(neighbors)

    out = xpuc.asarray(np.zeros(3))
    lengths[3](xpuc.asarray(np.zeros(8)), out)
    np.testing.assert_array_equal(xpuc.array_library.tensor.asnumpy(out), 85.0)


# ---- a view of one element broadcast into a view in a body -----------------------


def first_over_rest(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[1:] = row[:1]
    return x


def last_over_all(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[:] = row[-1:]
    return x


def first_into_three(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[2:5] = row[:1]
    return x


def column_of_other(x, y):
    for i in numba.prange(x.shape[0]):
        x[i][1:, :] = y[i][:1, :]
    return x


def first_row_over_block(x):
    for i in numba.prange(x.shape[0]):
        block = x[i]
        block[1:, :] = block[:1, :]


def tails_from(x, y, starts):
    for i in numba.prange(x.shape[0]):
        k = starts[i]
        row = x[i]
        row[k:] = y[i][k:]
    return x


@pytest.mark.parametrize("inputs", INPUTS)
def test_views_of_lengths_of_each_iteration_stored_as_before(inputs):
    """Lengths the host cannot compute (``k`` of each iteration) but equal in
    every iteration, the same slice of extents the host compares, are
    stored as they were without broadcasting."""
    rng = np.random.default_rng(12)
    check_offloaded(tails_from, rng.random((4, 6)), rng.random((4, 6)), np.array([0, 1, 2, 6]),
                    inputs=inputs)


def two_into_three(x):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        row[2:5] = row[:2]


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("function, shapes", [
    (first_over_rest, [(4, 8)]), (first_over_rest, [(4, 1)]), (first_over_rest, [(4, 2)]),
    (first_over_rest, [(4, 0)]), (last_over_all, [(3, 5)]), (first_into_three, [(4, 8)]),
    (first_into_three, [(4, 2)]), (column_of_other, [(3, 4, 5), (3, 2, 5)]),
    (column_of_other, [(3, 1, 5), (3, 1, 5)]), (column_of_other, [(3, 4, 5), (3, 4, 5)])],
    ids=["row[1:] = row[:1]", "of no element", "of one element", "empty rows",
         "row[:] = row[-1:]", "row[2:5] = row[:1]", "into no element", "2-D from another",
         "2-D into no row", "2-D of equal shapes"])
def test_view_of_one_element_broadcast_into_a_view(function, shapes, inputs):
    """NumPy stretches a length of 1 of the stored view, read as if before
    the store where it overlaps the view stored into; the host checks the
    lengths (the view's or 1) before the launch."""
    rng = np.random.default_rng(11)
    check_offloaded(function, *(rng.random(shape) for shape in shapes), inputs=inputs)


@pytest.mark.parametrize("threshold", ["1000000", "0"])
def test_view_of_one_element_broadcast_on_the_host_as_on_the_device(threshold, monkeypatch):
    """The cost model's host copy of the loop (rule 13) broadcasts as the kernel does."""
    monkeypatch.setenv("XPUC_HOST_PARFOR_MAX", threshold)
    x = np.arange(24.0).reshape(3, 8)
    expected = x.copy()
    first_over_rest(expected)
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        xpuc.jit(first_over_rest)(x)
    np.testing.assert_array_equal(x, expected)
    assert xpuc.stats()["host_parfors" if threshold != "0" else "kernel_launches"] > 0


def test_overlapping_blocks_broadcast_are_refused():
    """2-D views of one block that overlap are not ordered (view_order.py)."""
    with xpuc.device_context(DEVICE), pytest.raises(xpuc.UnsupportedError) as error:
        xpuc.jit(first_row_over_block)(np.ones((2, 3, 4)))
    line = first_row_over_block.__code__.co_firstlineno + 3
    assert str(error.value).startswith(f"{__file__}:{line}: store to a view of 'x'")


@pytest.mark.parametrize("inputs", INPUTS)
def test_view_of_two_elements_into_three_raises_before_the_launch(inputs):
    with pytest.raises(AssertionError) as error:
        run_on_device(two_into_three, np.arange(32.0).reshape(4, 8), inputs=inputs)
    assert str(error.value) == (f"{__file__}:{two_into_three.__code__.co_firstlineno + 3}: "
                                "sizes of 'row[2:5]' and 'row[:2]' do not match")
