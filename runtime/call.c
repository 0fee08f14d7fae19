/* One offloaded call of a jitted function on the calling thread: the queue it
 * launches on and its buffers, the device copies of host arrays (transient
 * ones synced at each parfor, resident ones synced lazily), and the kernels
 * it queued and has not waited for (CUDA). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* A host array's device copy during a call. A transient buffer mirrors one
 * array and is synced at each parfor (copied in before, back after). A
 * resident buffer mirrors a registered region (the memory of an argument,
 * which outlives the call, or of an array the call made, which the call keeps
 * alive) and is synced lazily: in before the first kernel that needs it, out
 * when host code touches it or the call ends. */
typedef struct {
    char *host;
    void *device; /* NULL until first acquired */
    int64_t capacity;
    int64_t copied_in;    /* transient: bytes copied in during epoch copied_epoch */
    int64_t copied_epoch;
    bool resident;
    bool device_current; /* resident: the device copy holds the data */
    bool host_stale;     /* resident: a kernel wrote it; the host copy is old */
    void *meminfo;       /* resident: the array the call made, referenced; or NULL */
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
    /* Kernels queued since the last wait (a backend with `wait`), and the
     * name of the last, for the message of a failure a wait finds. */
    bool in_flight;
    const char *last_kernel;
} call;

/* Whether kernels use host arrays in place (xpuc_use_system_memory). */
static int32_t system_memory_allowed = 1;

int xpuc_use_system_memory(int32_t on)
{
    __atomic_store_n(&system_memory_allowed, on != 0, __ATOMIC_RELAXED);
    return XPUC_OK;
}

/* Whether the current call's kernels take host arrays as they are. */
static bool in_place(void)
{
    return call.queue->system_memory && __atomic_load_n(&system_memory_allowed, __ATOMIC_RELAXED);
}

xpuc_queue *call_queue(void) { return call.queue; }

/* Work the call queued and has not waited for: a kernel, or (NULL) a copy. */
static void queued(const char *kernel_name)
{
    call.in_flight = true;
    call.last_kernel = kernel_name;
}

void call_launched(const char *kernel_name)
{
    call.epoch++;
    if (call.queue->backend->wait)
        queued(kernel_name);
}

bool call_in_flight(void) { return call.in_flight; }

/* The queued work is done (or failed): what the call freed meanwhile is idle. */
static void queued_work_done(void)
{
    call.in_flight = false;
    release_held_blocks();
}

/* A failure found while the call's kernels were in flight may be theirs: its
 * message names the last one the call queued. */
static int queued_work_failed(int status)
{
    char message[2048], last[300];
    snprintf(message, sizeof message, "%s", xpuc_last_error());
    if (call.last_kernel)
        snprintf(last, sizeof last, "kernel '%s'", call.last_kernel);
    else
        snprintf(last, sizeof last, "a device-to-device copy");
    return fail(status,
                "%s (the call had queued %s on device '%s' and not waited for it: the "
                "failure may be that work's or earlier work's)",
                message, last, call.queue->device_name);
}

int call_wait(void)
{
    if (!call.in_flight)
        return XPUC_OK;
    int status = call.queue->backend->wait(call.queue);
    bool queued_failure = status != XPUC_OK;
    queued_work_done();
    return queued_failure ? queued_work_failed(status) : XPUC_OK;
}

int call_copied(int status, int64_t nbytes)
{
    if (!call.in_flight || nbytes <= 0)
        return status;
    if (status != XPUC_OK)
        return queued_work_failed(status); /* still in flight: the call's end waits */
    queued_work_done();
    return XPUC_OK;
}

/* A copy on the call's queue (a backend's copy waits for it). */
static int call_copy(void *dst, const void *src, int64_t nbytes, const char *direction)
{
    return call_copied(call.queue->backend->copy(call.queue, dst, src, nbytes, direction),
                       nbytes);
}

