/* Memory through a queue's backend: allocations (with a cache of freed
 * blocks), copies, and the arrays compiled code allocates (owned by Numba
 * MemInfos). */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

/* ---- allocations -------------------------------------------------------- */

/* Freed blocks are kept for an allocation of the same size, kind and target
 * (a SYCL context and device, a CUDA device) to reuse. A time loop that
 * makes a temporary array each step (a Jacobi stencil's `0.25 * (...)`)
 * would otherwise pay a device allocation, and on a CPU device the page
 * faults of fresh memory, every step; Numba's CPU build does not, as malloc
 * reuses freed memory. A block in the cache is idle: one freed while the
 * freeing thread's call has kernels in flight (CUDA) is held for that call,
 * whose later kernels queue behind the ones that may use it, until it waits.
 * At most USM_CACHE_BYTES are kept (the oldest blocks go first), and all go
 * back to their backend when an allocation fails. The stats count
 * allocations and frees the program asks for. */
typedef struct cached_block {
    struct cached_block *next;
    void *ptr;
    size_t size;
    int32_t kind;
    const queue_backend *backend;
    int32_t target;
} cached_block;

#define USM_CACHE_BYTES ((size_t)1 << 30)

static cached_block *usm_cache; /* newest first */
static size_t usm_cache_bytes;
static pthread_mutex_t usm_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks freed while this thread's call had kernels in flight, all of the
 * call's backend and target. */
static _Thread_local cached_block *held;

static void release_block(cached_block *block)
{
    block->backend->device_free(block->target, block->ptr);
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

/* Unlinks the first block of `list` that serves the request; NULL if none. */
static cached_block *take_block(cached_block **list, xpuc_queue *q, size_t size, int32_t kind)
{
    for (cached_block **link = list; *link; link = &(*link)->next) {
        cached_block *block = *link;
        if (block->size == size && block->kind == kind && block->backend == q->backend &&
            block->target == q->target) {
            *link = block->next;
            return block;
        }
    }
    return NULL;
}

static void *reuse_block(xpuc_queue *q, size_t size, int32_t kind)
{
    cached_block *block = q == call_queue() ? take_block(&held, q, size, kind) : NULL;
    if (!block) {
        pthread_mutex_lock(&usm_cache_lock);
        block = take_block(&usm_cache, q, size, kind);
        if (block)
            usm_cache_bytes -= size;
        pthread_mutex_unlock(&usm_cache_lock);
    }
    void *ptr = block ? block->ptr : NULL;
    free(block);
    return ptr;
}

/* Whether a block of backend and target freed now may still be used by a
 * kernel the calling thread's call queued. */
static bool in_flight_on(const queue_backend *backend, int32_t target)
{
    const xpuc_queue *q = call_queue();
    return q && q->backend == backend && q->target == target && call_in_flight();
}

/* Keeps the block for reuse, or frees it when there is no room for it. */
static void cache_block(void *ptr, size_t size, int32_t kind, const queue_backend *backend,
                        int32_t target)
{
    cached_block *block = size <= USM_CACHE_BYTES ? malloc(sizeof *block) : NULL;
    if (!block) {
        backend->device_free(target, ptr);
        return;
    }
    *block = (cached_block){.ptr = ptr, .size = size, .kind = kind, .backend = backend,
                            .target = target};
    if (in_flight_on(backend, target)) {
        block->next = held;
        held = block;
        return;
    }
    pthread_mutex_lock(&usm_cache_lock);
    block->next = usm_cache;
    usm_cache = block;
    usm_cache_bytes += size;
    cached_block *dropped = trim_cache_locked(USM_CACHE_BYTES);
    pthread_mutex_unlock(&usm_cache_lock);
    release_blocks(dropped);
}

void release_held_blocks(void)
{
    while (held) {
        cached_block *block = held;
        held = block->next;
        cache_block(block->ptr, block->size, block->kind, block->backend, block->target);
        free(block);
    }
}

/* SYCL's malloc returns NULL for 0 bytes, which we could not tell from a
 * failure (CUDA's refuses them): allocate at least one byte so zero-size
 * arrays get a real pointer. Sizes are rounded up to 64 bytes, for blocks to
 * fit more requests. */
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
        *out = q->backend->device_alloc(q, size, kind);
    if (!*out) { /* the cache may hold the memory it needs */
        pthread_mutex_lock(&usm_cache_lock);
        cached_block *dropped = trim_cache_locked(0);
        pthread_mutex_unlock(&usm_cache_lock);
        release_blocks(dropped);
        *out = q->backend->device_alloc(q, size, kind);
    }
    if (!*out)
        return fail(XPUC_ERR_ALLOC, "xpuc: USM allocation of %lld bytes failed on device '%s'",
                    (long long)nbytes, q->device_name);
    COUNT(usm_allocs, 1);
    return XPUC_OK;
}

