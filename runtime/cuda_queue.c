/* The CUDA backend: a queue on a CUDA device, what the core does on it
 * through libxpuc_cuda.so (runtime/cuda/, the driver API). Memory is device
 * memory whatever the USM kind; launches take PTX; the caller's work is all
 * of the device's primary context (CuPy's and torch's streams included). */
#include "internal.h"

#include "cuda/xpuc_cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* The CUDA runtime's message of its last failure, as this runtime's. */
static int cuda_failed(int status)
{
    return fail(status, "%s", xpuc_cuda_last_error());
}

static int cuda_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out)
{
    (void)kind; /* no shared or host memory: kernels read device memory */
    int status = xpuc_cuda_alloc(q->cuda_device, nbytes, out);
    if (status != XPUC_OK)
        return cuda_failed(status);
    COUNT(usm_allocs, 1);
    return XPUC_OK;
}

static void cuda_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind)
{
    (void)nbytes;
    (void)kind;
    xpuc_cuda_free(q->cuda_device, ptr); /* a failed free leaks, as SYCL's would */
    COUNT(usm_frees, 1);
}

static int cuda_copy(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                     const char *direction)
{
    (void)direction; /* the CUDA runtime's message names the copy */
    int status = xpuc_cuda_copy(q->cuda_device, dst, src, nbytes);
    return status == XPUC_OK ? XPUC_OK : cuda_failed(status);
}

static bool cuda_is_device_memory(xpuc_queue *q, const void *ptr)
{
    int32_t ordinal;
    return xpuc_cuda_pointer_device(ptr, &ordinal) == XPUC_OK && ordinal == q->target;
}

static bool cuda_same_device(xpuc_queue *a, xpuc_queue *b)
{
    return a->cuda_device == b->cuda_device; /* one handle per device */
}

static int cuda_wait_caller(xpuc_queue *q)
{
    void *gil = gil_release();
    int status = xpuc_cuda_synchronize(q->cuda_device);
    gil_restore(gil);
    return status == XPUC_OK ? XPUC_OK : cuda_failed(status);
}

static int cuda_launch(xpuc_queue *q, const void *ptx, int64_t length, uint64_t hash,
                       const char *kernel_name, const uint64_t *arg_slots,
                       const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                       const int64_t *local, int32_t ndim, bool *ran)
{
    /* xpuc_cuda_launch checks the arguments; a range with no work-items
     * launches nothing */
    bool empty = false;
    for (int32_t i = 0; global && i < ndim && i < 3; i++)
        empty |= global[i] == 0;
    void *gil = gil_release();
    int status = xpuc_cuda_launch(q->cuda_device, ptx, length, hash, kernel_name, arg_slots,
                                  arg_kinds, nargs, global, local, ndim);
    gil_restore(gil);
    *ran = status == XPUC_OK && !empty;
    return status == XPUC_OK ? XPUC_OK : cuda_failed(status);
}

static int cuda_launch_cost(xpuc_queue *q, int64_t *out)
{
    void *device;
    int status = xpuc_cuda_alloc(q->cuda_device, sizeof(int64_t), &device);
    if (status != XPUC_OK)
        return cuda_failed(status);
    status = least_copy_time(q, device, out);
    xpuc_cuda_free(q->cuda_device, device);
    return status;
}

/* Numba's destructor of an array cuda_array_alloc made: the pointer says
 * which device's memory it is. */
static void free_cuda_array(void *ptr)
{
    int32_t ordinal;
    xpuc_cuda_device *device;
    if (xpuc_cuda_pointer_device(ptr, &ordinal) == XPUC_OK && ordinal >= 0 &&
        xpuc_cuda_device_open(ordinal, &device) == XPUC_OK)
        xpuc_cuda_free(device, ptr); /* a failed free leaks, as SYCL's would */
    COUNT(usm_frees, 1);
}

static int cuda_array_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **meminfo)
{
    void *ptr;
    int status = cuda_alloc(q, nbytes, kind, &ptr);
    if (status != XPUC_OK)
        return status;
    *meminfo = numba_nrt()->manage_memory(ptr, free_cuda_array);
    if (!*meminfo) {
        free_cuda_array(ptr);
        return fail(XPUC_ERR_ALLOC, "xpuc: Numba could not make a MemInfo for an array on "
                                    "device '%s'",
                    q->device_name);
    }
    return XPUC_OK;
}

static void cuda_release(xpuc_queue *q)
{
    (void)q; /* the device stays open for the process */
}

const queue_backend cuda_backend = {
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .is_device_memory = cuda_is_device_memory,
    .same_device = cuda_same_device,
    .wait_caller = cuda_wait_caller,
    .launch = cuda_launch,
    .launch_cost = cuda_launch_cost,
    .array_alloc = cuda_array_alloc,
    .release = cuda_release,
};

/* What each device's launches cost, 0 until measured (launch.c). */
#define MAX_CUDA_DEVICES 64
static int64_t launch_costs[MAX_CUDA_DEVICES];

int xpuc_queue_cuda(int32_t ordinal, xpuc_queue **out)
{
    if (!out)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_queue_cuda needs an output");
    xpuc_cuda_device *device;
    int status = xpuc_cuda_device_open(ordinal, &device);
    if (status != XPUC_OK)
        return cuda_failed(status);
    if (ordinal >= MAX_CUDA_DEVICES)
        return fail(XPUC_ERR_INVALID, "xpuc: cuda:%d: xpuc uses at most %d CUDA devices",
                    (int)ordinal, MAX_CUDA_DEVICES);
    char name[200];
    int32_t major, minor;
    status = xpuc_cuda_device_describe(device, name, sizeof name, &major, &minor);
    if (status != XPUC_OK)
        return cuda_failed(status);
    xpuc_queue *q = calloc(1, sizeof *q);
    if (!q)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory making a queue on cuda:%d",
                    (int)ordinal);
    q->backend = &cuda_backend;
    q->cuda_device = device;
    q->target = ordinal;
    q->launch_cost_ns = &launch_costs[ordinal];
    snprintf(q->device_name, sizeof q->device_name, "cuda:%d (%s)", (int)ordinal, name);
    *out = q;
    return XPUC_OK;
}
