/* xpuc's C runtime: a thin layer on dpctl's C API (SYCL devices) and on the
 * CUDA driver API (through libxpuc_cuda.so) that the host code Numba
 * compiles calls directly; past making a queue, every entry is the same for
 * both families. Every entry returns XPUC_OK or an error status; the
 * message (device, kernel, reason) is in xpuc_last_error(), per thread.
 *
 * compiler/abi.py defines this interface for Python and compiled host code
 * (enums, limits, the stats struct, every prototype); tests/test_abi.py checks
 * that this header agrees with it: change both together. */
#ifndef XPUC_RUNTIME_H
#define XPUC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    XPUC_OK = 0,
    XPUC_ERR_INVALID = 1, /* bad argument, or no queue bound to this thread */
    XPUC_ERR_ALLOC = 2,   /* USM allocation failed */
    XPUC_ERR_COPY = 3,    /* host<->device copy failed */
    XPUC_ERR_BUILD = 4,   /* SPIR-V or PTX module did not build for the device */
    XPUC_ERR_LAUNCH = 5,  /* kernel submission or execution failed */
    XPUC_ERR_DRIVER = 6,  /* the device driver is missing or failed (CUDA) */
} xpuc_status;

typedef enum { XPUC_USM_DEVICE = 0, XPUC_USM_SHARED = 1, XPUC_USM_HOST = 2 } xpuc_usm_kind;

/* Kinds of kernel arguments. Each argument travels as one 64-bit slot holding
 * the value's bits: a pointer, an integer, or a float (f32 in the low bytes). */
typedef enum {
    XPUC_ARG_PTR = 0,
    XPUC_ARG_I8 = 1,
    XPUC_ARG_I32 = 2,
    XPUC_ARG_I64 = 3,
    XPUC_ARG_F32 = 4,
    XPUC_ARG_F64 = 5,
    XPUC_ARG_I16 = 6,
} xpuc_arg_kind;

/* What a kernel does with an array it is given, which decides the copy in
 * (xpuc_buffer_acquire's copy_in): it needs none of its bytes (it does not
 * read them, or it only reads its shape), it reads them, or it writes every
 * byte of it before reading any (an array expression's fresh result). */
typedef enum {
    XPUC_COPY_NONE = 0,
    XPUC_COPY_IN = 1,
    XPUC_COPY_OVERWRITTEN = 2,
} xpuc_copy_in;

/* Most kernel arguments one launch takes (the runtime marshals them on the
 * stack). */
#define XPUC_MAX_KERNEL_ARGS 256

/* Most work-items one launch runs: dpctl's submit functions are built with
 * -fsycl-id-queries-fit-in-int, so SYCL refuses a range of more work-items
 * than an int holds (and dpctl drops the reason). The compiler takes every
 * global id to be below it. */
#define XPUC_MAX_WORK_ITEMS INT32_MAX

typedef struct xpuc_queue xpuc_queue;

typedef struct {
    int64_t kernel_launches;
    int64_t kernel_builds;     /* program builds from SPIR-V (cache misses) */
    int64_t kernel_cache_hits; /* launches that found their kernel built */
    int64_t h2d_bytes;
    int64_t d2h_bytes;
    int64_t d2d_bytes; /* copies within device memory (xpuc_device_copy) */
    int64_t usm_allocs;
    int64_t usm_frees;
    int64_t host_parfors; /* parfors the cost model ran on the host */
    int64_t device_waits; /* host waits on a device: a call's start and end, launches, copies */
} xpuc_stats;

/* Queues: wrap a DPCTLSyclQueueRef. The wrapper keeps a copy of it (so the
 * caller's ref may go away), whose earlier work a call waits for; submits to
 * an in-order queue of its own on the same context and device; and caches the
 * context, device and device name. */
int xpuc_queue_wrap(void *dpctl_queue_ref, xpuc_queue **out);
/* A queue on CUDA stream `stream` of device `ordinal` (cuda:ordinal, its
 * primary context): a CUstream, or NULL for the legacy default stream. Its
 * USM of any kind is device memory, its launches take PTX; launches and copies
 * go to the stream, so a call on it runs after the work already queued there
 * (the caller's: CuPy's current stream, the stream a CUDA array names) and
 * waits for no other stream. Copies to and from the host are waited for;
 * launches and copies within device memory are not (a call's kernels queue up
 * back to back, xpuc_call_begin says when they are waited for). */
