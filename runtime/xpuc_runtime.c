/* xpuc's C runtime on dpctl's C API (libDPCTLSyclInterface). See
 * xpuc_runtime.h for the contract. Everything here is synchronous: each copy
 * and launch waits for its event, so no call leaves work in flight. */
/* madvise's MADV_HUGEPAGE is a Linux extension, hidden in strict C11 */
#define _DEFAULT_SOURCE
#include "xpuc_runtime.h"

#include <dlfcn.h>
#include <dpctl_sycl_interface.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Scalar kernel arguments are passed to dpctl as the address of their 64-bit
 * slot, so an i8/i16/i32/f32 must sit in the slot's low-address bytes. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpuc_runtime assumes a little-endian host"
#endif

struct xpuc_queue {
    /* Where xpuc submits: an in-order queue on the wrapped queue's context and
     * device. Each command is waited for, so the order costs nothing; and two
     * queues, one out-of-order, used from several threads at once deadlock or
     * crash the OpenCL CPU runtime (2025.3; reproduced with dpctl alone). */
    DPCTLSyclQueueRef ref;
    DPCTLSyclQueueRef caller; /* the wrapped queue: a call waits for its work */
    /* Cached once so launches never re-query them. */
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
    char device_name[256];
    /* A CPU device, whose USM is the host's own memory (see advise_pages). */
    bool host_memory;
    /* The number of the (context, device) pair in this process: kernels
     * built for one queue of the pair serve all of them, found by integers
     * instead of comparing SYCL objects at each launch. */
    int32_t target;
};

static int target_number(DPCTLSyclContextRef context, DPCTLSyclDeviceRef device, int32_t *out);

/* ---- errors and statistics --------------------------------------------- */

static _Thread_local char last_error[4096]; /* room for a build log */

__attribute__((format(printf, 2, 3))) static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *xpuc_last_error(void) { return last_error; }

static xpuc_stats stats;
static int32_t tracing_launches;

void xpuc_trace_launches(int32_t on)
{
    __atomic_store_n(&tracing_launches, on != 0, __ATOMIC_RELAXED);
}

#define COUNT(field, n) __atomic_fetch_add(&stats.field, (int64_t)(n), __ATOMIC_RELAXED)

void xpuc_get_stats(xpuc_stats *out)
{
    out->kernel_launches = __atomic_load_n(&stats.kernel_launches, __ATOMIC_RELAXED);
    out->kernel_builds = __atomic_load_n(&stats.kernel_builds, __ATOMIC_RELAXED);
    out->kernel_cache_hits = __atomic_load_n(&stats.kernel_cache_hits, __ATOMIC_RELAXED);
    out->h2d_bytes = __atomic_load_n(&stats.h2d_bytes, __ATOMIC_RELAXED);
    out->d2h_bytes = __atomic_load_n(&stats.d2h_bytes, __ATOMIC_RELAXED);
    out->usm_allocs = __atomic_load_n(&stats.usm_allocs, __ATOMIC_RELAXED);
    out->usm_frees = __atomic_load_n(&stats.usm_frees, __ATOMIC_RELAXED);
}

void xpuc_reset_stats(void)
{
    __atomic_store_n(&stats.kernel_launches, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.kernel_builds, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.kernel_cache_hits, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.h2d_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.d2h_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.usm_allocs, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.usm_frees, 0, __ATOMIC_RELAXED);
}

/* ---- queues ------------------------------------------------------------- */

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
    int status = target_number(q->context, q->device, &q->target);
    if (status != XPUC_OK) {
        xpuc_queue_release(q);
        return status;
    }
    *out = q;
    return XPUC_OK;
}

/* ---- per-call state (thread-local) --------------------------------------- */

/* A host array's device copy during a call. A transient buffer mirrors one
 * array and is synced at each parfor (copied in before, back after). A
 * resident buffer mirrors a registered region (the memory of an argument,
 * which outlives the call) and is synced lazily: in before the first kernel
 * that needs it, out when host code touches it or the call ends. */
