/* xpuc's C runtime; xpuc_runtime.h is its contract. No call leaves work in
 * flight: each copy waits for its work, and so does each launch on SYCL; on
 * CUDA a call's launches are queued, and waited for before host code uses
 * what they may use and at the call's end (call.c).
 *
 * This header is what the runtime's files share, private to the library.
 * Each .c file includes it first. What it declares has hidden visibility:
 * the library exports the xpuc_* entries of xpuc_runtime.h only.
 *
 * The runtime is one core and a backend per device family. The core is what
 * compiled host code talks to, the same for both families:
 *   errors.c   the per-thread error message, statistics
 *   queue.c    releasing queues; letting the GIL go while waiting on a device
 *   memory.c   memory through a queue's backend: allocations and the cache
 *              of freed blocks, copies, arrays that compiled code makes
 *   call.c     one offloaded call: its queue and its buffer table (transient
 *              and resident device copies of host arrays), copies
 *   launch.c   kernel launches on the call's queue, the launch trace, the
 *              cost model that keeps tiny parfors on the host
 * A queue's backend (queue_backend, below) does what differs per family:
 *   sycl/      on dpctl's C API (built with XPUC_SYCL): wrapped dpctl queues,
 *              USM and its block cache, SPIR-V builds, submissions
 *   cuda_queue.c  on libxpuc_cuda.so (the CUDA driver API): a CUDA device's
 *              queue, device memory, PTX launches */
#ifndef XPUC_INTERNAL_H
#define XPUC_INTERNAL_H

/* madvise's MADV_HUGEPAGE is a Linux extension, hidden in strict C11 */
#define _DEFAULT_SOURCE
#include "format_sizes.h"
#include "xpuc_runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* What a queue's device family does; the core calls nothing else of it. */
typedef struct queue_backend {
    /* A block of `size` bytes of a USM kind on q's device (a family without
     * shared or host memory gives device memory), NULL if there is none; and
     * freeing one on the target it was allocated for, which may outlive its
     * queues (the core's block cache keeps blocks by target, memory.c). */
    void *(*device_alloc)(xpuc_queue *q, size_t size, int32_t kind);
    void (*device_free)(int32_t target, void *ptr);
    /* A copy in any direction, waited for; `direction` names it in a failure. */
    int (*copy)(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                const char *direction);
    /* Whether kernels on q's device use `ptr` in place (its device memory). */
    bool (*is_device_memory)(xpuc_queue *q, const void *ptr);
    /* Whether a and b (of this family) run on one device and context. */
    bool (*same_device)(xpuc_queue *a, xpuc_queue *b);
    /* Waits for the work already submitted where the queue came from. */
    int (*wait_caller)(xpuc_queue *q);
    /* xpuc_launch on q, its arguments checked; *ran is false when nothing
     * ran (no work-items). It returns once the kernel is done, or, where the
     * family has `wait`, once it is queued. */
    int (*launch)(xpuc_queue *q, const void *binary, int64_t length, uint64_t hash,
                  const char *kernel_name, const uint64_t *arg_slots, const int32_t *arg_kinds,
                  int32_t nargs, const int64_t *global, const int64_t *local, int32_t ndim,
                  bool *ran);
    /* Builds the module into the backend's cache for q's device, as a launch
     * of it would, launching nothing (xpuc_build_ahead); NULL where a family
     * builds nothing ahead. */
    int (*build_ahead)(xpuc_queue *q, const void *binary, int64_t length, uint64_t hash);
    /* Waits for the kernels launched on q (and reports their failure); NULL
     * where each launch waits for its own. */
    int (*wait)(xpuc_queue *q);
    /* A copy between device memory queued behind q's launches, which `wait`
     * waits for; NULL where `wait` is. */
    int (*queue_copy)(xpuc_queue *q, void *dst, const void *src, int64_t nbytes);
    /* Frees what the backend holds of q (not q itself). */
    void (*release)(xpuc_queue *q);
} queue_backend;

