/* SYCL USM: allocations and frees (the core keeps freed blocks, memory.c),
 * page advice, copies. */
#include "sycl.h"

#include <sys/mman.h>
#include <unistd.h>

/* On a CPU device, kernels stream through USM as host memory, and with 4 KB
 * pages a streaming kernel spends a sixth of its time on TLB misses (the
 * triad: 8.6 ms against 7.4 ms with huge pages). NumPy asks for transparent
 * huge pages for its large arrays, so Numba's CPU code gets them; ask the same
 * for USM of 2 MB or more, before its first touch maps its pages. Advice
 * only: where the kernel refuses it, nothing changes. */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

static void advise_pages(xpuc_queue *q, void *ptr, size_t size)
{
    if (!q->host_memory || size < HUGE_PAGE_BYTES)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)ptr & ~(page - 1);
    madvise((void *)start, (uintptr_t)ptr + size - start, MADV_HUGEPAGE);
}

void *sycl_device_alloc(xpuc_queue *q, size_t size, int32_t kind)
{
    void *ptr;
    switch (kind) {
    case XPUC_USM_DEVICE: ptr = DPCTLmalloc_device(size, q->ref); break;
    case XPUC_USM_SHARED: ptr = DPCTLmalloc_shared(size, q->ref); break;
    default: ptr = DPCTLmalloc_host(size, q->ref); break;
    }
    if (ptr)
        advise_pages(q, ptr, size);
    return ptr;
}

int xpuc_usm_advise(xpuc_queue *queue, void *ptr, int64_t nbytes)
{
    if (!queue || (!ptr && nbytes > 0) || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_usm_advise needs a queue and a block");
    advise_pages(queue, ptr, (size_t)nbytes);
    return XPUC_OK;
}

int memcpy_wait(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                       const char *direction)
{
    if (nbytes == 0)
        return XPUC_OK;
    DPCTLSyclEventRef e = DPCTLQueue_Memcpy(q->ref, dst, src, (size_t)nbytes);
    if (!e)
        return fail(XPUC_ERR_COPY, "xpuc: copy of %lld bytes %s failed on device '%s'",
                    (long long)nbytes, direction, q->device_name);
    void *gil = gil_release();
    DPCTLEvent_Wait(e);
    gil_restore(gil);
    DPCTLEvent_Delete(e);
    COUNT(device_waits, 1);
    return XPUC_OK;
}

void sycl_device_free(int32_t target, void *ptr)
{
    DPCTLfree_with_context(ptr, target_context(target));
}
