/* What the SYCL backend's files share (hidden, as the core's internal.h).
 * Each of them includes it first.
 *
 *   queue.c    wrapped dpctl queues, the backend's table (sycl_backend)
 *   memory.c   USM allocations and frees, page advice, copies
 *   program.c  SPIR-V modules built for a target, the kernel cache
 *   launch.c   submissions of a kernel */
#ifndef XPUC_SYCL_H
#define XPUC_SYCL_H

#include "../internal.h"

#include <dpctl_sycl_interface.h>

HIDDEN extern const queue_backend sycl_backend;

/* ---- USM memory and copies (memory.c) ------------------------------------ */

HIDDEN void *sycl_device_alloc(xpuc_queue *q, size_t size, int32_t kind);
HIDDEN void sycl_device_free(int32_t target, void *ptr);
/* A copy on q's queue, waited for; `direction` names it in a failure. */
HIDDEN int memcpy_wait(xpuc_queue *q, void *dst, const void *src, int64_t nbytes,
                       const char *direction);

/* ---- launches (launch.c) --------------------------------------------------- */

HIDDEN int submit_kernel(xpuc_queue *q, const void *spirv, int64_t spirv_len,
                         uint64_t spirv_hash, const char *kernel_name,
                         const uint64_t *arg_slots, const int32_t *arg_kinds, int32_t nargs,
                         const int64_t *global, const int64_t *local, int32_t ndim, bool *ran);

/* ---- programs and the kernel cache (program.c) --------------------------- */

/* The number of the (context, device) pair in this process, from 0, and the
 * slot of its launch cost. */
HIDDEN int target_number(DPCTLSyclContextRef context, DPCTLSyclDeviceRef device, int32_t *out,
                         int64_t **launch_cost_ns);
/* The context of target number `target` (kept for the process). */
HIDDEN DPCTLSyclContextRef target_context(int32_t target);

/* A kernel built for a target, kept for the life of the process. */
typedef struct cached_kernel {
    struct cached_kernel *next;
    DPCTLSyclKernelRef kernel;
    size_t num_args;
    char name[];
} cached_kernel;

/* The module built into the kernel cache for q's target, if it is not there
 * (xpuc_build_ahead). */
HIDDEN int build_module_ahead(xpuc_queue *q, const void *spirv, int64_t length,
                              uint64_t hash);
/* The kernel `kernel_name` of the SPIR-V module (spirv, length, hash) for q's
 * target, built now if it was not before. */
HIDDEN int get_kernel(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
                      const char *kernel_name, cached_kernel **out);

#endif
