/* The CUDA backend: a queue on a stream of a CUDA device, what the core does
 * on it through libxpuc_cuda.so (runtime/cuda/, the driver API). Memory is
 * device memory whatever the USM kind; launches take PTX and run on the
 * stream; the caller's work is what is queued there (CuPy's current stream,
 * the stream a CUDA array names), not the whole context's: a call waits for
 * no other library's streams. */
#include "internal.h"

#include "cuda/xpuc_cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* The CUDA runtime's message of its last failure, as this runtime's. */
static int cuda_failed(int status)
{
    return fail(status, "%s", xpuc_cuda_last_error());
}

static void *cuda_device_alloc(xpuc_queue *q, size_t size, int32_t kind)
{
    (void)kind; /* no shared or host memory: kernels read device memory */
    void *ptr;
    return xpuc_cuda_alloc(q->cuda_device, (int64_t)size, &ptr) == XPUC_OK ? ptr : NULL;
}

static void cuda_device_free(int32_t ordinal, void *ptr)
{
    xpuc_cuda_device *device;
    if (xpuc_cuda_device_open(ordinal, &device) == XPUC_OK)
        xpuc_cuda_free(device, ptr); /* a failed free leaks, as SYCL's would */
}

static int cuda_copy(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                     const char *direction)
{
    (void)direction; /* the CUDA runtime's message names the copy */
    int status = xpuc_cuda_copy(q->cuda_device, q->cuda_stream, dst, src, nbytes, 1);
    if (status != XPUC_OK)
        return cuda_failed(status);
    if (nbytes > 0) /* queued on the stream and waited for */
        COUNT(device_waits, 1);
    return XPUC_OK;
}

static int cuda_queue_copy(xpuc_queue *q, void *dst, const void *src, int64_t nbytes)
{
    int status = xpuc_cuda_copy(q->cuda_device, q->cuda_stream, dst, src, nbytes, 0);
    return status == XPUC_OK ? XPUC_OK : cuda_failed(status);
}

static bool cuda_is_device_memory(xpuc_queue *q, const void *ptr)
{
    int32_t ordinal;
    return xpuc_cuda_pointer_device(ptr, &ordinal) == XPUC_OK && ordinal == q->target;
}

static bool cuda_same_device(xpuc_queue *a, xpuc_queue *b)
{
    /* one handle per device; a call nested in one on another stream runs on
     * the outer call's queue, whose stream is waited for at each launch */
    return a->cuda_device == b->cuda_device;
}

/* Waits for the work queued on q's stream. */
static int cuda_wait(xpuc_queue *q)
{
    void *gil = gil_release();
    int status = xpuc_cuda_synchronize(q->cuda_device, q->cuda_stream);
    gil_restore(gil);
    if (status != XPUC_OK)
        return cuda_failed(status);
    COUNT(device_waits, 1);
    return XPUC_OK;
}

static int cuda_wait_caller(xpuc_queue *q)
{
    /* Every command of a call (launches, copies of elements and buffers) goes
     * to its queue's stream, after the caller's work there: nothing to wait
     * for first. A call nested in one on another stream runs on the outer
     * call's queue, after the work on its own stream. */
    xpuc_queue *outer = call_queue();
    if (!outer || outer->cuda_stream == q->cuda_stream)
        return XPUC_OK;
    return cuda_wait(q);
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
    int status = xpuc_cuda_launch(q->cuda_device, q->cuda_stream, ptx, length, hash,
                                  kernel_name, arg_slots, arg_kinds, nargs, global, local, ndim);
    gil_restore(gil);
    *ran = status == XPUC_OK && !empty; /* queued: the call waits (call.c) */
    return status == XPUC_OK ? XPUC_OK : cuda_failed(status);
}

static void cuda_release(xpuc_queue *q)
{
    (void)q; /* the device stays open for the process */
}

const queue_backend cuda_backend = {
    .device_alloc = cuda_device_alloc,
    .device_free = cuda_device_free,
    .copy = cuda_copy,
    .is_device_memory = cuda_is_device_memory,
    .same_device = cuda_same_device,
    .wait_caller = cuda_wait_caller,
    .launch = cuda_launch,
    .queue_copy = cuda_queue_copy,
    .wait = cuda_wait,
    .release = cuda_release,
};

/* What each device's launches cost, 0 until measured (launch.c). */
#define MAX_CUDA_DEVICES 64
static int64_t launch_costs[MAX_CUDA_DEVICES];

int xpuc_queue_cuda(int32_t ordinal, void *stream, xpuc_queue **out)
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
    q->cuda_stream = stream;
    q->target = ordinal;
    q->launch_cost_ns = &launch_costs[ordinal];
    snprintf(q->device_name, sizeof q->device_name, "cuda:%d (%s)", (int)ordinal, name);
    *out = q;
    return XPUC_OK;
}
