/* The CUDA driver, loaded at the first call: libcuda.so.1's entry points,
 * the calling thread's error message, and devices (their primary contexts). */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char last_error[4096]; /* room for a JIT log */

int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *xpuc_cuda_last_error(void) { return last_error; }

/* ---- loading the driver ----------------------------------------------------- */

static driver_api api;
static const driver_api *loaded; /* NULL until loaded, or if that failed */
static char load_error[1024];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The versioned names of the entry points (cuda.h maps cuMemAlloc to
 * cuMemAlloc_v2 and so on), each stored in its field of `api`. */
#define ENTRY(field, symbol) {(void **)&api.field, symbol}
static const struct {
    void **slot;
    const char *symbol;
} entries[] = {
    ENTRY(cuInit, "cuInit"),
    ENTRY(cuGetErrorName, "cuGetErrorName"),
    ENTRY(cuGetErrorString, "cuGetErrorString"),
    ENTRY(cuDeviceGetCount, "cuDeviceGetCount"),
    ENTRY(cuDeviceGet, "cuDeviceGet"),
    ENTRY(cuDeviceGetName, "cuDeviceGetName"),
    ENTRY(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    ENTRY(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    ENTRY(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
    ENTRY(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
    ENTRY(cuStreamSynchronize, "cuStreamSynchronize"),
    ENTRY(cuMemAlloc, "cuMemAlloc_v2"),
    ENTRY(cuMemFree, "cuMemFree_v2"),
    ENTRY(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
    ENTRY(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
    ENTRY(cuMemcpyAsync, "cuMemcpyAsync"),
    ENTRY(cuPointerGetAttribute, "cuPointerGetAttribute"),
    ENTRY(cuModuleLoadDataEx, "cuModuleLoadDataEx"),
    ENTRY(cuModuleGetFunction, "cuModuleGetFunction"),
    ENTRY(cuModuleGetGlobal, "cuModuleGetGlobal_v2"),
    ENTRY(cuOccupancyMaxPotentialBlockSize, "cuOccupancyMaxPotentialBlockSize"),
    ENTRY(cuLaunchKernel, "cuLaunchKernel"),
};

/* XPUC_CUDA_DRIVER: another driver library than the system's libcuda.so.1
 * (the tests name a missing one to see the error). */
#define DRIVER_VARIABLE "XPUC_CUDA_DRIVER"

static void load_driver(void)
{
    const char *path = getenv(DRIVER_VARIABLE);
    if (!path || !*path)
        path = "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_error, sizeof load_error,
                 "xpuc: no CUDA driver: cannot load %s (%s); an NVIDIA GPU needs its driver "
                 "installed",
                 path, dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        *entries[i].slot = dlsym(library, entries[i].symbol);
        if (!*entries[i].slot) {
            snprintf(load_error, sizeof load_error,
                     "xpuc: the CUDA driver %s has no %s: it is older than xpuc needs", path,
                     entries[i].symbol);
            return;
        }
    }
    CUresult result = api.cuInit(0);
    if (result != 0) {
        char text[256];
        snprintf(load_error, sizeof load_error, "xpuc: the CUDA driver failed to start: %s",
                 describe_result(result, text, sizeof text));
        return;
    }
    loaded = &api;
}

const driver_api *driver(void)
{
    pthread_once(&load_once, load_driver);
    if (!loaded)
        fail(XPUC_ERR_DRIVER, "%s", load_error);
    return loaded;
}

const char *describe_result(CUresult result, char *out, size_t size)
{
    const char *name = NULL, *text = NULL;
    if (api.cuGetErrorName)
        api.cuGetErrorName(result, &name);
    if (api.cuGetErrorString)
        api.cuGetErrorString(result, &text);
    snprintf(out, size, "%s: %s", name ? name : "CUDA error",
             text ? text : "no description");
    return out;
}

/* ---- devices ------------------------------------------------------------------ */

#define MAX_DEVICES 64
static xpuc_cuda_device *devices[MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

int xpuc_cuda_device_count(int32_t *out)
{
    const driver_api *cu = driver();
    if (!cu)
        return XPUC_ERR_DRIVER;
    int count = 0;
    CUresult result = cu->cuDeviceGetCount(&count);
    if (result != 0) {
        char text[256];
        return fail(XPUC_ERR_DRIVER, "xpuc: cannot count CUDA devices: %s",
                    describe_result(result, text, sizeof text));
    }
    *out = count;
    return XPUC_OK;
}

static int open_device(int32_t ordinal, xpuc_cuda_device **out)
{
    const driver_api *cu = driver();
    char text[256];
    CUdevice handle;
    CUresult result = cu->cuDeviceGet(&handle, ordinal);
    xpuc_cuda_device *device = calloc(1, sizeof *device);
    if (!device)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory opening cuda:%d", (int)ordinal);
    device->ordinal = ordinal;
    if (result == 0)
        result = cu->cuDeviceGetName(device->name, (int)sizeof device->name, handle);
    int values[5] = {0};
    static const int attributes[5] = {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                      CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT};
    for (int i = 0; i < 5 && result == 0; i++)
        result = cu->cuDeviceGetAttribute(&values[i], attributes[i], handle);
    if (result == 0)
        result = cu->cuDevicePrimaryCtxRetain(&device->context, handle);
    if (result != 0) {
        free(device);
        return fail(XPUC_ERR_DRIVER, "xpuc: cannot open cuda:%d: %s", (int)ordinal,
                    describe_result(result, text, sizeof text));
    }
    device->major = values[0];
    device->minor = values[1];
    device->max_grid[0] = INT32_MAX; /* 2^31 - 1 blocks in x since compute capability 3.0 */
    device->max_grid[1] = values[2];
    device->max_grid[2] = values[3];
    device->multiprocessors = values[4];
    *out = device;
    return XPUC_OK;
}

int xpuc_cuda_device_open(int32_t ordinal, xpuc_cuda_device **out)
{
    int32_t count;
    int status = xpuc_cuda_device_count(&count);
    if (status != XPUC_OK)
        return status;
    if (ordinal < 0 || ordinal >= count || ordinal >= MAX_DEVICES)
        return fail(XPUC_ERR_INVALID, "xpuc: no device cuda:%d (this machine has %d CUDA "
                                      "device%s)",
                    (int)ordinal, (int)count, count == 1 ? "" : "s");
    pthread_mutex_lock(&devices_lock);
    if (!devices[ordinal])
        status = open_device(ordinal, &devices[ordinal]);
    *out = devices[ordinal];
    pthread_mutex_unlock(&devices_lock);
    return status;
}

int xpuc_cuda_device_describe(xpuc_cuda_device *device, char *name, int64_t name_size,
                              int32_t *major, int32_t *minor)
{
    if (!device || !name || name_size <= 0 || !major || !minor)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_device_describe: bad arguments");
    snprintf(name, (size_t)name_size, "%s", device->name);
    *major = device->major;
    *minor = device->minor;
    return XPUC_OK;
}

int xpuc_cuda_device_multiprocessors(xpuc_cuda_device *device, int32_t *out)
{
    if (!device || !out)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_device_multiprocessors: bad arguments");
    *out = device->multiprocessors;
    return XPUC_OK;
}

int enter(xpuc_cuda_device *device, const char *what)
{
    const driver_api *cu = driver();
    if (!cu)
        return XPUC_ERR_DRIVER;
    if (!device)
        return fail(XPUC_ERR_INVALID, "xpuc: %s: no device", what);
    CUresult result = cu->cuCtxPushCurrent(device->context);
    if (result != 0) {
        char text[256];
        return fail(XPUC_ERR_DRIVER, "xpuc: %s on cuda:%d (%s): %s", what, (int)device->ordinal,
                    device->name, describe_result(result, text, sizeof text));
    }
    return XPUC_OK;
}

void leave(void)
{
    CUcontext previous;
    api.cuCtxPopCurrent(&previous);
}
