/* xpuc's CUDA runtime: a thin layer on the CUDA driver API, which it loads at
 * run time (dlopen of the driver's libcuda.so.1: nothing of CUDA is linked at
 * build time, and no CUDA toolkit is needed at run time). Every entry returns
 * XPUC_OK or an error status; the message (device, kernel, the driver's
 * reason) is in xpuc_cuda_last_error(), per thread.
 *
 * A launch takes the kernels xpuc compiles (PTX) with the launch ABI of the
 * SYCL runtime's xpuc_launch (argument slots and kinds, global and local sizes
 * in x, y, z order). compiler/abi.py defines this interface too
 * (CUDA_ENTRIES); tests/test_abi.py checks this header against it. */
#ifndef XPUC_CUDA_H
#define XPUC_CUDA_H

#include "../xpuc_runtime.h" /* the status and argument-kind enums, the limits */

#include <stdint.h>

/* A PTX module's global named its kernel's name and this suffix says that
 * the kernel's accesses move by one element as x does: its launches get
 * blocks a warp wide along x (passes/contiguous_x.py). */
#define XPUC_CUDA_X_CONTIGUOUS_SUFFIX "__xpuc_x_contiguous"

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA device as the runtime uses it: its primary context (retained while
 * the process runs, as CuPy and numba.cuda use it: memory they allocate is
 * xpuc's to use, and the other way round), name and compute capability. */
typedef struct xpuc_cuda_device xpuc_cuda_device;

/* The number of CUDA devices; XPUC_ERR_DRIVER if there is no driver. */
int xpuc_cuda_device_count(int32_t *out);
/* Device `ordinal` (cuda:ordinal), opened once per process: later calls give
 * the same handle. */
int xpuc_cuda_device_open(int32_t ordinal, xpuc_cuda_device **out);
/* Its name (NUL-terminated, cut to name_size) and compute capability. */
int xpuc_cuda_device_describe(xpuc_cuda_device *device, char *name, int64_t name_size,
                              int32_t *major, int32_t *minor);

/* Its streaming multiprocessors, which a reduction kernel's blocks fill. */
int xpuc_cuda_device_multiprocessors(xpuc_cuda_device *device, int32_t *out);

/* Device memory, and copies that return once done. */
int xpuc_cuda_alloc(xpuc_cuda_device *device, int64_t nbytes, void **out);
int xpuc_cuda_free(xpuc_cuda_device *device, void *ptr);
int xpuc_cuda_copy_to_device(xpuc_cuda_device *device, void *dst, const void *src,
                             int64_t nbytes);
int xpuc_cuda_copy_to_host(xpuc_cuda_device *device, void *dst, const void *src,
                           int64_t nbytes);
/* A copy in any direction on `stream` (the driver tells host from device
 * memory by its address: unified addressing), returned once done; or, without
 * `wait` and only between device memory, once queued (xpuc_cuda_synchronize
 * waits for it). */
int xpuc_cuda_copy(xpuc_cuda_device *device, void *stream, void *dst, const void *src,
                   int64_t nbytes, int32_t wait);
/* *ordinal = the device whose memory ptr is (CuPy's, torch's, xpuc's: its
 * kernels use it in place), -1 for host memory. */
int xpuc_cuda_pointer_device(const void *ptr, int32_t *ordinal);
/* Waits for the work queued on `stream` of the device's primary context (a
 * CUstream; NULL: the legacy default stream, which also waits for the
 * blocking streams' earlier work): what CuPy or torch queued before a call. */
int xpuc_cuda_synchronize(xpuc_cuda_device *device, void *stream);

/* Loads (once per process per device and PTX hash) the PTX module and runs
 * its kernel `kernel_name` over `global` work-items (x, y, z) on `stream`
 * (a CUstream, NULL: the legacy default stream), returning once it is queued:
 * xpuc_cuda_synchronize waits for it, and reports its failure.
 * local all zero (or NULL) leaves the block to the runtime: the driver's
 * occupancy calculator's size for the kernel, at most 256 threads (fewer,
 * in whole warps, where that gives a small range a block on every SM), the
 * grid rounded up to whole blocks (xpuc's parfor kernels return at once past
 * their range); else each global size must be a multiple of its local size. */
int xpuc_cuda_launch(xpuc_cuda_device *device, void *stream, const void *ptx, int64_t ptx_len,
                     uint64_t ptx_hash, const char *kernel_name, const uint64_t *arg_slots,
                     const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                     const int64_t *local, int32_t ndim);

const char *xpuc_cuda_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