int xpuc_queue_cuda(int32_t ordinal, void *stream, xpuc_queue **out);
int xpuc_queue_release(xpuc_queue *queue);

/* USM memory on a queue. A free names the size and kind the block was
 * allocated with: freed blocks are kept for reuse by the same request. */
int xpuc_usm_alloc(xpuc_queue *queue, int64_t nbytes, int32_t usm_kind, void **out);
int xpuc_usm_free(xpuc_queue *queue, void *ptr, int64_t nbytes, int32_t usm_kind);
/* Gives memory the runtime did not allocate (a dpctl array's) the page
 * advice its own allocations get on a CPU device; call it before the first
 * write. */
int xpuc_usm_advise(xpuc_queue *queue, void *ptr, int64_t nbytes);
int xpuc_copy_to_device(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes);
int xpuc_copy_to_host(xpuc_queue *queue, void *dst, const void *src, int64_t nbytes);

/* One offloaded call of a jitted function, on the calling thread. call_begin
 * waits for the work already submitted to the wrapped queue. The host code
 * between call_begin and call_end launches on `queue` and keeps device
 * copies of host arrays in a per-call table keyed by host address. Calls nest
 * (a depth count); when the outermost call ends, resident regions that
 * kernels wrote are copied back and buffers are freed, also after an error.
 * A nested call must use the outer call's context and device. A call_begin
 * that fails opens no call: do not pair it with call_end.
 * On a queue whose launches return once queued (CUDA), the call's kernels run
 * in the order launched while the host goes on; the host waits for them
 * before it uses memory they may use: a copy (each waits for the kernels
 * before it), host code's access to device memory in place
 * (xpuc_host_access), and the call's end, which returns after all of them.
 * Device memory the call frees while kernels may still use it is reused only
 * by the call's own later allocations until then. A kernel's failure is
 * reported by the wait that finds it, naming the call's last kernel. */
int xpuc_call_begin(xpuc_queue *queue);
int xpuc_call_end(void);
/* Compiled code brackets itself: its CPython entry calls call_enter before the
 * function and call_end after it, also when the function fails. call_enter
 * inside a call (begun by call_begin) nests in it, on its queue and without
 * waiting again; outside one it is call_begin on the queue that call_queue
 * last named on this thread (NULL: none, and call_enter fails). The queue
 * must stay alive while it is named. */
int xpuc_call_queue(xpuc_queue *queue);
int xpuc_call_enter(void);

/* On a device that can use host system memory (aspect usm_system_allocations,
 * as a CPU device has), kernels use host arrays in place: the calls below then
 * allocate and copy nothing. On by default; off (or XPUC_COPY_HOST_ARRAYS=1 in
 * xpuc's Python) forces the copies every other device needs, to test them. */
int xpuc_use_system_memory(int32_t on);

/* Registers host memory that outlives the call (a NumPy argument's bytes) as
 * resident: it is copied to the device before the first kernel that uses it
 * and stays there; kernels' writes are copied back when host code touches it
 * (xpuc_host_access) or when the call ends. Overlapping regions merge. */
int xpuc_call_register(void *host, int64_t nbytes);

/* Makes the memory of an array that compiled code allocated in the call
 * (Numba's MemInfo `meminfo`; NULL, or memory NRT did not allocate: nothing
 * is done) resident as a registered region is, so that it stays on the device
 * across parfors and host code in between. The call holds a reference to the
 * array until it ends; an array only that reference keeps alive is dead: its
 * device copy is freed with no copy back, at the call's end or when another
 * array is made resident. */
int xpuc_array_resident(void *meminfo);

/* Device address of the array at host address `host` (nbytes long) for the
 * current call, copy_in saying what the kernel does with it (xpuc_copy_in).
 * USM memory of the call's context is used in place. Inside a resident
 * region: the region's device copy (copied in if it is not current, unless
 * the kernel overwrites the whole region). Otherwise a transient buffer, allocated once per call
 * (reallocating if nbytes grew) and copied host->device if copy_in, unless it
 * was copied in since the last launch: the host code acquires a parfor's
 * arrays with no host code in between, so one array passed as several
 * arguments is copied once. */
