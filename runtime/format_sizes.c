/* Launch sizes as messages write them (runtime/format_sizes.h). */
#include "format_sizes.h"

#include <stdio.h>

const char *format_sizes(char *out, size_t size, const int64_t *sizes, int32_t ndim)
{
    int n = snprintf(out, size, "(");
    for (int32_t i = 0; i < ndim && n > 0 && (size_t)n < size; i++)
        n += snprintf(out + n, size - (size_t)n, i ? ", %lld" : "%lld",
                      sizes ? (long long)sizes[i] : 0LL);
    if (n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, ")");
    return out;
}
