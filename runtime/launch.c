/* Launches: a kernel run on the current call's queue by its backend (SPIR-V
 * on SYCL, waited for; PTX on CUDA, queued: call.c waits); the launch trace;
 * and the cost model that keeps tiny parfors on the host. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int32_t tracing_launches;

void xpuc_trace_launches(int32_t on)
{
    __atomic_store_n(&tracing_launches, on != 0, __ATOMIC_RELAXED);
}

/* ---- launches --------------------------------------------------------------- */

int xpuc_launch(const void *binary, int64_t binary_len, uint64_t binary_hash,
                const char *kernel_name, const uint64_t *arg_slots,
                const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                const int64_t *local, int32_t ndim)
{
    xpuc_queue *q = call_queue();
    if (!q)
        return no_call("xpuc_launch");
    bool ran;
    int status = q->backend->launch(q, binary, binary_len, binary_hash, kernel_name, arg_slots,
                                    arg_kinds, nargs, global, local, ndim, &ran);
    if (status != XPUC_OK || !ran)
        return status;
    call_launched(kernel_name);
    COUNT(kernel_launches, 1);
    if (__atomic_load_n(&tracing_launches, __ATOMIC_RELAXED)) {
        char gtext[80];
        fprintf(stderr, "xpuc: launched kernel '%s' on device '%s' (global size %s)\n",
                kernel_name, q->device_name, format_sizes(gtext, sizeof gtext, global, ndim));
    }
    return XPUC_OK;
}

int xpuc_call_launch(xpuc_queue *queue, const void *binary, int64_t binary_len,
                     uint64_t binary_hash, const char *kernel_name, const uint64_t *arg_slots,
                     const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                     const int64_t *local, int32_t ndim)
{
    int status = xpuc_call_begin(queue);
    if (status != XPUC_OK)
        return status;
    status = xpuc_launch(binary, binary_len, binary_hash, kernel_name, arg_slots, arg_kinds,
                         nargs, global, local, ndim);
    /* it frees nothing that a launch on device memory needed: its error stands */
    int ended = xpuc_call_end();
    return status != XPUC_OK ? status : ended;
}

int xpuc_build_ahead(xpuc_queue *queue, const void *binary, int64_t binary_len,
                     uint64_t binary_hash)
{
    if (!queue || !binary || binary_len <= 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_build_ahead");
    if (!queue->backend->build_ahead)
        return XPUC_OK;
    return queue->backend->build_ahead(queue, binary, binary_len, binary_hash);
}

/* ---- the cost model: tiny parfors stay on the host ------------------------ */

/* Timed copies per measurement, after one that warms the queue up. */
#define LAUNCH_COST_SAMPLES 5

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* What any launch on q's device costs before its kernel does work: the least
 * of a few submit+waits of an 8-byte host->device copy. A copy rather than an
 * empty kernel: it is a command submitted to the device's queue and waited
 * for, as a launch is, and needs no program build (a process's first build
 * takes 90 ms or more, which a call whose parfors all stay on the host would
 * pay for nothing). On the CPU device it costs 3.2 us against an empty
 * kernel's 4.4 us, well within the factor of a few the threshold needs. */
static int measure_launch_cost(xpuc_queue *q, int64_t *out)
{
    void *device = q->backend->device_alloc(q, sizeof(int64_t), XPUC_USM_DEVICE);
    if (!device)
        return fail(XPUC_ERR_ALLOC, "xpuc: no USM memory on device '%s' to time a launch",
                    q->device_name);
    int64_t source = 0, least = INT64_MAX;
    int status = XPUC_OK;
    for (int i = 0; i <= LAUNCH_COST_SAMPLES && status == XPUC_OK; i++) {
        int64_t start = now_ns();
        status = q->backend->copy(q, device, &source, sizeof source, "host->device");
        int64_t took = now_ns() - start;
        if (i > 0 && took < least)
            least = took;
    }
    q->backend->device_free(q->target, device);
    *out = least > 0 ? least : 1; /* 0 marks a target not measured */
    return status;
}

/* XPUC_HOST_PARFOR_MAX as a count, or -1 where it is not set. */
static int host_parfor_max(int64_t *out)
{
    const char *text = getenv("XPUC_HOST_PARFOR_MAX");
    *out = -1;
    if (!text || !*text)
        return XPUC_OK;
    char *end;
    errno = 0;
    long long count = strtoll(text, &end, 10);
    if (*end || errno || count < 0)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: XPUC_HOST_PARFOR_MAX=%s is not a trip count (an integer >= 0; 0 "
                    "turns the cost model off)",
                    text);
    *out = count;
    return XPUC_OK;
}

int xpuc_parfor_on_host(const char *kernel_name, int64_t trip_count, int64_t iteration_cost,
                        int32_t *on_host)
{
    xpuc_queue *q = call_queue();
    if (!q)
        return no_call("xpuc_parfor_on_host");
    if (!kernel_name || !on_host || trip_count < 0 || iteration_cost < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_parfor_on_host");
    int64_t host_max;
    int status = host_parfor_max(&host_max);
    if (status != XPUC_OK)
        return status;
    bool host;
    if (host_max >= 0) {
        host = host_max > 0 && trip_count <= host_max;
    } else {
        int64_t launch_cost = __atomic_load_n(q->launch_cost_ns, __ATOMIC_RELAXED);
        if (!launch_cost) {
            /* two threads may both measure: either figure will do */
            status = measure_launch_cost(q, &launch_cost);
            if (status != XPUC_OK)
                return status;
            __atomic_store_n(q->launch_cost_ns, launch_cost, __ATOMIC_RELAXED);
        }
        /* trip_count * iteration_cost < launch_cost, without overflow */
        host = iteration_cost == 0 || trip_count <= (launch_cost - 1) / iteration_cost;
    }
    *on_host = host;
    if (host) {
        COUNT(host_parfors, 1);
        if (__atomic_load_n(&tracing_launches, __ATOMIC_RELAXED))
            fprintf(stderr,
                    "xpuc: ran parfor '%s' on the host, not on device '%s' (trip count %lld)\n",
                    kernel_name, q->device_name, (long long)trip_count);
    }
    return XPUC_OK;
}
