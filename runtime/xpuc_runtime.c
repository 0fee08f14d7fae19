/* xpuc's C runtime on dpctl's C API (libDPCTLSyclInterface). See
 * xpuc_runtime.h for the contract. Everything here is synchronous: each copy
 * and launch waits for its event, so no call leaves work in flight. */
#include "xpuc_runtime.h"

#include <dpctl_sycl_interface.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scalar kernel arguments are passed to dpctl as the address of their 64-bit
 * slot, so an i8/i32/f32 must sit in the slot's low-address bytes. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpuc_runtime assumes a little-endian host"
#endif

struct xpuc_queue {
    DPCTLSyclQueueRef ref;
    /* Cached once so launches never re-query them. */
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
    char device_name[256];
};

/* ---- errors and statistics --------------------------------------------- */

static _Thread_local char last_error[1024];

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
    q->ref = DPCTLQueue_Copy(dpctl_queue_ref);
    q->context = q->ref ? DPCTLQueue_GetContext(q->ref) : NULL;
    q->device = q->ref ? DPCTLQueue_GetDevice(q->ref) : NULL;
    if (!q->context || !q->device) {
        xpuc_queue_release(q);
        return fail(XPUC_ERR_INVALID, "xpuc: DPCTLSyclQueueRef %p is not a usable queue",
                    dpctl_queue_ref);
    }
    const char *name = DPCTLDevice_GetName(q->device);
    snprintf(q->device_name, sizeof q->device_name, "%s", name ? name : "?");
    DPCTLCString_Delete(name);
    *out = q;
    return XPUC_OK;
}

/* ---- per-call state (thread-local) --------------------------------------- */

typedef struct {
    void *host;
    void *device;
    int64_t capacity;
} buffer;

static _Thread_local struct {
    xpuc_queue *queue; /* NULL outside a call */
    int32_t depth;
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
    free(queue);
    return XPUC_OK;
}

/* ---- USM memory and copies ---------------------------------------------- */

/* SYCL's malloc returns NULL for 0 bytes, which we could not tell from a
 * failure: allocate at least one byte so zero-size arrays get a real pointer. */
static int usm_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out)
{
    size_t size = nbytes > 0 ? (size_t)nbytes : 1;
    switch (kind) {
    case XPUC_USM_DEVICE: *out = DPCTLmalloc_device(size, q->ref); break;
    case XPUC_USM_SHARED: *out = DPCTLmalloc_shared(size, q->ref); break;
    case XPUC_USM_HOST: *out = DPCTLmalloc_host(size, q->ref); break;
    default:
        return fail(XPUC_ERR_INVALID, "xpuc: unknown USM kind %d", (int)kind);
    }
    if (!*out)
        return fail(XPUC_ERR_ALLOC, "xpuc: USM allocation of %lld bytes failed on device '%s'",
                    (long long)nbytes, q->device_name);
    COUNT(usm_allocs, 1);
    return XPUC_OK;
}

static void usm_free(xpuc_queue *q, void *ptr)
{
    DPCTLfree_with_queue(ptr, q->ref);
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
    DPCTLEvent_Wait(e);
    DPCTLEvent_Delete(e);
    return XPUC_OK;
}

int xpuc_usm_alloc(xpuc_queue *queue, int64_t nbytes, int32_t usm_kind, void **out)
{
    if (!queue || !out || nbytes < 0)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_usm_alloc");
    return usm_alloc(queue, nbytes, usm_kind, out);
}

int xpuc_usm_free(xpuc_queue *queue, void *ptr)
{
    if (!queue)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_usm_free needs a queue");
    if (ptr)
        usm_free(queue, ptr);
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
    return fail(XPUC_ERR_INVALID, "xpuc: %s outside a call: xpuc_call_begin was not called on this thread",
                what);
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
    if (!call.queue)
        call.queue = queue;
    call.depth++;
    return XPUC_OK;
}

int xpuc_call_end(void)
{
    if (!call.queue)
        return no_call("xpuc_call_end");
    if (--call.depth > 0)
        return XPUC_OK;
    for (int32_t i = 0; i < call.count; i++)
        usm_free(call.queue, call.buffers[i].device);
    free(call.buffers);
    call.buffers = NULL;
    call.count = call.capacity = 0;
    call.queue = NULL;
    return XPUC_OK;
}

static buffer *find_buffer(const void *host)
{
    for (int32_t i = 0; i < call.count; i++)
        if (call.buffers[i].host == host)
            return &call.buffers[i];
    return NULL;
}