int xpuc_call_begin(xpuc_queue *queue)
{
    if (!queue)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_call_begin needs a queue");
    /* A nested call keeps the outer call's queue and buffers, which are only
     * usable if it runs on the same context and device. */
    if (call.queue && queue != call.queue &&
        !(queue->backend == call.queue->backend &&
          queue->backend->same_device(queue, call.queue)))
        return fail(XPUC_ERR_INVALID,
                    "xpuc: a call on device '%s' cannot nest in a call on device '%s' "
                    "(another context or device)",
                    queue->device_name, call.queue->device_name);
    /* The call runs after the work already submitted to its queue, as if it
     * were submitted there too: dpctl's operations return before their
     * kernels finish, and a call may read what they write. */
    int status = queue->backend->wait_caller(queue);
    if (status != XPUC_OK)
        return status;
    if (!call.queue)
        call.queue = queue;
    call.depth++;
    return XPUC_OK;
}

/* The queue xpuc_call_enter begins a call on (outside a call). */
static _Thread_local xpuc_queue *next_queue;

int xpuc_call_queue(xpuc_queue *queue)
{
    next_queue = queue;
    return XPUC_OK;
}

int xpuc_call_enter(void)
{
    /* The caller began the call: the outer begin waited for the queue. */
    if (call.queue) {
        call.depth++;
        return XPUC_OK;
    }
    if (!next_queue)
        return fail(XPUC_ERR_INVALID,
                    "xpuc: offloaded code was called with no queue to run on "
                    "(xpuc_call_queue names it)");
    return xpuc_call_begin(next_queue);
}

static int sync_to_host(buffer *b)
{
    int status = xpuc_copy_to_host(call.queue, b->host, b->device, b->capacity);
    if (status == XPUC_OK)
        b->host_stale = false;
    return status;
}

/* Whether nothing but the call's own reference reaches the array of `b`. */
static bool is_dead(const buffer *b) { return b->meminfo && nrt_sole_reference(b->meminfo); }

/* Frees b's device copy and lets go of its array. */
static void drop_buffer(buffer *b)
{
    if (b->device)
        usm_free(call.queue, b->device, b->capacity, XPUC_USM_DEVICE);
    if (b->meminfo)
        nrt_release(b->meminfo);
}