typedef struct {
    char *host;
    void *device; /* NULL until first acquired */
    int64_t capacity;
    int64_t copied_in;    /* transient: bytes copied in during epoch copied_epoch */
    int64_t copied_epoch;
    bool resident;
    bool device_current; /* resident: the device copy holds the data */
    bool host_stale;     /* resident: a kernel wrote it; the host copy is old */
} buffer;

static _Thread_local struct {
    xpuc_queue *queue; /* NULL outside a call */
    int32_t depth;
    /* Launches so far: host code may write arrays only between launches, so a
     * copy made since the last launch is current (one array passed as several
     * arguments of a parfor is copied once). */
    int64_t epoch;
    buffer *buffers;
    int32_t count, capacity;
} call;

int xpuc_queue_release(xpuc_queue *queue)
{
    if (!queue)
        return XPUC_OK;
    if (queue == call.queue)
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

/* Releases the GIL if this thread holds it; pass the result to gil_restore. */
static void *gil_release(void)
{
    pthread_once(&gil_once, find_gil_api);
    if (gil_api.held && gil_api.save && gil_api.restore && gil_api.held())
        return gil_api.save();
    return NULL;
}

static void gil_restore(void *state)
{
    if (state)
        gil_api.restore(state);
}

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

static int usm_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out)
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

static void usm_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind)
{
    cache_block(ptr, block_size(nbytes), kind, q->context, q->device);
    COUNT(usm_frees, 1);
}

static int memcpy_wait(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
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

int xpuc_copy_to_device(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = check_copy_args(queue, dst, src, nbytes);
    if (status == XPUC_OK)
        status = memcpy_wait(queue, dst, src, nbytes, "host->device");
    if (status == XPUC_OK)
        COUNT(h2d_bytes, nbytes);
    return status;
}

int xpuc_copy_to_host(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes)
{
    int status = check_copy_args(queue, dst, src, nbytes);
    if (status == XPUC_OK)
        status = memcpy_wait(queue, dst, src, nbytes, "device->host");
    if (status == XPUC_OK)
        COUNT(d2h_bytes, nbytes);
    return status;
}

/* ---- calls and their buffers -------------------------------------------- */

static int no_call(const char *what)
{
    return fail(XPUC_ERR_INVALID,
                "xpuc: %s outside a call: xpuc_call_begin was not called on this thread", what);
}

int xpuc_call_begin(xpuc_queue *queue)
{
    if (!queue)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_call_begin needs a queue");
    /* A nested call keeps the outer call's queue and buffers, which are only
     * usable if it runs on the same context and device. */
    if (call.queue && queue != call.queue &&
        !(DPCTLContext_AreEq(queue->context, call.queue->context) &&
          DPCTLDevice_AreEq(queue->device, call.queue->device)))
        return fail(XPUC_ERR_INVALID,
                    "xpuc: a call on device '%s' cannot nest in a call on device '%s' "
                    "(another context or device)",
                    queue->device_name, call.queue->device_name);
    /* The call runs after the work already submitted to its queue, as if it
     * were submitted there too: dpctl's operations return before their
     * kernels finish, and a call may read what they write. */
    void *gil = gil_release();
    DPCTLQueue_Wait(queue->caller);
    gil_restore(gil);
    if (!call.queue)
        call.queue = queue;
    call.depth++;
    return XPUC_OK;
}

static int sync_to_host(buffer *b)
{
    int status = xpuc_copy_to_host(call.queue, b->host, b->device, b->capacity);
    if (status == XPUC_OK)
        b->host_stale = false;
    return status;
}

int xpuc_call_end(void)
{
    if (!call.queue)
        return no_call("xpuc_call_end");
    if (--call.depth > 0)
        return XPUC_OK;
    /* Copy back what kernels wrote even if one of the copies fails, so that
     * every buffer is freed; report the first failure. */
    int status = XPUC_OK;
    for (int32_t i = 0; i < call.count; i++) {
        buffer *b = &call.buffers[i];
        if (b->host_stale) {
            int copied = sync_to_host(b);
            status = status != XPUC_OK ? status : copied;
        }
        if (b->device)
            usm_free(call.queue, b->device, b->capacity, XPUC_USM_DEVICE);
    }
    free(call.buffers);
    call.buffers = NULL;
    call.count = call.capacity = 0;
    call.queue = NULL;
    return status;
}

/* The buffer of transient array `host`, or of the resident region holding
 * [host, host + nbytes). */
static buffer *find_buffer(const void *host, int64_t nbytes)
{
    const char *start = host;
    for (int32_t i = 0; i < call.count; i++) {
        buffer *b = &call.buffers[i];
        if (b->resident ? start >= b->host && start + nbytes <= b->host + b->capacity
                        : b->host == start)
            return b;
    }
    return NULL;
}

static int add_buffer(void *host, int64_t nbytes, bool resident, buffer **out)
{
    if (call.count == call.capacity) {
        int32_t capacity = call.capacity ? 2 * call.capacity : 16;
        buffer *grown = realloc(call.buffers, (size_t)capacity * sizeof *grown);
        if (!grown)
            return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory for the buffer table");
        call.buffers = grown;
        call.capacity = capacity;
    }
    buffer *b = &call.buffers[call.count++];
    *b = (buffer){.host = host, .capacity = nbytes, .copied_epoch = -1, .resident = resident};
    *out = b;
    return XPUC_OK;
}

int xpuc_call_register(void *host, int64_t nbytes)
{
    if (!call.queue)
        return no_call("xpuc_call_register");
    if (nbytes < 0 || (nbytes > 0 && !host))
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_call_register (%lld bytes)",
                    (long long)nbytes);
    char *start = host, *end = start + nbytes;
    /* Overlapping regions (two views of one array) become one, so that each
     * byte has one device copy. Merging is only possible before any of them
     * has a device copy, which holds since arguments register first. */
    for (int32_t i = 0; i < call.count; i++) {
        buffer *b = &call.buffers[i];
        if (b->resident && start <= b->host + b->capacity && b->host <= end) {
            if (b->device)
                return fail(XPUC_ERR_INVALID,
                            "xpuc: region at %p registered after its neighbour was used", host);
            char *low = start < b->host ? start : b->host;
            char *high = end > b->host + b->capacity ? end : b->host + b->capacity;
            *b = call.buffers[--call.count];
            return xpuc_call_register(low, high - low);
        }
    }
    buffer *b;
    return add_buffer(host, nbytes, true, &b);
}

