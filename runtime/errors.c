/* Errors and statistics: the calling thread's message of its last failed
 * entry, and the process-wide counters. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[4096]; /* room for a build log */

int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *xpuc_last_error(void) { return last_error; }

xpuc_stats runtime_stats;

void xpuc_get_stats(xpuc_stats *out)
{
    out->kernel_launches = __atomic_load_n(&runtime_stats.kernel_launches, __ATOMIC_RELAXED);
    out->kernel_builds = __atomic_load_n(&runtime_stats.kernel_builds, __ATOMIC_RELAXED);
    out->kernel_cache_hits = __atomic_load_n(&runtime_stats.kernel_cache_hits, __ATOMIC_RELAXED);
    out->h2d_bytes = __atomic_load_n(&runtime_stats.h2d_bytes, __ATOMIC_RELAXED);
    out->d2h_bytes = __atomic_load_n(&runtime_stats.d2h_bytes, __ATOMIC_RELAXED);
    out->d2d_bytes = __atomic_load_n(&runtime_stats.d2d_bytes, __ATOMIC_RELAXED);
    out->usm_allocs = __atomic_load_n(&runtime_stats.usm_allocs, __ATOMIC_RELAXED);
    out->usm_frees = __atomic_load_n(&runtime_stats.usm_frees, __ATOMIC_RELAXED);
    out->host_parfors = __atomic_load_n(&runtime_stats.host_parfors, __ATOMIC_RELAXED);
    out->device_waits = __atomic_load_n(&runtime_stats.device_waits, __ATOMIC_RELAXED);
}

void xpuc_reset_stats(void)
{
    __atomic_store_n(&runtime_stats.kernel_launches, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.kernel_builds, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.kernel_cache_hits, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.h2d_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.d2h_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.d2d_bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.usm_allocs, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.usm_frees, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.host_parfors, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&runtime_stats.device_waits, 0, __ATOMIC_RELAXED);
}

int no_call(const char *what)
{
    return fail(XPUC_ERR_INVALID,
                "xpuc: %s outside a call: xpuc_call_begin was not called on this thread", what);
}