struct xpuc_queue {
    const queue_backend *backend;
    char device_name[256];
    /* Kernels can read and write host system memory (malloc'd, NumPy's). */
    bool system_memory;
    /* A CPU device, whose USM is the host's own memory (sycl/memory.c). */
    bool host_memory;
    /* The number of the queue's target in its family: a SYCL (context,
     * device) pair, numbered in this process (kernels built for one queue of
     * the pair serve all of them, found by integers instead of comparing SYCL
     * objects at each launch), or a CUDA device's ordinal. */
    int32_t target;
    /* The target's launch cost in ns, 0 until measured (launch.c): one slot
     * per target, shared by its queues. */
    int64_t *launch_cost_ns;
    /* ---- SYCL (sycl/): dpctl's types, declared by their struct tags so that
     * the core builds without dpctl's headers. */
    /* Where xpuc submits: an in-order queue on the wrapped queue's context and
     * device. Each command is waited for, so the order costs nothing; and two
     * queues, one out-of-order, used from several threads at once deadlock or
     * crash the OpenCL CPU runtime (2025.3; reproduced with dpctl alone). */
    struct DPCTLOpaqueSyclQueue *ref;
    struct DPCTLOpaqueSyclQueue *caller; /* the wrapped queue: a call waits for its work */
    /* Cached once so launches never re-query them. */
    struct DPCTLOpaqueSyclContext *context;
    struct DPCTLOpaqueSyclDevice *device;
    /* ---- CUDA (cuda_queue.c): the device, opened once per process, and the
     * stream (a CUstream; NULL: the legacy default stream) the queue's
     * launches and copies go to. */
    struct xpuc_cuda_device *cuda_device;
    void *cuda_stream;
};

/* ---- errors and statistics (errors.c) ------------------------------------ */

/* Sets the calling thread's message (xpuc_last_error) and returns status. */
HIDDEN int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The failure of an entry that needs a call, called outside one. */
HIDDEN int no_call(const char *what);

HIDDEN extern xpuc_stats runtime_stats;
#define COUNT(field, n) __atomic_fetch_add(&runtime_stats.field, (int64_t)(n), __ATOMIC_RELAXED)

/* ---- queues and waiting (queue.c) ---------------------------------------- */

/* Releases the GIL if this thread holds it; pass the result to gil_restore. */
HIDDEN void *gil_release(void);
HIDDEN void gil_restore(void *state);

/* ---- memory (memory.c) ----------------------------------------------------- */

/* nbytes of a USM kind on q's device, from the block cache or the backend. */
HIDDEN int usm_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out);
/* Takes the size and kind the block was allocated with. While the calling
 * thread's call has kernels in flight, a block freed on its device is held
 * for that call's own allocations (queued after those kernels) until
 * release_held_blocks, which the call's wait calls. */
HIDDEN void usm_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind);
HIDDEN void release_held_blocks(void);

/* Numba's MemInfo of an array that compiled code allocated: the bytes NRT
 * allocated for it (false for memory it only wraps, a NumPy argument's), a
 * reference taken and given back, and whether the one reference left is the
 * caller's (nothing else can reach the array). */
HIDDEN bool nrt_allocation(void *meminfo, char **data, int64_t *nbytes);
HIDDEN void nrt_acquire(void *meminfo);
HIDDEN void nrt_release(void *meminfo);
HIDDEN bool nrt_sole_reference(void *meminfo);

/* ---- launches (launch.c) --------------------------------------------------- */


/* ---- the current call (call.c) ------------------------------------------- */

/* The queue of the calling thread's call, NULL outside a call. */
HIDDEN xpuc_queue *call_queue(void);
/* A kernel of the current call ran (or was queued): copies made before it
 * may be stale. */
HIDDEN void call_launched(const char *kernel_name);
/* Whether kernels the current call queued may still be running. */
HIDDEN bool call_in_flight(void);
/* Waits for the kernels the current call queued, if any. */
HIDDEN int call_wait(void);
/* After a copy of nbytes on the current call's queue, which waited for the
 * kernels queued before it: they are done if it succeeded; a failure may be
 * theirs, and its message says so. Returns status. */
HIDDEN int call_copied(int status, int64_t nbytes);

/* ---- the backends ---------------------------------------------------------- */

/* A queue on CUDA device `ordinal` (cuda/queue.c; xpuc_cuda_queue). */
HIDDEN extern const queue_backend cuda_backend;

#endif
