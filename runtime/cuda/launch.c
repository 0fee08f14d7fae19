/* Launches: a kernel of a PTX module queued on a stream of a device. */
#include "internal.h"

#include <stdbool.h>
#include <stdio.h>

/* A kernel parameter is read from its 64-bit slot's address, so an
 * i8/i16/i32/f32 must sit in the slot's low-address bytes. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xpuc's CUDA runtime assumes a little-endian host"
#endif

static int launch_failed(int status, xpuc_cuda_device *device, const char *name,
                         const char *problem, const int64_t *global, const int64_t *local,
                         int32_t ndim)
{
    char gtext[80], ltext[80];
    return fail(status,
                "xpuc: launch of kernel '%s' failed on device cuda:%d (%s): %s (global size "
                "%s, local size %s)",
                name, (int)device->ordinal, device->name, problem,
                format_sizes(gtext, sizeof gtext, global, ndim),
                format_sizes(ltext, sizeof ltext, local, ndim));
}

/* The largest block the runtime picks: the occupancy calculator's size for
 * the most threads per SM is often 1024 (two blocks fill an SM), and a grid
 * of such blocks leaves SMs idle while the last blocks drain: on an H100 a
 * float64 triad's 1024-thread blocks reached 63% achieved occupancy against
 * 84% for CuPy's 128-thread blocks, and ran 3% slower (ncu). Blocks of at
 * most 256 threads, as occupant as the calculator allows, keep the SMs full. */
#define MAX_RUNTIME_BLOCK 256
#define WARP 32

/* The block size for a range of `items` work-items: the kernel's, unless the
 * range is too small to give every SM a block of that size; then smaller
 * blocks, down to a warp, so that it does. A parfor whose iterations are
 * each a long loop (pairwise distances over 4096 points, a thread per row)
 * ran 16 blocks of 256 threads on 16 of an H100's 132 SMs. */
static int spread_block(int block_size, int64_t items, int32_t multiprocessors)
{
    if (multiprocessors < 1)
        return block_size;
    int64_t per_multiprocessor = (items + multiprocessors - 1) / multiprocessors;
    int64_t spread = (per_multiprocessor + WARP - 1) / WARP * WARP;
    if (spread < WARP)
        spread = WARP;
    return spread < block_size ? (int)spread : block_size;
}

/* The width along x of a multi-dimensional launch's block, the rest of it
 * along y (then z); x is the innermost index.
 * - A kernel whose accesses move by one element as x does (a stencil's
 *   grid[i, j + 1]; passes/contiguous_x.py marks it) gets a whole warp: a
 *   warp's load is then 32 neighbouring elements, where 4 runs of 8 would
 *   each begin a sector (H100, Jacobi 2048^2, 50 steps: float32 0.946 ms
 *   against 1.117 for 8 wide).
 * - Any other gets a quarter of a warp: its 8 work-items of a row still
 *   touch neighbouring memory (whole 32-byte sectors of float32 stores), and
 *   a warp spans 4 rows. Where each work-item reads rows of both indices
 *   (pairwise distances, out[i, j] from points[i, :] and points[j, :]), a
 *   warp's load touches 8 + 4 rows, not the 32 + 1 of a warp along x, and
 *   L1's wavefronts per load are what bound that kernel (ncu on an H100,
 *   4096 x 16 float32 points: 98% L1 throughput in blocks of 256 x 1 and of
 *   32 x 8, 716 us; 280 us in blocks of 8 x 32). */
#define TILE_X (WARP / 4)

/* The block the runtime picks for a range, of at most `block_size` threads.
 * A 1-D range fills it along x. A larger range takes at most `tile_x` along x
 * (fewer when the range is narrower), fills y, then z, and widens x by
 * doubling while the block has room (a range of one or a few rows). */
static void pick_block(int block_size, int tile_x, const int64_t *global, int32_t ndim,
                       int64_t *block)
{
    int64_t width = ndim == 1 || block_size < tile_x ? block_size : tile_x;
    block[0] = global[0] < width ? global[0] : width;
    int64_t others = 1;
    for (int32_t i = 1; i < ndim; i++) {
        int64_t room = block_size / (block[0] * others);
        block[i] = global[i] < room ? global[i] : room;
        others *= block[i];
    }
    while (block[0] < global[0] && 2 * block[0] * others <= block_size)
        block[0] *= 2;
    if (block[0] > global[0])
        block[0] = global[0];
}

