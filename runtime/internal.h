/* xpuc's C runtime on dpctl's C API (libDPCTLSyclInterface); xpuc_runtime.h
 * is its contract. Everything is synchronous: each copy and launch waits for
 * its event, so no call leaves work in flight.
 *
 * This header is what the runtime's files share, private to the library.
 * Each .c file includes it first. What it declares has hidden visibility:
 * the library exports the xpuc_* entries of xpuc_runtime.h only.
 *
 *   errors.c   the per-thread error message, statistics
 *   queue.c    wrapped queues; letting the GIL go while waiting on the device
 *   memory.c   USM (allocations, the block cache, copies), USM arrays of
 *              compiled code
 *   call.c     one offloaded call: its queue and its buffer table (transient
 *              and resident device copies of host arrays)
 *   program.c  SPIR-V modules built for a target, the kernel cache
 *   launch.c   kernel launches, the launch trace, the cost model that keeps
 *              tiny parfors on the host */
#ifndef XPUC_INTERNAL_H
#define XPUC_INTERNAL_H

/* madvise's MADV_HUGEPAGE is a Linux extension, hidden in strict C11 */
#define _DEFAULT_SOURCE
#include "xpuc_runtime.h"

#include <dpctl_sycl_interface.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HIDDEN __attribute__((visibility("hidden")))

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
    /* A CPU device, whose USM is the host's own memory (advise_pages, memory.c). */
    bool host_memory;
    /* Kernels can read and write host system memory (malloc'd, NumPy's). */
    bool system_memory;
    /* The number of the (context, device) pair in this process: kernels
     * built for one queue of the pair serve all of them, found by integers
     * instead of comparing SYCL objects at each launch. */
    int32_t target;
    /* The target's launch cost in ns, 0 until measured (launch.c): one slot
     * per target, shared by its queues. */
    int64_t *launch_cost_ns;
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

/* ---- USM memory and copies (memory.c) ------------------------------------ */

HIDDEN int usm_alloc(xpuc_queue *q, int64_t nbytes, int32_t kind, void **out);
/* Takes the size and kind the block was allocated with. */
HIDDEN void usm_free(xpuc_queue *q, void *ptr, int64_t nbytes, int32_t kind);
/* A copy on q's queue, waited for; `direction` names it in a failure. */
HIDDEN int memcpy_wait(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                       const char *direction);

/* ---- the current call (call.c) ------------------------------------------- */

/* The queue of the calling thread's call, NULL outside a call. */
HIDDEN xpuc_queue *call_queue(void);
/* A kernel of the current call ran: copies made before it may be stale. */
HIDDEN void call_launched(void);

/* ---- programs and the kernel cache (program.c) --------------------------- */

/* The number of the (context, device) pair in this process, from 0, and the
 * slot of its launch cost. */
HIDDEN int target_number(DPCTLSyclContextRef context, DPCTLSyclDeviceRef device, int32_t *out,
                         int64_t **launch_cost_ns);

/* A kernel built for a target, kept for the life of the process. */
typedef struct cached_kernel {
    struct cached_kernel *next;
    DPCTLSyclKernelRef kernel;
    size_t num_args;
    char name[];
} cached_kernel;

/* The kernel `kernel_name` of the SPIR-V module (spirv, length, hash) for q's
 * target, built now if it was not before. */
HIDDEN int get_kernel(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                      const char *kernel_name, cached_kernel **out);

#endif
