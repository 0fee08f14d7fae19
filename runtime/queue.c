/* Queues: the wrapper of a dpctl queue that the other entries take, and
 * letting Python's GIL go while the runtime waits on a device. */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int xpuc_queue_wrap(void *dpctl_queue_ref, xpuc_queue **out)
{
    if (!dpctl_queue_ref || !out)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_queue_wrap needs a queue ref and an output");
    xpuc_queue *q = calloc(1, sizeof *q);
    if (!q)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory wrapping a queue");
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

int xpuc_queue_release(xpuc_queue *queue)
{
    if (!queue)
        return XPUC_OK;
    if (queue == call_queue())
        return fail(XPUC_ERR_INVALID,
                    "xpuc: cannot release the queue on device '%s' during a call on it",
                    queue->device_name);
    if (queue->device)
        DPCTLDevice_Delete(queue->device);
    if (queue->context)
        DPCTLContext_Delete(queue->context);
    if (queue->ref)
        DPCTLQueue_Delete(queue->ref);
    if (queue->caller)
        DPCTLQueue_Delete(queue->caller);
    free(queue);
    return XPUC_OK;
}

/* ---- the GIL ------------------------------------------------------------- */

/* Compiled host code calls the runtime holding Python's GIL. Waiting for the
 * device with it held can deadlock: dpctl keeps Python objects alive with
 * host tasks that take the GIL when they run, and work queued behind one of
 * them (an in-order queue) would wait for us forever. So blocking calls let
 * the GIL go while they wait. Python's entries are looked up in the process,
 * which keeps this library free of a link to libpython (ctypes callers hold
 * no GIL, and a process without Python has none to release). */
typedef struct {
    int (*held)(void);
    void *(*save)(void);
    void (*restore)(void *);
} python_gil;

static python_gil gil_api;
static pthread_once_t gil_once = PTHREAD_ONCE_INIT;

static void find_gil_api(void)
{
    *(void **)&gil_api.held = dlsym(RTLD_DEFAULT, "PyGILState_Check");
    *(void **)&gil_api.save = dlsym(RTLD_DEFAULT, "PyEval_SaveThread");
    *(void **)&gil_api.restore = dlsym(RTLD_DEFAULT, "PyEval_RestoreThread");
}

void *gil_release(void)
{
    pthread_once(&gil_once, find_gil_api);
    if (gil_api.held && gil_api.save && gil_api.restore && gil_api.held())
        return gil_api.save();
    return NULL;
}

void gil_restore(void *state)
{
    if (state)
        gil_api.restore(state);
}