int xpuc_cuda_launch(xpuc_cuda_device *device, void *stream, const void *ptx, int64_t ptx_len,
                     uint64_t ptx_hash, const char *kernel_name, const uint64_t *arg_slots,
                     const int32_t *arg_kinds, int32_t nargs, const int64_t *global,
                     const int64_t *local, int32_t ndim)
{
    const char *name = kernel_name ? kernel_name : "?";
    if (!device)
        return fail(XPUC_ERR_INVALID, "xpuc: launch of kernel '%s': no device", name);
    if (!ptx || ptx_len <= 0 || !kernel_name || ndim < 1 || ndim > 3 || !global || nargs < 0 ||
        nargs > XPUC_MAX_KERNEL_ARGS || (nargs > 0 && (!arg_slots || !arg_kinds)))
        return fail(XPUC_ERR_INVALID,
                    "xpuc: launch of kernel '%s' failed on device cuda:%d (%s): bad arguments "
                    "(%d kernel arguments, at most %d; %d dimensions)",
                    name, (int)device->ordinal, device->name, (int)nargs, XPUC_MAX_KERNEL_ARGS,
                    (int)ndim);
    bool has_local = false, all_local = true, empty = false;
    for (int32_t i = 0; i < ndim; i++) {
        int64_t g = global[i], l = local ? local[i] : 0;
        if (g < 0 || l < 0)
            return launch_failed(XPUC_ERR_INVALID, device, name, "negative size", global, local,
                                 ndim);
        if (l > 0 && g % l != 0)
            return launch_failed(XPUC_ERR_INVALID, device, name,
                                 "global size not a multiple of local size", global, local,
                                 ndim);
        has_local |= l > 0;
        all_local &= l > 0;
        empty |= g == 0;
    }
    if (has_local && !all_local)
        return launch_failed(XPUC_ERR_INVALID, device, name,
                             "local size must be all zero or all positive", global, local, ndim);
    if (empty) /* no work-items: nothing runs, so nothing is loaded or launched */
        return XPUC_OK;
    uint64_t slots[XPUC_MAX_KERNEL_ARGS];
    void *params[XPUC_MAX_KERNEL_ARGS];
    for (int32_t i = 0; i < nargs; i++) {
        if (arg_kinds[i] < XPUC_ARG_PTR || arg_kinds[i] > XPUC_ARG_I16)
            return fail(XPUC_ERR_INVALID,
                        "xpuc: launch of kernel '%s' failed on device cuda:%d (%s): argument "
                        "%d has unknown kind %d",
                        name, (int)device->ordinal, device->name, (int)i, (int)arg_kinds[i]);
        slots[i] = arg_slots[i]; /* the driver reads each parameter from its address */
        params[i] = &slots[i];
    }

    int status = enter(device, "launching a kernel");
    if (status != XPUC_OK)
        return status;
    cached_kernel *kernel;
    status = get_kernel(device, ptx, ptx_len, ptx_hash, kernel_name, &kernel);
    const driver_api *cu = driver();
    CUresult result = 0;
    const char *problem = NULL;
    if (status == XPUC_OK && !has_local && !kernel->block_size) {
        int min_grid, block_size;
        result = cu->cuOccupancyMaxPotentialBlockSize(&min_grid, &block_size, kernel->function,
                                                      NULL, 0, MAX_RUNTIME_BLOCK);
        if (result == 0)
            kernel->block_size = block_size; /* a race writes the same value */
        else
            problem = "the occupancy calculator failed";
    }
    int64_t block[3] = {1, 1, 1}, grid[3] = {1, 1, 1};
    if (status == XPUC_OK && !problem) {
        if (has_local) {
            for (int32_t i = 0; i < ndim; i++)
                block[i] = local[i];
        } else {
            int64_t items = 1;
            for (int32_t i = 0; i < ndim; i++)
                items *= global[i];
            pick_block(spread_block(kernel->block_size, items, device->multiprocessors),
                       kernel->x_contiguous ? WARP : TILE_X, global, ndim, block);
        }
        for (int32_t i = 0; i < ndim; i++) {
            grid[i] = (global[i] + block[i] - 1) / block[i];
            if (grid[i] > device->max_grid[i])
                problem = "more blocks than the device launches in a dimension";
        }
    }
    if (status == XPUC_OK && !problem) {
        result = cu->cuLaunchKernel(kernel->function, (unsigned)grid[0], (unsigned)grid[1],
                                    (unsigned)grid[2], (unsigned)block[0], (unsigned)block[1],
                                    (unsigned)block[2], 0, (CUstream)stream, nargs ? params : NULL,
                                    NULL);
        problem = result ? "the driver refused the launch" : NULL;
    }
    leave();
    if (status != XPUC_OK)
        return status;
    if (problem) {
        char text[512], reason[256];
        if (result)
            snprintf(text, sizeof text, "%s: %s", problem,
                     describe_result(result, reason, sizeof reason));
        else
            snprintf(text, sizeof text, "%s", problem);
        return launch_failed(XPUC_ERR_LAUNCH, device, name, text, global, local, ndim);
    }
    return XPUC_OK;
}
