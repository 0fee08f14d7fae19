/* PTX modules loaded on a device (the driver compiles them for it), and the
 * process-wide cache of the modules and their kernels, on (device, PTX hash). */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never freed: kernels live as long as the process. A module has one or two
 * kernels (a list); modules are a hash table, as a long-running process
 * loads hundreds and each launch looks one up. */
typedef struct cached_module {
    struct cached_module *next;
    int32_t ordinal;
    uint64_t hash;
    int64_t length;
    CUmodule module;
    cached_kernel *kernels;
} cached_module;

#define MODULE_BUCKETS 256
static cached_module *modules[MODULE_BUCKETS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Loads the PTX (NUL-terminated for the driver) with the JIT's error log. */
static int load_module(xpuc_cuda_device *device, const void *ptx, int64_t length,
                       CUmodule *out)
{
    char *image = malloc((size_t)length + 1);
    if (!image)
        return fail(XPUC_ERR_ALLOC, "xpuc: out of host memory loading a PTX module");
    memcpy(image, ptx, (size_t)length);
    image[length] = '\0';
    char log[2048] = "";
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof log};
    CUresult result = driver()->cuModuleLoadDataEx(out, image, 2, options, values);
    free(image);
    if (result != 0) {
        char text[256];
        return fail(XPUC_ERR_BUILD, "xpuc: the PTX module did not load on cuda:%d (%s): %s%s%s",
                    (int)device->ordinal, device->name, describe_result(result, text, sizeof text),
                    *log ? "\n" : "", log);
    }
    return XPUC_OK;
}

/* Whether the module defines the global `kernel_name` + `suffix`. */
static bool has_global(CUmodule module, const char *kernel_name, const char *suffix)
{
    char name[512];
    if (snprintf(name, sizeof name, "%s%s", kernel_name, suffix) >= (int)sizeof name)
        return false;
    CUdeviceptr address;
    size_t bytes;
    return driver()->cuModuleGetGlobal(&address, &bytes, module, name) == 0;
}

int get_kernel(xpuc_cuda_device *device, const void *ptx, int64_t length, uint64_t hash,
               const char *kernel_name, cached_kernel **out)
{
    int status = XPUC_OK;
    pthread_mutex_lock(&cache_lock);
    cached_module **bucket = &modules[hash % MODULE_BUCKETS], *module = *bucket;
    while (module && !(module->ordinal == device->ordinal && module->hash == hash &&
                       module->length == length))
        module = module->next;
    if (!module) {
        CUmodule loaded;
        status = load_module(device, ptx, length, &loaded);
        if (status == XPUC_OK && !(module = calloc(1, sizeof *module)))
            status = fail(XPUC_ERR_ALLOC, "xpuc: out of host memory loading a PTX module");
        if (status == XPUC_OK) {
            *module = (cached_module){.next = *bucket, .ordinal = device->ordinal,
                                      .hash = hash, .length = length, .module = loaded};
            *bucket = module;
        }
    }
    cached_kernel *kernel = module ? module->kernels : NULL;
    while (kernel && strcmp(kernel->name, kernel_name) != 0)
        kernel = kernel->next;
    if (status == XPUC_OK && !kernel) {
        CUfunction function;
        CUresult result = driver()->cuModuleGetFunction(&function, module->module, kernel_name);
        char text[256];
        if (result != 0)
            status = fail(XPUC_ERR_BUILD, "xpuc: kernel '%s' is not in its PTX module on "
                                          "cuda:%d (%s): %s",
                          kernel_name, (int)device->ordinal, device->name,
                          describe_result(result, text, sizeof text));
        else if (!(kernel = calloc(1, sizeof *kernel + strlen(kernel_name) + 1)))
            status = fail(XPUC_ERR_ALLOC, "xpuc: out of host memory loading a kernel");
        else {
            kernel->function = function;
            strcpy(kernel->name, kernel_name);
            kernel->x_contiguous = has_global(module->module, kernel_name,
                                              XPUC_CUDA_X_CONTIGUOUS_SUFFIX);
            kernel->next = module->kernels;
            module->kernels = kernel;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    *out = kernel;
    return status;
}
