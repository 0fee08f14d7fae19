/* The entries that need SYCL, in a runtime built without it (cmake
 * -DXPUC_SYCL=OFF, where dpctl is not installed): they fail, saying so. */
#include "internal.h"

static int without_sycl(const char *entry)
{
    return fail(XPUC_ERR_INVALID,
                "xpuc: %s needs SYCL, and this runtime was built without it (no dpctl)", entry);
}

int xpuc_queue_wrap(void *dpctl_queue_ref, xpuc_queue **out)
{
    (void)dpctl_queue_ref;
    (void)out;
    return without_sycl("xpuc_queue_wrap");
}

int xpuc_usm_advise(xpuc_queue *queue, void *ptr, int64_t nbytes)
{
    (void)queue;
    (void)ptr;
    (void)nbytes;
    return without_sycl("xpuc_usm_advise");
}
