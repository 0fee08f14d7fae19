/* SYCL queues: the wrapper of a dpctl queue (xpuc_queue_wrap) and the SYCL
 * backend's table, what the core does on such a queue. */
#include "sycl.h"

#include <stdio.h>
#include <stdlib.h>

static bool sycl_is_device_memory(xpuc_queue *q, const void *ptr)
{
    return DPCTLUSM_GetPointerType((DPCTLSyclUSMRef)ptr, q->context) != DPCTL_USM_UNKNOWN;
}

static bool sycl_same_device(xpuc_queue *a, xpuc_queue *b)
{
    return DPCTLContext_AreEq(a->context, b->context) && DPCTLDevice_AreEq(a->device, b->device);
}

static int sycl_wait_caller(xpuc_queue *q)
{
    void *gil = gil_release();
    DPCTLQueue_Wait(q->caller);
    gil_restore(gil);
    COUNT(device_waits, 1);
    return XPUC_OK;
}

static void sycl_release(xpuc_queue *q)
{
    if (q->device)
        DPCTLDevice_Delete(q->device);
    if (q->context)
        DPCTLContext_Delete(q->context);
    if (q->ref)
        DPCTLQueue_Delete(q->ref);
    if (q->caller)
        DPCTLQueue_Delete(q->caller);
}

const queue_backend sycl_backend = {
    .device_alloc = sycl_device_alloc,
    .device_free = sycl_device_free,
    .copy = memcpy_wait,
    .is_device_memory = sycl_is_device_memory,
    .same_device = sycl_same_device,
    .wait_caller = sycl_wait_caller,
    .launch = submit_kernel,
    .build_ahead = build_module_ahead,
    .release = sycl_release,
};

int xpuc_queue_wrap(void *dpctl_queue_ref, xpuc_queue **out)
{
    if (!dpctl_queue_ref || !out)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_queue_wrap needs a queue ref and an output");
    xpuc_queue *q = calloc(1, sizeof *q);
    if (!q)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory wrapping a queue");
    q->backend = &sycl_backend;
    q->caller = DPCTLQueue_Copy(dpctl_queue_ref);
    q->context = DPCTLQueue_GetContext(dpctl_queue_ref);
    q->device = DPCTLQueue_GetDevice(dpctl_queue_ref);
    q->ref = q->context && q->device
                 ? DPCTLQueue_Create(q->context, q->device, NULL, DPCTL_IN_ORDER)
                 : NULL;
    if (!q->caller || !q->ref) {
        xpuc_queue_release(q);
        return fail(XPUC_ERR_INVALID, "xpuc: DPCTLSyclQueueRef %p is not a usable queue",
                    dpctl_queue_ref);
    }
    const char *name = DPCTLDevice_GetName(q->device);
    snprintf(q->device_name, sizeof q->device_name, "%s", name ? name : "?");
    DPCTLCString_Delete(name);
    q->host_memory = DPCTLDevice_IsCPU(q->device);
    q->system_memory = DPCTLDevice_HasAspect(q->device, usm_system_allocations);
    int status = target_number(q->context, q->device, &q->target, &q->launch_cost_ns);
    if (status != XPUC_OK) {
        xpuc_queue_release(q);
        return status;
    }
    *out = q;
    return XPUC_OK;
}