int xpuc_buffer_acquire(void *host, int64_t nbytes, int32_t copy_in, void **device);
/* After a parfor: a kernel wrote the array if copy_out. A transient buffer is
 * copied device->host now; a resident region is marked stale on the host. */
int xpuc_buffer_release(void *host, int64_t nbytes, int32_t copy_out);
/* Before host code reads (or, if writes, writes) the array at `host`: a
 * resident region a kernel wrote is copied back, and after a host write its
 * device copy is no longer current. */
int xpuc_host_access(void *host, int64_t nbytes, int32_t writes);
/* Host code's read (device->host) or write (host->device, if to_device) of
 * one element of a USM array the host cannot address (usm_type "device"):
 * nbytes copied on the current call's queue, waited for. */
int xpuc_element_copy(void *dst, const void *src, int64_t nbytes, int32_t to_device);
/* Copies nbytes from USM memory of the current call's context to other USM
 * memory of it (device to device), on the call's queue, waited for (on CUDA
 * queued, as a launch is): what host code copies of a device array, with no
 * kernel built for the copy. */
int xpuc_device_copy(void *dst, const void *src, int64_t nbytes);

/* Arrays that compiled code allocates on the current call's queue: USM of
 * `usm_kind`, owned by a Numba MemInfo (Numba's NRT API table, set once with
 * xpuc_set_nrt_api) that frees it when the last reference goes. */
int xpuc_set_nrt_api(const void *api);
int xpuc_usm_array_alloc(int64_t nbytes, int32_t usm_kind, void **meminfo);

/* Builds (once per process per context, device and SPIR-V hash) and launches
 * `kernel_name` from the SPIR-V module on the current call's queue, and waits;
 * on a CUDA queue the module is PTX (loaded once per device and hash, the
 * block the driver's occupancy calculator's, xpuc_cuda_launch), and the
 * launch is queued, not waited for (xpuc_call_begin).
 * global/local are in SPIR-V order (x, y, z): the runtime reverses them for
 * SYCL. local all zero means no work-group size is imposed. */
int xpuc_launch(const void *spirv, int64_t spirv_len, uint64_t spirv_hash,
                const char *kernel_name, const uint64_t *arg_slots,
                const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                const int64_t *local, int32_t ndim);
/* xpuc_launch in a call of its own on `queue` (call_begin, the launch,
 * call_end): an explicit kernel's launch on device memory, from Python in one
 * entry. A launch that fails is reported, its call ended. */
int xpuc_call_launch(xpuc_queue *queue, const void *spirv, int64_t spirv_len,
                     uint64_t spirv_hash, const char *kernel_name, const uint64_t *arg_slots,
                     const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                     const int64_t *local, int32_t ndim);

/* Builds the module as the first xpuc_launch of it on `queue` would (once per
 * process per context, device and hash), launching nothing: a thread can build
 * ahead what a launch will need, and the launch then finds it built, or waits
 * for the build under way. Nothing to do on a CUDA queue. */
int xpuc_build_ahead(xpuc_queue *queue, const void *spirv, int64_t spirv_len,
                     uint64_t spirv_hash);

/* The cost model: whether the parfor `kernel_name` of `trip_count` iterations,
 * each estimated to cost `iteration_cost` ns on the host, runs on the host
 * rather than as a launch on the current call's queue. With
 * XPUC_HOST_PARFOR_MAX=N set (read at each call): when trip_count <= N, and
 * never for N = 0. Otherwise: when trip_count * iteration_cost is below the
 * device's launch cost, measured at the first question about the device
 * (context and device) and kept for the process. A yes is counted
 * (host_parfors) and traced as launches are. */
int xpuc_parfor_on_host(const char *kernel_name, int64_t trip_count, int64_t iteration_cost,
                        int32_t *on_host);

const char *xpuc_last_error(void);
void xpuc_get_stats(xpuc_stats *out);
void xpuc_reset_stats(void);

/* While on, each launch prints its kernel, device and global size to stderr:
 * which kernels ran, where compiled host code chose among them. */
void xpuc_trace_launches(int32_t on);

#ifdef __cplusplus
}
#endif
#endif
