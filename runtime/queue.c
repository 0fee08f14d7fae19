/* Queues (made by a backend: xpuc_queue_wrap, xpuc_cuda_queue) released, and
 * letting Python's GIL go while the runtime waits on a device. */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

int xpuc_queue_release(xpuc_queue *queue)
{
    if (!queue)
        return XPUC_OK;
    if (queue == call_queue())
        return fail(XPUC_ERR_INVALID,
                    "xpuc: cannot release the queue on device '%s' during a call on it",
                    queue->device_name);
    queue->backend->release(queue);
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
