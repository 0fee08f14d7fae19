/* USM memory: allocations (with a cache of freed blocks), page advice,
 * copies between host and device, and the USM arrays compiled code allocates
 * (owned by Numba MemInfos). */
#include "sycl.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- USM memory and copies ---------------------------------------------- */

/* Freed USM blocks are kept for an allocation of the same size, kind,
 * context and device to reuse. A time loop that makes a temporary array each
 * step (a Jacobi stencil's `0.25 * (...)`) would otherwise pay a SYCL
 * allocation, and on a CPU device the page faults of fresh memory, every step;
 * Numba's CPU build does not, as malloc reuses freed memory. Kernels run
 * synchronously, so a freed block is idle. At most USM_CACHE_BYTES are kept
 * (the oldest blocks go first), and all go back to SYCL when an allocation
 * fails. The stats count allocations and frees the program asks for. */
typedef struct cached_block {
    struct cached_block *next;
    void *ptr;
    size_t size;
    int32_t kind;
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
} cached_block;

#define USM_CACHE_BYTES ((size_t)1 << 30)

static cached_block *usm_cache; /* newest first */
static size_t usm_cache_bytes;
static pthread_mutex_t usm_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static void release_block(cached_block *block)
{
    DPCTLfree_with_context(block->ptr, block->context);
    DPCTLContext_Delete(block->context);
    DPCTLDevice_Delete(block->device);
    free(block);
}

/* Unlinks the blocks after `keep` bytes (all of them for 0); the caller
 * releases them outside the lock. */
static cached_block *trim_cache_locked(size_t keep)
{
    cached_block **link = &usm_cache;
    size_t kept = 0;
    while (*link && kept + (*link)->size <= keep) {
        kept += (*link)->size;
        link = &(*link)->next;
    }
    cached_block *dropped = *link;
    *link = NULL;
    usm_cache_bytes = kept;
    return dropped;
}

static void release_blocks(cached_block *block)
{
    while (block) {
        cached_block *next = block->next;
        release_block(block);
        block = next;
    }
}

static void *reuse_block(xpuc_queue *q, size_t size, int32_t kind)
{
    void *ptr = NULL;
    pthread_mutex_lock(&usm_cache_lock);
    for (cached_block **link = &usm_cache; *link; link = &(*link)->next) {
        cached_block *block = *link;
        if (block->size == size && block->kind == kind &&
            DPCTLContext_AreEq(block->context, q->context) &&
            DPCTLDevice_AreEq(block->device, q->device)) {
            *link = block->next;
            usm_cache_bytes -= size;
            ptr = block->ptr;
            DPCTLContext_Delete(block->context);
            DPCTLDevice_Delete(block->device);
            free(block);
            break;
        }
    }
    pthread_mutex_unlock(&usm_cache_lock);
    return ptr;
}

/* Keeps the block for reuse, or frees it when there is no room for it. */
static void cache_block(void *ptr, size_t size, int32_t kind, DPCTLSyclContextRef context,
                        DPCTLSyclDeviceRef device)
{
    cached_block *block = size <= USM_CACHE_BYTES ? malloc(sizeof *block) : NULL;
    if (!block) {
        DPCTLfree_with_context(ptr, context);
        return;
    }
    *block = (cached_block){.ptr = ptr, .size = size, .kind = kind,
                            .context = DPCTLContext_Copy(context),
                            .device = DPCTLDevice_Copy(device)};
    pthread_mutex_lock(&usm_cache_lock);
    block->next = usm_cache;
    usm_cache = block;
    usm_cache_bytes += size;
    cached_block *dropped = trim_cache_locked(USM_CACHE_BYTES);
    pthread_mutex_unlock(&usm_cache_lock);
    release_blocks(dropped);
}

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

static void *sycl_alloc(xpuc_queue *q, size_t size, int32_t kind)
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

/* SYCL's malloc returns NULL for 0 bytes, which we could not tell from a
 * failure: allocate at least one byte so zero-size arrays get a real pointer.
 * Sizes are rounded up to 64 bytes, for blocks to fit more requests. */
static size_t block_size(int64_t nbytes)
{
    return nbytes > 0 ? ((size_t)nbytes + 63) & ~(size_t)63 : 64;
}

int usm_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out)
{
    if (kind != XPUC_USM_DEVICE && kind != XPUC_USM_SHARED && kind != XPUC_USM_HOST)
        return fail(XPUC_ERR_INVALID, "xpuc: unknown USM kind %d", (int)kind);
    size_t size = block_size(nbytes);
    *out = reuse_block(q, size, kind);
    if (!*out)
        *out = sycl_alloc(q, size, kind);
    if (!*out) { /* the cache may hold the memory it needs */
        pthread_mutex_lock(&usm_cache_lock);
        cached_block *dropped = trim_cache_locked(0);
        pthread_mutex_unlock(&usm_cache_lock);
        release_blocks(dropped);
        *out = sycl_alloc(q, size, kind);
    }
    if (!*out)
        return fail(XPUC_ERR_ALLOC, "xpuc: USM allocation of %lld bytes failed on device '%s'",
                    (long long)nbytes, q->device_name);
    COUNT(usm_allocs, 1);
    return XPUC_OK;
}

void usm_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind)
{
    cache_block(ptr, block_size(nbytes), kind, q->context, q->device);
    COUNT(usm_frees, 1);
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
    return XPUC_OK;
}

/* ---- USM arrays that compiled code allocates ---------------------------- */

/* Numba's destructor gets only the pointer, so what each allocation must be
 * freed with is kept here. Arrays live beyond calls and threads. */
typedef struct owned_usm {
    struct owned_usm *next;
    void *ptr;
    int64_t nbytes;
    int32_t kind;
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
} owned_usm;

static owned_usm *owned;
static pthread_mutex_t owned_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_owned_usm(void *ptr)
{
    pthread_mutex_lock(&owned_lock);
    owned_usm **link = &owned;
    while (*link && (*link)->ptr != ptr)
        link = &(*link)->next;
    owned_usm *found = *link;
    if (found)
        *link = found->next;
    pthread_mutex_unlock(&owned_lock);
    if (!found)
        return; /* not ours: nothing to free (cannot happen through NRT) */
    cache_block(ptr, block_size(found->nbytes), found->kind, found->context, found->device);
    DPCTLContext_Delete(found->context);
    DPCTLDevice_Delete(found->device);
    free(found);
    COUNT(usm_frees, 1);
}

int usm_array_alloc(xpuc_queue *q, int64_t nbytes, int32_t usm_kind, void **meminfo)
{
    owned_usm *record = malloc(sizeof *record);
    if (!record)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory allocating a USM array");
    int status = usm_alloc(q, nbytes, usm_kind, &record->ptr);
    if (status != XPUC_OK) {
        free(record);
        return status;
    }
    record->nbytes = nbytes;
    record->kind = usm_kind;
    record->context = DPCTLContext_Copy(q->context);
    record->device = DPCTLDevice_Copy(q->device);
    pthread_mutex_lock(&owned_lock);
    record->next = owned;
    owned = record;
    pthread_mutex_unlock(&owned_lock);
    *meminfo = numba_nrt()->manage_memory(record->ptr, free_owned_usm);
    if (!*meminfo) {
        free_owned_usm(record->ptr);
        return fail(XPUC_ERR_ALLOC, "xpuc: Numba could not make a MemInfo for a USM array");
    }
    return XPUC_OK;
}