static int new_buffer(void *host, int64_t nbytes, buffer **out)
{
    if (call.count == call.capacity) {
        int32_t capacity = call.capacity ? 2 * call.capacity : 16;
        buffer *grown = realloc(call.buffers, (size_t)capacity * sizeof *grown);
        if (!grown)
            return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory for the buffer table");
        call.buffers = grown;
        call.capacity = capacity;
    }
    buffer *b = &call.buffers[call.count];
    int status = usm_alloc(call.queue, nbytes, XPUC_USM_DEVICE, &b->device);
    if (status != XPUC_OK)
        return status;
    b->host = host;
    b->capacity = nbytes;
    call.count++;
    *out = b;
    return XPUC_OK;
}

/* Replaces a buffer that is too small. Without copy_in the device copy is the
 * current one (an earlier kernel of this call may have written it), so its
 * bytes move to the new allocation. */
static int grow_buffer(buffer *b, int64_t nbytes, bool copy_in)
{
    void *device = NULL;
    int status = usm_alloc(call.queue, nbytes, XPUC_USM_DEVICE, &device);
    if (status == XPUC_OK && !copy_in)
        status = memcpy_wait(call.queue, device, b->device, b->capacity, "device->device");
    if (status != XPUC_OK) {
        if (device)
            usm_free(call.queue, device);
        return status;
    }
    usm_free(call.queue, b->device);
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
    buffer *b = find_buffer(host);
    int status = XPUC_OK;
    if (!b)
        status = new_buffer(host, nbytes, &b);
    else if (b->capacity < nbytes)
        status = grow_buffer(b, nbytes, copy_in);
    if (status == XPUC_OK && copy_in)
        status = xpuc_copy_to_device(call.queue, b->device, host, nbytes);
    if (status == XPUC_OK)
        *device = b->device;
    return status;
}

int xpuc_buffer_release(void *host, int64_t nbytes, int32_t copy_out)
{
    if (!call.queue)
        return no_call("xpuc_buffer_release");
    buffer *b = find_buffer(host);
    if (!b || nbytes < 0 || nbytes > b->capacity)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: xpuc_buffer_release of %lld bytes at %p, which this call did not acquire",
                    (long long)nbytes, host);
    return copy_out ? xpuc_copy_to_host(call.queue, host, b->device, nbytes) : XPUC_OK;
}

/* ---- kernel cache --------------------------------------------------------- */

/* Process-wide and never freed: kernels live as long as the process, and
 * tearing SYCL objects down from an atexit handler races the SYCL runtime's
 * own shutdown. Lists are fine: a program has a handful of modules. */
typedef struct cached_kernel {
    struct cached_kernel *next;
    DPCTLSyclKernelRef kernel;
    char name[];
} cached_kernel;

typedef struct cached_module {
    struct cached_module *next;
    DPCTLSyclContextRef context;
    DPCTLSyclDeviceRef device;
    uint64_t hash;
    int64_t length;
    DPCTLSyclKernelBundleRef bundle;
    cached_kernel *kernels;
} cached_module;

static cached_module *modules;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int build_module(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                        const char *kernel_name, cached_module **out)
{
    COUNT(kernel_builds, 1);
    cached_module *m = calloc(1, sizeof *m);
    if (!m)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory caching a module");
    m->bundle = DPCTLKernelBundle_CreateFromSpirv(q->context, q->device, spirv, (size_t)length, NULL);
    if (!m->bundle) {
        free(m);
        /* dpctl's C API keeps the build log to itself; DPCTL_VERBOSITY=error
         * makes it print at least the OpenCL error code on stderr. */
        return fail(XPUC_ERR_BUILD,
                    "xpuc: build of SPIR-V module %016llx (%lld bytes, for kernel '%s') "
                    "failed on device '%s' (set DPCTL_VERBOSITY=error for dpctl's reason)",
                    (unsigned long long)hash, (long long)length, kernel_name, q->device_name);
    }
    m->context = DPCTLContext_Copy(q->context);
    m->device = DPCTLDevice_Copy(q->device);
    m->hash = hash;
    m->length = length;
    m->next = modules;
    modules = m;
    *out = m;
    return XPUC_OK;
}