/* Whether `ptr` is USM memory of the current call's context, which kernels
 * use in place. */
static bool is_call_usm(const void *ptr)
{
    return ptr && DPCTLUSM_GetPointerType((DPCTLSyclUSMRef)ptr, call.queue->context) !=
                      DPCTL_USM_UNKNOWN;
}

static int acquire_resident(buffer *b, const char *host, void **device)
{
    int status = XPUC_OK;
    if (!b->device)
        status = usm_alloc(call.queue, b->capacity, XPUC_USM_DEVICE, &b->device);
    /* Always the whole region: a kernel may write part of it, and the rest
     * must survive the copy back. */
    if (status == XPUC_OK && !b->device_current) {
        status = xpuc_copy_to_device(call.queue, b->device, b->host, b->capacity);
        b->device_current = status == XPUC_OK;
    }
    if (status == XPUC_OK)
        *device = (char *)b->device + (host - b->host);
    return status;
}

/* Replaces a transient buffer that is too small. Without copy_in the device
 * copy is the current one (an earlier kernel of this call may have written
 * it), so its bytes move to the new allocation. */
static int grow_buffer(buffer *b, int64_t nbytes, bool copy_in)
{
    void *device = NULL;
    int status = usm_alloc(call.queue, nbytes, XPUC_USM_DEVICE, &device);
    if (status == XPUC_OK && !copy_in && b->device)
        status = memcpy_wait(call.queue, device, b->device, b->capacity, "device->device");
    if (status != XPUC_OK) {
        if (device)
            usm_free(call.queue, device, nbytes, XPUC_USM_DEVICE);
        return status;
    }
    if (b->device)
        usm_free(call.queue, b->device, b->capacity, XPUC_USM_DEVICE);
    b->device = device;
    b->capacity = nbytes;
    return XPUC_OK;
}

