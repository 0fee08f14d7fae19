/* Programs: SPIR-V modules built for a (context, device) target, checked
 * before the build and explained after a failed one (the OpenCL build log),
 * and the process-wide cache of the modules and their kernels. */
#include "sycl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- kernel cache --------------------------------------------------------- */

/* Process-wide and never freed: kernels live as long as the process, and
 * tearing SYCL objects down from an atexit handler races the SYCL runtime's
 * own shutdown. Modules are in a hash table on (SPIR-V hash, target): a
 * long-running process builds hundreds, and each launch looks one up; the
 * kernels of a module are a list (a module has one or two). */
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
    int64_t launch_cost_ns; /* 0 until measured */
} known_target;

static known_target *targets;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Once per queue wrapped: the SYCL comparisons happen here, not per launch. */
int target_number(DPCTLSyclContextRef context, DPCTLSyclDeviceRef device, int32_t *out,
                  int64_t **launch_cost_ns)
{
    pthread_mutex_lock(&cache_lock);
    known_target *t = targets;
    while (t && !(DPCTLContext_AreEq(t->context, context) && DPCTLDevice_AreEq(t->device, device)))
        t = t->next;
    if (!t && (t = malloc(sizeof *t))) {
        t->context = DPCTLContext_Copy(context);
        t->device = DPCTLDevice_Copy(device);
        t->number = targets ? targets->number + 1 : 0;
        t->launch_cost_ns = 0;
        t->next = targets;
        targets = t;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!t)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory wrapping a queue");
    *out = t->number;
    *launch_cost_ns = &t->launch_cost_ns;
    return XPUC_OK;
}

DPCTLSyclContextRef target_context(int32_t target)
{
    pthread_mutex_lock(&cache_lock);
    known_target *t = targets;
    while (t && t->number != target)
        t = t->next;
    pthread_mutex_unlock(&cache_lock);
    return t ? t->context : NULL;
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
                             const char *options, char *log, size_t size)
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
    if (program && cl.BuildProgram(program, 1, &device, options, NULL, NULL) != 0 &&
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

/* The build options of every module: float32 division and square root
 * correctly rounded, as NumPy's are. OpenCL allows them 2.5 and 3 ulp by
 * default, and Intel's GPU compiler takes that (a reciprocal and a multiply,
 * seen in its assembly for dg2); its CPU compiler rounds them correctly
 * either way. Each backend spells the option its own way. */
static const char *build_options(xpuc_queue *q)
{
    switch (DPCTLQueue_GetBackend(q->ref)) {
    case DPCTL_OPENCL:
        return "-cl-fp32-correctly-rounded-divide-sqrt";
    case DPCTL_LEVEL_ZERO:
        return "-ze-fp32-correctly-rounded-divide-sqrt";
    default:
        return "";
    }
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
    const char *options = build_options(q);
    m->bundle =
        DPCTLKernelBundle_CreateFromSpirv(q->context, q->device, spirv, (size_t)length, options);
    if (!m->bundle) {
        free(m);
        char log[2048];
        if (DPCTLQueue_GetBackend(q->ref) == DPCTL_OPENCL)
            opencl_build_log(q->device_name, spirv, (size_t)length, options, log, sizeof log);
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

int build_module_ahead(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash)
{
    /* Under the cache's lock, as a launch builds: a launch of the module that
     * comes meanwhile waits for this build rather than making its own. */
    pthread_mutex_lock(&cache_lock);
    cached_module *m = find_module(q->target, hash, length);
    int status = m ? XPUC_OK : build_module(q, spirv, length, hash, "(built ahead)", &m);
    pthread_mutex_unlock(&cache_lock);
    return status;
}

int get_kernel(xpuc_queue *q, const void *spirv, int64_t length, uint64_t hash,
               const char *kernel_name, cached_kernel **out)
{
    /* A kernel built before is found holding the GIL, without waiting for
     * the lock (another thread may be building); anything else goes the way
     * that may build, which takes long and takes no Python: without the GIL. */
    cached_kernel *kernel = NULL;
    if (pthread_mutex_trylock(&cache_lock) == 0) {
        cached_module *m = find_module(q->target, hash, length);
        kernel = m ? find_kernel(m, kernel_name) : NULL;
        pthread_mutex_unlock(&cache_lock);
    }
    if (kernel) {
        COUNT(kernel_cache_hits, 1);
        *out = kernel;
        return XPUC_OK;
    }
    void *gil = gil_release();
    pthread_mutex_lock(&cache_lock);
    int status = lookup_kernel(q, spirv, length, hash, kernel_name, out);
    pthread_mutex_unlock(&cache_lock);
    gil_restore(gil);
    return status;
}