/* Called with cache_lock held. */
static int lookup_kernel(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                         const char *kernel_name, DPCTLSyclKernelRef *out)
{
    cached_module *m = modules;
    while (m && !(m->hash == hash && m->length == length &&
                  DPCTLContext_AreEq(m->context, q->context) &&
                  DPCTLDevice_AreEq(m->device, q->device)))
        m = m->next;
    bool built = !m;
    if (built) {
        int status = build_module(q, spirv, length, hash, kernel_name, &m);
        if (status != XPUC_OK)
            return status;
    }
    cached_kernel *k = m->kernels;
    while (k && strcmp(k->name, kernel_name) != 0)
        k = k->next;
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
        memcpy(k->name, kernel_name, name_size);
        k->next = m->kernels;
        m->kernels = k;
    }
    if (!built)
        COUNT(kernel_cache_hits, 1);
    *out = k->kernel;
    return XPUC_OK;
}

/* ---- launches --------------------------------------------------------------- */

static const DPCTLKernelArgType dpctl_arg_types[] = {
    [XPUC_ARG_PTR] = DPCTL_VOID_PTR,    [XPUC_ARG_I8] = DPCTL_INT8_T,
    [XPUC_ARG_I32] = DPCTL_INT32_T,     [XPUC_ARG_I64] = DPCTL_INT64_T,
    [XPUC_ARG_F32] = DPCTL_FLOAT32_T,   [XPUC_ARG_F64] = DPCTL_FLOAT64_T,
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
                    "xpuc: launch of kernel '%s' on device '%s': bad arguments "
                    "(%d kernel arguments, at most %d; %d dimensions)",
                    name, q->device_name, (int)nargs, XPUC_MAX_KERNEL_ARGS, (int)ndim);

    char gtext[80], ltext[80];
    format_sizes(gtext, sizeof gtext, global, ndim);
    format_sizes(ltext, sizeof ltext, local, ndim);
    /* SYCL's last dimension is SPIR-V's x. */
    size_t grange[3], lrange[3];
    bool has_local = false, empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t g = global[ndim - 1 - i], l = local ? local[ndim - 1 - i] : 0;
        if (g < 0 || l < 0 || (l > 0 && g % l != 0))
            return fail(XPUC_ERR_INVALID,
                        "xpuc: launch of kernel '%s' on device '%s': global size %s is not "
                        "a multiple of local size %s",
                        name, q->device_name, gtext, ltext);
        grange[i] = (size_t)g;
        lrange[i] = (size_t)l;
        has_local |= l > 0;
        empty |= g == 0;
    }
    for (int32_t i = 0; i < ndim; i++)
        if (has_local && lrange[i] == 0)
            return fail(XPUC_ERR_INVALID,
                        "xpuc: launch of kernel '%s' on device '%s': local size %s must be "
                        "all zero or all positive",
                        name, q->device_name, ltext);

    void *args[XPUC_MAX_KERNEL_ARGS];
    DPCTLKernelArgType types[XPUC_MAX_KERNEL_ARGS];
    for (int32_t i = 0; i < nargs; i++) {
        if (arg_kinds[i] < XPUC_ARG_PTR || arg_kinds[i] > XPUC_ARG_F64)
            return fail(XPUC_ERR_INVALID,
                        "xpuc: launch of kernel '%s': argument %d has unknown kind %d", name,
                        (int)i, (int)arg_kinds[i]);
        types[i] = dpctl_arg_types[arg_kinds[i]];
        /* dpctl reads scalars through the pointer and never writes them. */
        args[i] = arg_kinds[i] == XPUC_ARG_PTR ? (void *)(uintptr_t)arg_slots[i]
                                               : (void *)&arg_slots[i];
    }

    DPCTLSyclKernelRef kernel = NULL;
    pthread_mutex_lock(&cache_lock);
    int status = lookup_kernel(q, spirv, spirv_len, spirv_hash, kernel_name, &kernel);
    pthread_mutex_unlock(&cache_lock);
    if (status != XPUC_OK)
        return status;

    /* No work items: nothing to submit (SYCL rejects some empty nd_ranges). */
    if (!empty) {
        DPCTLSyclEventRef e =
            has_local ? DPCTLQueue_SubmitNDRange(kernel, q->ref, args, types, (size_t)nargs,
                                                 grange, lrange, (size_t)ndim, NULL, 0)
                      : DPCTLQueue_SubmitRange(kernel, q->ref, args, types, (size_t)nargs,
                                               grange, (size_t)ndim, NULL, 0);
        if (!e)
            return fail(XPUC_ERR_LAUNCH,
                        "xpuc: launch of kernel '%s' failed on device '%s': submission "
                        "rejected (global size %s, local size %s; a kernel with a fixed "
                        "work-group size needs exactly that local size)",
                        name, q->device_name, gtext, ltext);
        DPCTLEvent_Wait(e);
        DPCTLEvent_Delete(e);
    }
    COUNT(kernel_launches, 1);
    return XPUC_OK;
}