void usm_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind)
{
    cache_block(ptr, block_size(nbytes), kind, q->backend, q->target);
    COUNT(usm_frees, 1);
}


int xpuc_usm_alloc(xpuc_queue *queue, int64_t nbytes, int32_t usm_kind, void **out)
{
    if (!queue || !out || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_usm_alloc");
    return usm_alloc(queue, nbytes, usm_kind, out);
}

int xpuc_usm_free(xpuc_queue *queue, void *ptr, int64_t nbytes, int32_t usm_kind)
{
    if (!queue)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_usm_free needs a queue");
    if (ptr)
        usm_free(queue, ptr, nbytes, usm_kind);
    return XPUC_OK;
}

static int check_copy_args(xpuc_queue *q, void *dst, const void *src, int64_t nbytes)
{
    if (!q || nbytes < 0 || (nbytes > 0 && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to a copy of %lld bytes",
                    (long long)nbytes);
    return XPUC_OK;
}

/* A copy on `queue`, waited for: on the current call's queue, it waited for
 * the kernels the call queued before it too. */
static int checked_copy(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes,
                        const char *direction)
{
    int status = check_copy_args(queue, dst, src, nbytes);
    if (status != XPUC_OK)
        return status;
    status = queue->backend->copy(queue, dst, src, nbytes, direction);
    return queue == call_queue() ? call_copied(status, nbytes) : status;
}

int xpuc_copy_to_device(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = checked_copy(queue, dst, src, nbytes, "host->device");
    if (status == XPUC_OK)
        COUNT(h2d_bytes, nbytes);
    return status;
}

int xpuc_copy_to_host(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = checked_copy(queue, dst, src, nbytes, "device->host");
    if (status == XPUC_OK)
        COUNT(d2h_bytes, nbytes);
    return status;
}

/* ---- USM arrays that compiled code allocates ---------------------------- */

/* Numba's destructor gets only the pointer, so what each allocation must be
 * freed with is kept here. Arrays live beyond calls and threads. */
typedef struct owned_usm {
    struct owned_usm *next;
    void *ptr;
    int64_t nbytes;
    int32_t kind;
    const queue_backend *backend;
    int32_t target;
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
    cache_block(ptr, block_size(found->nbytes), found->kind, found->backend, found->target);
    free(found);
    COUNT(usm_frees, 1);
}

/* The part of Numba's NRT_api_functions (numba/core/runtime/nrt_external.h)
 * used here; its layout is Numba's ABI for extensions. */
typedef void nrt_managed_dtor(void *data);
typedef struct {
    void *(*allocate)(size_t nbytes);
    void *(*allocate_external)(size_t nbytes, void *allocator);
    void *(*manage_memory)(void *data, nrt_managed_dtor dtor);
    void (*acquire)(void *meminfo);
    void (*release)(void *meminfo);
} nrt_api;

/* The head of Numba's MemInfo, which Numba's compiled code reads as this
 * struct too (_meminfo_struct_type in numba/core/runtime/nrtdynmod.py). */
typedef struct {
    size_t refct;
    void *dtor;
    void *dtor_info;
    void *data;
    size_t size; /* of memory NRT allocated; 0 for memory it wraps */
} nrt_meminfo;

static const nrt_api *nrt;

int xpuc_set_nrt_api(const void *api)
{
    if (!api)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_set_nrt_api needs Numba's NRT API table");
    nrt = api;
    return XPUC_OK;
}

bool nrt_allocation(void *meminfo, char **data, int64_t *nbytes)
{
    const nrt_meminfo *mi = meminfo;
    if (!nrt || !mi || !mi->data || mi->size == 0)
        return false;
    *data = mi->data;
    *nbytes = (int64_t)mi->size;
    return true;
}

void nrt_acquire(void *meminfo) { nrt->acquire(meminfo); }

void nrt_release(void *meminfo) { nrt->release(meminfo); }

bool nrt_sole_reference(void *meminfo)
{
    return __atomic_load_n(&((nrt_meminfo *)meminfo)->refct, __ATOMIC_ACQUIRE) == 1;
}

int xpuc_usm_array_alloc(int64_t nbytes, int32_t usm_kind, void **meminfo)
{
    xpuc_queue *q = call_queue();
    if (!q)
        return no_call("xpuc_usm_array_alloc");
    if (!nrt || !meminfo || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_usm_array_alloc "
                                      "(or Numba's NRT API not set)");
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
    record->backend = q->backend;
    record->target = q->target;
    pthread_mutex_lock(&owned_lock);
    record->next = owned;
    owned = record;
    pthread_mutex_unlock(&owned_lock);
    *meminfo = nrt->manage_memory(record->ptr, free_owned_usm);
    if (!*meminfo) {
        free_owned_usm(record->ptr);
        return fail(XPUC_ERR_ALLOC, "xpuc: Numba could not make a MemInfo for a USM array");
    }
    return XPUC_OK;
}