int xpuc_buffer_acquire(void *host, int64_t nbytes, int32_t copy_in, void **device)
{
    if (!call.queue)
        return no_call("xpuc_buffer_acquire");
    if (!device || nbytes < 0 || (nbytes > 0 && !host))
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_buffer_acquire (%lld bytes)",
                    (long long)nbytes);
    buffer *b = find_buffer(host, nbytes);
    if (b && b->resident)
        return acquire_resident(b, host, device);
    if (!b && is_call_usm(host)) {
        *device = host;
        return XPUC_OK;
    }
    int status = XPUC_OK;
    if (!b)
        status = add_buffer(host, 0, false, &b);
    if (status == XPUC_OK && (!b->device || b->capacity < nbytes))
        status = grow_buffer(b, nbytes, copy_in);
    bool current = b && b->copied_epoch == call.epoch && b->copied_in >= nbytes;
    if (status == XPUC_OK && copy_in && !current) {
        status = xpuc_copy_to_device(call.queue, b->device, host, nbytes);
        b->copied_in = nbytes;
        b->copied_epoch = call.epoch;
    }
    if (status == XPUC_OK)
        *device = b->device;
    return status;
}

int xpuc_buffer_release(void *host, int64_t nbytes, int32_t copy_out)
{
    if (!call.queue)
        return no_call("xpuc_buffer_release");
    buffer *b = find_buffer(host, nbytes);
    if (!b && is_call_usm(host))
        return XPUC_OK;
    if (!b || !b->device)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: xpuc_buffer_release of %p, which this call did not acquire", host);
    if (b->resident) {
        b->host_stale |= copy_out != 0;
        return XPUC_OK;
    }
    if (nbytes < 0 || nbytes > b->capacity)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: xpuc_buffer_release of %lld bytes at %p, which has only %lld bytes "
                    "on the device",
                    (long long)nbytes, host, (long long)b->capacity);
    return copy_out ? xpuc_copy_to_host(call.queue, host, b->device, nbytes) : XPUC_OK;
}

int xpuc_host_access(void *host, int64_t nbytes, int32_t writes)
{
    if (!call.queue)
        return no_call("xpuc_host_access");
    buffer *b = find_buffer(host, nbytes);
    if (!b || !b->resident)
        return XPUC_OK; /* transient buffers and USM memory are always synced */
    int status = b->host_stale ? sync_to_host(b) : XPUC_OK;
    if (writes)
        b->device_current = false;
    return status;
}

/* ---- USM arrays that compiled code allocates ---------------------------- */

/* The part of Numba's NRT_api_functions (numba/core/runtime/nrt_external.h)
 * used here; its layout is Numba's ABI for extensions. */
typedef void nrt_managed_dtor(void *data);
typedef struct {
    void *(*allocate)(size_t nbytes);
    void *(*allocate_external)(size_t nbytes, void *allocator);
    void *(*manage_memory)(void *data, nrt_managed_dtor dtor);
} nrt_api;

static const nrt_api *nrt;

int xpuc_set_nrt_api(const void *api)
{
    if (!api)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_set_nrt_api needs Numba's NRT API table");
    nrt = api;
    return XPUC_OK;
}

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

