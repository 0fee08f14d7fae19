/* What both runtime libraries (libxpuc_runtime.so, libxpuc_cuda.so) compile
 * in from one source, runtime/format_sizes.c, each its own hidden copy. */
#ifndef XPUC_FORMAT_SIZES_H
#define XPUC_FORMAT_SIZES_H

#include <stddef.h>
#include <stdint.h>

/* "(x, y, z)" of the first ndim sizes, for messages; returns out. */
__attribute__((visibility("hidden"))) const char *format_sizes(char *out, size_t size,
                                                               const int64_t *sizes,
                                                               int32_t ndim);

#endif
