/* What the CUDA runtime's files share, private to libxpuc_cuda.so (hidden
 * visibility: the library exports the xpuc_cuda_* entries of xpuc_cuda.h
 * only). Each .c file includes it first.
 *
 *   driver.c  loading libcuda.so.1, the driver's entry points, errors, devices
 *   memory.c  device memory and copies
 *   module.c  PTX modules loaded per device, the kernel cache
 *   launch.c  kernel launches, block sizes */
#ifndef XPUC_CUDA_INTERNAL_H
#define XPUC_CUDA_INTERNAL_H

#include "../format_sizes.h"
#include "xpuc_cuda.h"

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* The driver API's types and constants xpuc uses, as cuda.h defines them
 * (the driver's ABI, stable across CUDA versions): no CUDA header is needed
 * to build. */
typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream; /* NULL: the legacy default stream */
typedef unsigned long long CUdeviceptr;
typedef size_t (*CUoccupancyB2DSize)(int block_size);

enum {
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};
enum { CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 };
enum { CU_MEMORYTYPE_DEVICE = 2 };
enum { CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

/* The driver's entry points, found in libcuda.so.1 by their versioned names. */
typedef struct {
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuGetErrorName)(CUresult error, const char **out);
    CUresult (*cuGetErrorString)(CUresult error, const char **out);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
    CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
    CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
    CUresult (*cuCtxPushCurrent)(CUcontext context);
    CUresult (*cuCtxPopCurrent)(CUcontext *context);
    CUresult (*cuStreamSynchronize)(CUstream stream);
    CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t nbytes);
    CUresult (*cuMemFree)(CUdeviceptr ptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t nbytes);
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t nbytes);
    CUresult (*cuMemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t nbytes,
                              CUstream stream);
    CUresult (*cuPointerGetAttribute)(void *data, int attribute, CUdeviceptr ptr);
    CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image, unsigned count,
                                   int *options, void **values);
    CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
    CUresult (*cuModuleGetGlobal)(CUdeviceptr *address, size_t *bytes, CUmodule module,
                                  const char *name);
    CUresult (*cuOccupancyMaxPotentialBlockSize)(int *min_grid, int *block, CUfunction function,
                                                 CUoccupancyB2DSize shared_per_block,
                                                 size_t dynamic_shared, int block_limit);
    CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y,
                               unsigned grid_z, unsigned block_x, unsigned block_y,
                               unsigned block_z, unsigned shared_bytes, CUstream stream,
                               void **params, void **extra);
} driver_api;

struct xpuc_cuda_device {
    int32_t ordinal;
    CUcontext context; /* the primary context, retained */
    char name[256];
    int32_t major, minor;
    int32_t max_grid[3];
    int32_t multiprocessors;
};

/* ---- driver.c ------------------------------------------------------------ */

/* The driver's entry points, libcuda loaded and cuInit done at the first
 * call; NULL (the message set) if that failed. */
HIDDEN const driver_api *driver(void);
/* Sets the calling thread's message (xpuc_cuda_last_error), returns status. */
HIDDEN int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "CUDA_ERROR_NAME: the driver's description" of a driver result. */
HIDDEN const char *describe_result(CUresult result, char *out, size_t size);
/* Makes device's context current on this thread / restores the previous one. */
HIDDEN int enter(xpuc_cuda_device *device, const char *what);
HIDDEN void leave(void);

/* ---- module.c ------------------------------------------------------------ */

/* A kernel of a loaded module, kept for the life of the process. */
typedef struct cached_kernel {
    struct cached_kernel *next;
    CUfunction function;
    int block_size; /* the occupancy calculator's, found at the first launch */
    /* Its accesses move by one element as x does: blocks a warp wide
     * (XPUC_CUDA_X_CONTIGUOUS_SUFFIX). */
    bool x_contiguous;
    char name[];
} cached_kernel;

/* The kernel `kernel_name` of the PTX module (ptx, length, hash) on device,
 * loaded now if it was not before. device's context is current. */
HIDDEN int get_kernel(xpuc_cuda_device *device, const void *ptx, int64_t length, uint64_t hash,
                      const char *kernel_name, cached_kernel **out);

#endif
