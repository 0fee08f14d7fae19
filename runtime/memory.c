/* Memory through a queue's backend: the entries that allocate, free and copy
 * (Python's, and call.c's copies of host arrays). */
#include "internal.h"

int xpuc_usm_alloc(xpuc_queue *queue, int64_t nbytes, int32_t usm_kind, void **out)
{
    if (!queue || !out || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_usm_alloc");
    return queue->backend->alloc(queue, nbytes, usm_kind, out);
}

int xpuc_usm_free(xpuc_queue *queue, void *ptr, int64_t nbytes, int32_t usm_kind)
{
    if (!queue)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_usm_free needs a queue");
    if (ptr)
        queue->backend->free(queue, ptr, nbytes, usm_kind);
    return XPUC_OK;
}

static int check_copy_args(xpuc_queue *q, void *dst, const void *src, int64_t nbytes)
{
    if (!q || nbytes < 0 || (nbytes > 0 && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to a copy of %lld bytes",
                    (long long)nbytes);
    return XPUC_OK;
}

int xpuc_copy_to_device(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = check_copy_args(queue, dst, src, nbytes);
    if (status == XPUC_OK)
        status = queue->backend->copy(queue, dst, src, nbytes, "host->device");
    if (status == XPUC_OK)
        COUNT(h2d_bytes, nbytes);
    return status;
}

int xpuc_copy_to_host(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = check_copy_args(queue, dst, src, nbytes);
    if (status == XPUC_OK)
        status = queue->backend->copy(queue, dst, src, nbytes, "device->host");
    if (status == XPUC_OK)
        COUNT(d2h_bytes, nbytes);
    return status;
}