int xpuc_usm_array_alloc(int64_t nbytes, int32_t usm_kind, void **meminfo)
{
    if (!call.queue)
        return no_call("xpuc_usm_array_alloc");
    if (!nrt || !meminfo || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_usm_array_alloc "
                                      "(or Numba's NRT API not set)");
    owned_usm *record = malloc(sizeof *record);
    if (!record)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory allocating a USM array");
    int status = usm_alloc(call.queue, nbytes, usm_kind, &record->ptr);
    if (status != XPUC_OK) {
        free(record);
        return status;
    }
    record->nbytes = nbytes;
    record->kind = usm_kind;
    record->context = DPCTLContext_Copy(call.queue->context);
    record->device = DPCTLDevice_Copy(call.queue->device);
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

/* ---- kernel cache --------------------------------------------------------- */

/* Process-wide and never freed: kernels live as long as the process, and
 * tearing SYCL objects down from an atexit handler races the SYCL runtime's
 * own shutdown. Modules are in a hash table on (SPIR-V hash, target): a
 * long-running process builds hundreds, and each launch looks one up; the
 * kernels of a module are a list (a module has one or two). */
typedef struct cached_kernel {
    struct cached_kernel *next;
    DPCTLSyclKernelRef kernel;
    size_t num_args;
    char name[];
} cached_kernel;

typedef struct cached_module {
    struct cached_module *next;
    int32_t target;
    uint64_t hash;
    int64_t length;
    DPCTLSyclKernelBundleRef bundle;
    cached_kernel *kernels;
} cached_module;

#define MODULE_BUCKETS 256
static cached_module *modules[MODULE_BUCKETS];

/* The (context, device) pairs queues were made for, numbered from 0. */
typedef struct known_target {
    struct known_target *next;
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
    int32_t number;
} known_target;

static known_target *targets;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Once per queue wrapped: the SYCL comparisons happen here, not per launch. */
static int target_number(DPCTLSyclContextRef context, DPCTLSyclDeviceRef device, int32_t *out)
{
    pthread_mutex_lock(&cache_lock);
    known_target *t = targets;
    while (t && !(DPCTLContext_AreEq(t->context, context) && DPCTLDevice_AreEq(t->device, device)))
        t = t->next;
    if (!t && (t = malloc(sizeof *t))) {
        t->context = DPCTLContext_Copy(context);
        t->device = DPCTLDevice_Copy(device);
        t->number = targets ? targets->number + 1 : 0;
        t->next = targets;
        targets = t;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!t)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory wrapping a queue");
    *out = t->number;
    return XPUC_OK;
}

static cached_module **module_bucket(int32_t target, uint64_t hash)
{
    /* Fibonacci hashing: the multiply carries every bit into the top byte */
    return &modules[((hash ^ (uint64_t)target) * 0x9E3779B97F4A7C15ull) >> 56];
}

/* The module built from (hash, length) for `target`, or NULL. Called with
 * cache_lock held. */
static cached_module *find_module(int32_t target, uint64_t hash, int64_t length)
{
    cached_module *m = *module_bucket(target, hash);
    while (m && !(m->hash == hash && m->length == length && m->target == target))
        m = m->next;
    return m;
}

static cached_kernel *find_kernel(const cached_module *m, const char *kernel_name)
{
    cached_kernel *k = m->kernels;
    while (k && strcmp(k->name, kernel_name) != 0)
        k = k->next;
    return k;
}

static uint32_t spirv_word(const void *spirv, int64_t i)
{
    uint32_t word; /* memcpy: the module need not be 4-byte aligned */
    memcpy(&word, (const char *)spirv + 4 * i, sizeof word);
    return word;
}

/* The reason `spirv` is not a well-formed SPIR-V word stream, or NULL. Intel's
 * OpenCL CPU runtime crashes or hangs on such input (a zero word count, an
 * instruction running past the end, a truncated module) instead of failing
 * the build. This is no validation: spirv-val is the tool for that. */
static const char *malformed_spirv(const void *spirv, int64_t length)
{
    if (length % 4 != 0 || length < 20)
        return "not a whole number of words, or shorter than the 5-word header";
    if (spirv_word(spirv, 0) != 0x07230203u)
        return "no SPIR-V magic number (in host byte order)";
    int64_t count = length / 4, size, last = 0;
    for (int64_t i = 5; i < count; i += size) {
        size = spirv_word(spirv, i) >> 16;
        if (size == 0 || i + size > count)
            return "an instruction with a zero word count or running past the end";
        last = i;
    }
    /* A module cut at an instruction boundary crashes the driver too. */
    if (last == 0 || (spirv_word(spirv, last) & 0xFFFFu) != 56 /* OpFunctionEnd */)
        return "it does not end with OpFunctionEnd (truncated?)";
    return NULL;
}

/* ---- build logs ------------------------------------------------------------ */

/* dpctl's C API reports a failed build without the compiler's log. On OpenCL
 * the log is worth a second build, on this failure path only: through the
 * OpenCL library the SYCL runtime has loaded, for the device of the same name.
 * The few OpenCL declarations needed are spelled out (no CL headers here). */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
enum { CL_DEVICE_NAME = 0x102B, CL_PROGRAM_BUILD_LOG = 0x1183 };
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFull

typedef struct {
    cl_int (*GetPlatformIDs)(cl_uint, void **, cl_uint *);
    cl_int (*GetDeviceIDs)(void *, uint64_t, cl_uint, void **, cl_uint *);
    cl_int (*GetDeviceInfo)(void *, cl_uint, size_t, void *, size_t *);
    void *(*CreateContext)(const intptr_t *, cl_uint, void **, void *, void *, cl_int *);
    void *(*CreateProgramWithIL)(void *, const void *, size_t, cl_int *);
    cl_int (*BuildProgram)(void *, cl_uint, void **, const char *, void *, void *);
    cl_int (*GetProgramBuildInfo)(void *, void *, cl_uint, size_t, void *, size_t *);
    cl_int (*ReleaseProgram)(void *);
    cl_int (*ReleaseContext)(void *);
} opencl_api;

static bool load_opencl(void *library, opencl_api *cl)
{
    static const char *const names[] = {
        "clGetPlatformIDs", "clGetDeviceIDs",        "clGetDeviceInfo",
        "clCreateContext",  "clCreateProgramWithIL", "clBuildProgram",
        "clGetProgramBuildInfo", "clReleaseProgram", "clReleaseContext",
    };
    void *symbols[sizeof names / sizeof *names];
    _Static_assert(sizeof symbols == sizeof(opencl_api), "one symbol per opencl_api entry");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(symbols[i] = dlsym(library, names[i])))
            return false;
    /* POSIX guarantees dlsym's object pointers convert to function pointers. */
    memcpy(cl, symbols, sizeof symbols);
    return true;
}

