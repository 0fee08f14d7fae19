/* Launches: a kernel of a SPIR-V module run on the current call's queue,
 * waited for; the launch trace; and the cost model that keeps tiny parfors
 * on the host. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Scalar kernel arguments are passed to dpctl as the address of their 64-bit
 * slot, so an i8/i16/i32/f32 must sit in the slot's low-address bytes. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpuc_runtime assumes a little-endian host"
#endif

static int32_t tracing_launches;

void xpuc_trace_launches(int32_t on)
{
    __atomic_store_n(&tracing_launches, on != 0, __ATOMIC_RELAXED);
}

/* ---- launches --------------------------------------------------------------- */

static const DPCTLKernelArgType dpctl_arg_types[] = {
    [XPUC_ARG_PTR] = DPCTL_VOID_PTR,  [XPUC_ARG_I8] = DPCTL_INT8_T,
    [XPUC_ARG_I32] = DPCTL_INT32_T,   [XPUC_ARG_I64] = DPCTL_INT64_T,
    [XPUC_ARG_F32] = DPCTL_FLOAT32_T, [XPUC_ARG_F64] = DPCTL_FLOAT64_T,
    [XPUC_ARG_I16] = DPCTL_INT16_T,
};

/* "(x, y, z)" of the first ndim sizes, for messages. */
static const char *format_sizes(char *out, size_t size, const int64_t *sizes, int32_t ndim)
{
    int n = snprintf(out, size, "(");
    for (int32_t i = 0; i < ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(out + n, size - (size_t)n, i ? ", %lld" : "%lld",
                      sizes ? (long long)sizes[i] : 0LL);
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, ")");
    return out;
}

/* A failed launch of `name`, with its sizes in SPIR-V order. */
static int launch_failed(int status, xpuc_queue *q, const char *name, const char *problem,
                         const int64_t *global, const int64_t *local, int32_t ndim)
{
    char gtext[80], ltext[80];
    return fail(status,
                "xpuc: launch of kernel '%s' failed on device '%s': %s (global size %s, "
                "local size %s)",
                name, q->device_name, problem, format_sizes(gtext, sizeof gtext, global, ndim),
                format_sizes(ltext, sizeof ltext, local, ndim));
}

