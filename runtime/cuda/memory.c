/* Device memory and copies, on a device's primary context. Copies from and to
 * pageable host memory return once done (the driver's synchronous copies). */
#include "internal.h"

#include <stdbool.h>

/* Runs `call` (a CUresult expression) in device's context; on failure, the
 * message names what was done, the device and the driver's reason. */
#define IN_CONTEXT(device, status, what, call)                                              \
    do {                                                                                    \
        int entered = enter((device), (what));                                              \
        if (entered != XPUC_OK)                                                             \
            return entered;                                                                 \
        CUresult result = (call);                                                           \
        leave();                                                                            \
        if (result != 0) {                                                                  \
            char text[256];                                                                 \
            return fail((status), "xpuc: %s on cuda:%d (%s) failed: %s", (what),            \
                        (int)(device)->ordinal, (device)->name,                             \
                        describe_result(result, text, sizeof text));                        \
        }                                                                                   \
    } while (0)

int xpuc_cuda_alloc(xpuc_cuda_device *device, int64_t nbytes, void **out)
{
    if (nbytes < 0 || !out)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_alloc: bad arguments");
    CUdeviceptr ptr = 0;
    /* a 0-byte request gets a 1-byte block: a valid, distinct address */
    IN_CONTEXT(device, XPUC_ERR_ALLOC, "allocating device memory",
               driver()->cuMemAlloc(&ptr, nbytes ? (size_t)nbytes : 1));
    *out = (void *)(uintptr_t)ptr;
    return XPUC_OK;
}

int xpuc_cuda_free(xpuc_cuda_device *device, void *ptr)
{
    if (!ptr)
        return XPUC_OK;
    IN_CONTEXT(device, XPUC_ERR_INVALID, "freeing device memory",
               driver()->cuMemFree((CUdeviceptr)(uintptr_t)ptr));
    return XPUC_OK;
}

int xpuc_cuda_copy_to_device(xpuc_cuda_device *device, void *dst, const void *src,
                             int64_t nbytes)
{
    if (nbytes < 0 || (nbytes && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_copy_to_device: bad arguments");
    if (nbytes)
        IN_CONTEXT(device, XPUC_ERR_COPY, "copying host->device",
                   driver()->cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, (size_t)nbytes));
    return XPUC_OK;
}

int xpuc_cuda_copy_to_host(xpuc_cuda_device *device, void *dst, const void *src,
                           int64_t nbytes)
{
    if (nbytes < 0 || (nbytes && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_copy_to_host: bad arguments");
    if (nbytes)
        IN_CONTEXT(device, XPUC_ERR_COPY, "copying device->host",
                   driver()->cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, (size_t)nbytes));
    return XPUC_OK;
}

/* Queued on the call's stream, after the kernels it launched there, and
 * waited for if `wait`: a device-to-device cuMemcpy would be ordered only on
 * the legacy default stream, and return before it is done. */
static CUresult copy_on_stream(CUstream stream, void *dst, const void *src, int64_t nbytes,
                               bool wait)
{
    CUresult result = driver()->cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                              (CUdeviceptr)(uintptr_t)src, (size_t)nbytes,
                                              stream);
    return result || !wait ? result : driver()->cuStreamSynchronize(stream);
}

int xpuc_cuda_copy(xpuc_cuda_device *device, void *stream, void *dst, const void *src,
                   int64_t nbytes, int32_t wait)
{
    if (nbytes < 0 || (nbytes && (!dst || !src)))
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_copy: bad arguments");
    if (nbytes)
        IN_CONTEXT(device, XPUC_ERR_COPY, "copying",
                   copy_on_stream((CUstream)stream, dst, src, nbytes, wait != 0));
    return XPUC_OK;
}

int xpuc_cuda_pointer_device(const void *ptr, int32_t *ordinal)
{
    if (!ordinal)
        return fail(XPUC_ERR_INVALID, "xpuc: xpuc_cuda_pointer_device: bad arguments");
    const driver_api *cu = driver();
    if (!cu)
        return XPUC_ERR_DRIVER;
    /* The driver refuses addresses it did not allocate or register (host
     * memory): those are no device's. */
    unsigned memory_type = 0;
    int device = -1;
    CUdeviceptr address = (CUdeviceptr)(uintptr_t)ptr;
    bool on_device =
        ptr &&
        cu->cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) == 0 &&
        memory_type == CU_MEMORYTYPE_DEVICE &&
        cu->cuPointerGetAttribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address) == 0;
    *ordinal = on_device ? device : -1;
    return XPUC_OK;
}

int xpuc_cuda_synchronize(xpuc_cuda_device *device, void *stream)
{
    IN_CONTEXT(device, XPUC_ERR_LAUNCH, "waiting for the stream",
               driver()->cuStreamSynchronize((CUstream)stream));
    return XPUC_OK;
}