static void *find_opencl_device(const opencl_api *cl, const char *device_name)
{
    void *platforms[16], *devices[64];
    cl_uint nplatforms = 0, ndevices = 0;
    char name[256];
    if (cl->GetPlatformIDs(16, platforms, &nplatforms) != 0)
        return NULL;
    for (cl_uint p = 0; p < nplatforms && p < 16; p++) {
        if (cl->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 64, devices, &ndevices) != 0)
            continue;
        for (cl_uint d = 0; d < ndevices && d < 64; d++)
            if (cl->GetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof name, name, NULL) == 0 &&
                strcmp(name, device_name) == 0)
                return devices[d];
    }
    return NULL;
}

/* The OpenCL build log of `spirv` for the device named `device_name`, into
 * `log` (truncated to `size`); empty if there is none to be had. */
static void opencl_build_log(const char *device_name, const void *spirv, size_t length,
                             char *log, size_t size)
{
    log[0] = '\0';
    void *library = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!library)
        return;
    opencl_api cl;
    void *device = load_opencl(library, &cl) ? find_opencl_device(&cl, device_name) : NULL;
    cl_int err;
    void *context = device ? cl.CreateContext(NULL, 1, &device, NULL, NULL, &err) : NULL;
    void *program = context ? cl.CreateProgramWithIL(context, spirv, length, &err) : NULL;
    size_t needed = 0;
    char *full = NULL;
    if (program && cl.BuildProgram(program, 1, &device, "", NULL, NULL) != 0 &&
        cl.GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &needed) == 0 &&
        (full = calloc(1, needed + 1)) &&
        cl.GetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, needed, full, NULL) == 0)
        snprintf(log, size, "%s", full);
    free(full);
    if (program)
        cl.ReleaseProgram(program);
    if (context)
        cl.ReleaseContext(context);
    dlclose(library);
    for (size_t n = strlen(log); n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '); n--)
        log[n - 1] = '\0';
}

static int build_failed(xpuc_queue *q, uint64_t hash, int64_t length, const char *kernel_name,
                        const char *reason)
{
    return fail(XPUC_ERR_BUILD,
                "xpuc: build of SPIR-V module %016llx (%lld bytes, for kernel '%s') failed on "
                "device '%s': %s",
                (unsigned long long)hash, (long long)length, kernel_name, q->device_name, reason);
}