int xpuc_launch(const void *spirv, int64_t spirv_len, uint64_t spirv_hash,
                const char *kernel_name, const uint64_t *arg_slots,
                const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                const int64_t *local, int32_t ndim)
{
    xpuc_queue *q = call_queue();
    const char *name = kernel_name ? kernel_name : "?";
    if (!q)
        return no_call("xpuc_launch");
    if (!spirv || spirv_len <= 0 || !kernel_name || ndim < 1 || ndim > 3 || !global ||
        nargs < 0 || nargs > XPUC_MAX_KERNEL_ARGS || (nargs > 0 && (!arg_slots || !arg_kinds)))
        return fail(XPUC_ERR_INVALID,
                    "xpuc: launch of kernel '%s' failed on device '%s': bad arguments "
                    "(%d kernel arguments, at most %d; %d dimensions)",
                    name, q->device_name, (int)nargs, XPUC_MAX_KERNEL_ARGS, (int)ndim);

    /* SYCL's last dimension is SPIR-V's x. */
    size_t grange[3], lrange[3];
    bool has_local = false, all_local = true, empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t g = global[ndim - 1 - i], l = local ? local[ndim - 1 - i] : 0;
        if (g < 0 || l < 0)
            return launch_failed(XPUC_ERR_INVALID, q, name, "negative size", global, local,
                                 ndim);
        if (l > 0 && g % l != 0)
            return launch_failed(XPUC_ERR_INVALID, q, name,
                                 "global size not a multiple of local size", global, local,
                                 ndim);
        grange[i] = (size_t)g;
        lrange[i] = (size_t)l;
        has_local |= l > 0;
        all_local &= l > 0;
        empty |= g == 0;
    }
    if (has_local && !all_local)
        return launch_failed(XPUC_ERR_INVALID, q, name,
                             "local size must be all zero or all positive", global, local, ndim);
    int64_t items = 1;
    for (int32_t i = 0; i < ndim && !empty; i++) {
        items = global[i] > XPUC_MAX_WORK_ITEMS / items ? (int64_t)XPUC_MAX_WORK_ITEMS + 1
                                                        : items * global[i];
        if (items > XPUC_MAX_WORK_ITEMS)
            return launch_failed(XPUC_ERR_INVALID, q, name,
                                 "more than 2^31-1 work-items, the most dpctl can submit",
                                 global, local, ndim);
    }

    /* No work-items: nothing runs, so nothing is built, submitted or counted. */
    if (empty)
        return XPUC_OK;

    void *args[XPUC_MAX_KERNEL_ARGS];
    DPCTLKernelArgType types[XPUC_MAX_KERNEL_ARGS];
    for (int32_t i = 0; i < nargs; i++) {
        if (arg_kinds[i] < XPUC_ARG_PTR || arg_kinds[i] > XPUC_ARG_I16)
            return fail(XPUC_ERR_INVALID,
                        "xpuc: launch of kernel '%s' failed on device '%s': argument %d has "
                        "unknown kind %d",
                        name, q->device_name, (int)i, (int)arg_kinds[i]);
        types[i] = dpctl_arg_types[arg_kinds[i]];
        /* dpctl reads scalars through the pointer and never writes them. */
        args[i] = arg_kinds[i] == XPUC_ARG_PTR ? (void *)(uintptr_t)arg_slots[i]
                                               : (void *)&arg_slots[i];
    }

    cached_kernel *kernel;
    int status = get_kernel(q, spirv, spirv_len, spirv_hash, kernel_name, &kernel);
    if (status != XPUC_OK)
        return status;
    /* SYCL would reject the submission without saying why. */
    if (kernel->num_args != (size_t)nargs)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: launch of kernel '%s' failed on device '%s': it takes %zu "
                    "arguments, not %d",
                    name, q->device_name, kernel->num_args, (int)nargs);

    DPCTLSyclKernelRef k = kernel->kernel;
    size_t n = (size_t)nargs, dims = (size_t)ndim;
    DPCTLSyclEventRef e =
        has_local
            ? DPCTLQueue_SubmitNDRange(k, q->ref, args, types, n, grange, lrange, dims, NULL, 0)
            : DPCTLQueue_SubmitRange(k, q->ref, args, types, n, grange, dims, NULL, 0);
    if (!e)
        return launch_failed(XPUC_ERR_LAUNCH, q, name,
                             "SYCL refused the submission (a kernel with a fixed "
                             "work-group size needs exactly that local size)",
                             global, local, ndim);
    void *gil = gil_release();
    DPCTLEvent_Wait(e);
    gil_restore(gil);
    DPCTLEvent_Delete(e);
    call_launched();
    COUNT(kernel_launches, 1);
    if (__atomic_load_n(&tracing_launches, __ATOMIC_RELAXED)) {
        char gtext[80];
        fprintf(stderr, "xpuc: launched kernel '%s' on device '%s' (global size %s)\n", name,
                q->device_name, format_sizes(gtext, sizeof gtext, global, ndim));
    }
    return XPUC_OK;
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
    void *device = DPCTLmalloc_device(sizeof(int64_t), q->ref);
    if (!device)
        return fail(XPUC_ERR_ALLOC, "xpuc: no USM memory on device '%s' to time a launch",
                    q->device_name);
    int64_t source = 0, least = INT64_MAX;
    int status = XPUC_OK;
    for (int i = 0; i <= LAUNCH_COST_SAMPLES && status == XPUC_OK; i++) {
        int64_t start = now_ns();
        status = memcpy_wait(q, device, &source, sizeof source, "host->device");
        int64_t took = now_ns() - start;
        if (i > 0 && took < least)
            least = took;
    }
    DPCTLfree_with_queue(device, q->ref);
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