int xpuc_call_end(void)
{
    if (!call.queue)
        return no_call("xpuc_call_end");
    if (--call.depth > 0)
        return XPUC_OK;
    /* Copy back what kernels wrote to arrays still reachable even if one of
     * the copies fails, wait for the kernels (a copy back has already waited
     * for those before it), and free every buffer; report the first failure. */
    int status = XPUC_OK;
    for (int32_t i = 0; i < call.count; i++) {
        buffer *b = &call.buffers[i];
        if (b->host_stale && !is_dead(b)) {
            int copied = sync_to_host(b);
            status = status != XPUC_OK ? status : copied;
        }
    }
    int waited = call_wait();
    status = status != XPUC_OK ? status : waited;
    for (int32_t i = 0; i < call.count; i++)
        drop_buffer(&call.buffers[i]);
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
    if (in_place())
        return XPUC_OK; /* kernels use the host memory itself: nothing to keep in sync */
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

int xpuc_array_resident(void *meminfo)
{
    if (!call.queue)
        return no_call("xpuc_array_resident");
    char *data;
    int64_t nbytes;
    if (in_place() || !nrt_allocation(meminfo, &data, &nbytes))
        return XPUC_OK;
    /* Arrays that died since give their device memory back (to the block
     * cache, which may serve this one) and their host memory is freed. */
    for (int32_t i = call.count - 1; i >= 0; i--) {
        if (is_dead(&call.buffers[i])) {
            drop_buffer(&call.buffers[i]);
            call.buffers[i] = call.buffers[--call.count];
        }
    }
    /* Resident already, or overlapping a region that is (two device copies
     * of one byte would disagree): nothing to add. */
    for (int32_t i = 0; i < call.count; i++) {
        const buffer *r = &call.buffers[i];
        if (r->resident && data < r->host + r->capacity && r->host < data + nbytes)
            return XPUC_OK;
    }
    /* A transient buffer at the same address mirrored memory freed since;
     * it holds nothing the host lacks. */
    buffer *b = find_buffer(data, nbytes);
    if (b) {
        drop_buffer(b);
        *b = call.buffers[--call.count];
    }
    int status = add_buffer(data, nbytes, true, &b);
    if (status == XPUC_OK) {
        b->meminfo = meminfo;
        nrt_acquire(meminfo);
    }
    return status;
}

/* Whether `ptr` is memory of the current call's device (USM of its context,
 * CUDA device memory), which kernels use in place. */
static bool is_call_usm(const void *ptr)
{
    return ptr && call.queue->backend->is_device_memory(call.queue, ptr);
}

static int acquire_resident(buffer *b, const char *host, int64_t nbytes, int32_t copy_in,
                            void **device)
{
    int status = XPUC_OK;
    if (!b->device)
        status = usm_alloc(call.queue, b->capacity, XPUC_USM_DEVICE, &b->device);
    /* A kernel that writes the whole region makes its device copy current. */
    if (status == XPUC_OK && copy_in == XPUC_COPY_OVERWRITTEN && host == b->host &&
        nbytes == b->capacity)
        b->device_current = true;
    /* Otherwise always the whole region: a kernel may write part of it, and
     * the rest must survive the copy back. */
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
        status = call_copy(device, b->device, b->capacity, "device->device");
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
    if (in_place()) {
        *device = host;
        return XPUC_OK;
    }
    buffer *b = find_buffer(host, nbytes);
    if (b && b->resident)
        return acquire_resident(b, host, nbytes, copy_in, device);
    if (!b && is_call_usm(host)) {
        *device = host;
        return XPUC_OK;
    }
    int status = XPUC_OK;
    if (!b)
        status = add_buffer(host, 0, false, &b);
    if (status == XPUC_OK && (!b->device || b->capacity < nbytes))
        status = grow_buffer(b, nbytes, copy_in == XPUC_COPY_IN);
    bool current = b && b->copied_epoch == call.epoch && b->copied_in >= nbytes;
    if (status == XPUC_OK && copy_in == XPUC_COPY_IN && !current) {
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
    if (in_place())
        return XPUC_OK;
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
    /* Memory kernels use in place may be in a queued kernel's use. */
    if (!b && call.in_flight && (in_place() || is_call_usm(host)))
        return call_wait();
    if (!b || !b->resident)
        return XPUC_OK; /* host memory that kernels see through copies, synced */
    int status = b->host_stale ? sync_to_host(b) : XPUC_OK;
    if (writes)
        b->device_current = false;
    return status;
}

int xpuc_element_copy(void *dst, const void *src, int64_t nbytes, int32_t to_device)
{
    if (!call.queue)
        return no_call("xpuc_element_copy");
    if (nbytes < 0 || !dst || !src)
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_element_copy");
    int status = call_copy(dst, src, nbytes, to_device ? "host->device" : "device->host");
    if (status == XPUC_OK && to_device)
        COUNT(h2d_bytes, nbytes);
    else if (status == XPUC_OK)
        COUNT(d2h_bytes, nbytes);
    return status;
}

int xpuc_device_copy(void *dst, const void *src, int64_t nbytes)
{
    if (!call.queue)
        return no_call("xpuc_device_copy");
    if (nbytes < 0 || (nbytes > 0 && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: bad arguments to xpuc_device_copy (%lld bytes)",
                    (long long)nbytes);
    /* Queued where launches are: it follows them on the device, as they follow
     * it. */
    const queue_backend *backend = call.queue->backend;
    int status = backend->queue_copy ? backend->queue_copy(call.queue, dst, src, nbytes)
                                     : call_copy(dst, src, nbytes, "device->device");
    if (status == XPUC_OK && backend->queue_copy && nbytes > 0)
        queued(NULL);
    if (status == XPUC_OK)
        COUNT(d2d_bytes, nbytes);
    return status;
}
