"""``xpuc.group``: work-group collectives in explicit kernels, each giving
every work-item of the group the result over all of them."""

from .frontend.kernel_work_group import reduce_add, reduce_max, reduce_min, reduce_mul

__all__ = ["reduce_add", "reduce_max", "reduce_min", "reduce_mul"]