static int build_module(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                        const char *kernel_name, cached_module **out)
{
    COUNT(kernel_builds, 1);
    char reason[3072];
    const char *malformed = malformed_spirv(spirv, length);
    if (malformed) {
        snprintf(reason, sizeof reason, "malformed module: %s", malformed);
        return build_failed(q, hash, length, kernel_name, reason);
    }
    cached_module *m = calloc(1, sizeof *m);
    if (!m)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory caching a module");
    m->bundle =
        DPCTLKernelBundle_CreateFromSpirv(q->context, q->device, spirv, (size_t)length, NULL);
    if (!m->bundle) {
        free(m);
        char log[2048];
        if (DPCTLQueue_GetBackend(q->ref) == DPCTL_OPENCL)
            opencl_build_log(q->device_name, spirv, (size_t)length, log, sizeof log);
        else
            log[0] = '\0';
        if (log[0])
            snprintf(reason, sizeof reason, "build log:\n%s", log);
        else
            snprintf(reason, sizeof reason, "no build log (DPCTL_VERBOSITY=warning makes dpctl "
                                            "print its reason on stderr)");
        return build_failed(q, hash, length, kernel_name, reason);
    }
    cached_module **bucket = module_bucket(q->target, hash);
    m->target = q->target;
    m->hash = hash;
    m->length = length;
    m->next = *bucket;
    *bucket = m;
    *out = m;
    return XPUC_OK;
}

/* Finds the kernel, building its module or getting it from the module if
 * needed. Called with cache_lock held. */
static int lookup_kernel(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                         const char *kernel_name, cached_kernel **out)
{
    cached_module *m = find_module(q->target, hash, length);
    bool built = !m;
    if (built) {
        int status = build_module(q, spirv, length, hash, kernel_name, &m);
        if (status != XPUC_OK)
            return status;
    }
    cached_kernel *k = find_kernel(m, kernel_name);
    if (!k) {
        size_t name_size = strlen(kernel_name) + 1;
        k = malloc(sizeof *k + name_size);
        if (!k)
            return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory caching a kernel");
        k->kernel = DPCTLKernelBundle_GetKernel(m->bundle, kernel_name);
        if (!k->kernel) {
            free(k);
            return fail(XPUC_ERR_INVALID,
                        "xpuc: no kernel '%s' in SPIR-V module %016llx built for device '%s'",
                        kernel_name, (unsigned long long)hash, q->device_name);
        }
        k->num_args = DPCTLKernel_GetNumArgs(k->kernel);
        memcpy(k->name, kernel_name, name_size);
        k->next = m->kernels;
        m->kernels = k;
    }
    if (!built)
        COUNT(kernel_cache_hits, 1);
    *out = k;
    return XPUC_OK;
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
    xpuc_queue *q = call.queue;
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

    /* A kernel built before is found holding the GIL, without waiting for
     * the lock (another thread may be building); anything else goes the way
     * that may build, which takes long and takes no Python: without the GIL. */
    cached_kernel *kernel = NULL;
    if (pthread_mutex_trylock(&cache_lock) == 0) {
        cached_module *m = find_module(q->target, spirv_hash, spirv_len);
        kernel = m ? find_kernel(m, kernel_name) : NULL;
        pthread_mutex_unlock(&cache_lock);
    }
    void *gil;
    if (kernel) {
        COUNT(kernel_cache_hits, 1);
    } else {
        gil = gil_release();
        pthread_mutex_lock(&cache_lock);
        int status = lookup_kernel(q, spirv, spirv_len, spirv_hash, kernel_name, &kernel);
        pthread_mutex_unlock(&cache_lock);
        gil_restore(gil);
        if (status != XPUC_OK)
            return status;
    }
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
    gil = gil_release();
    DPCTLEvent_Wait(e);
    gil_restore(gil);
    DPCTLEvent_Delete(e);
    call.epoch++;
    COUNT(kernel_launches, 1);
    if (__atomic_load_n(&tracing_launches, __ATOMIC_RELAXED)) {
        char gtext[80];
        fprintf(stderr, "xpuc: launched kernel '%s' on device '%s' (global size %s)\n", name,
                q->device_name, format_sizes(gtext, sizeof gtext, global, ndim));
    }
    return XPUC_OK;
}
