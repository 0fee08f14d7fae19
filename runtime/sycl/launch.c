/* Submissions: a kernel of a SPIR-V module run on a queue, waited for. */
#include "sycl.h"

#include <stdio.h>

/* Scalar kernel arguments are passed to dpctl as the address of their 64-bit
 * slot, so an i8/i16/i32/f32 must sit in the slot's low-address bytes. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpuc_runtime assumes a little-endian host"
#endif

/* ---- launches --------------------------------------------------------------- */

static const DPCTLKernelArgType dpctl_arg_types[] = {
    [XPUC_ARG_PTR] = DPCTL_VOID_PTR,  [XPUC_ARG_I8] = DPCTL_INT8_T,
    [XPUC_ARG_I32] = DPCTL_INT32_T,   [XPUC_ARG_I64] = DPCTL_INT64_T,
    [XPUC_ARG_F32] = DPCTL_FLOAT32_T, [XPUC_ARG_F64] = DPCTL_FLOAT64_T,
    [XPUC_ARG_I16] = DPCTL_INT16_T,
};

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

int submit_kernel(xpuc_queue *q, const void *spirv, int64_t spirv_len, uint64_t spirv_hash,
                  const char *kernel_name, const uint64_t *arg_slots, const int32_t *arg_kinds,
                  int32_t nargs, const int64_t *global, const int64_t *local, int32_t ndim,
                  bool *ran)
{
    const char *name = kernel_name ? kernel_name : "?";
    *ran = false;
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
    COUNT(device_waits, 1);
    *ran = true;
    return XPUC_OK;
}
