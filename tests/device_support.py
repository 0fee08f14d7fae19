"""What the end-to-end tests share: the device they offload to, and a call
under its device context that fails if nothing ran there (so that a CPU path
cannot pass a test)."""

import xpuc

DEVICE = "opencl:cpu"


def offload(fn, *args):
    """``fn(*args)`` under the device context, with the stats reset before it."""
    xpuc.reset_stats()
    with xpuc.device_context(DEVICE):
        result = fn(*args)
    assert xpuc.stats()["kernel_launches"] > 0, "nothing ran on the device"
    return result
