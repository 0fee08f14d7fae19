"""Price a million European options with Black–Scholes on the default SYCL device.

The function is ordinary Numba code: a ``prange`` loop of scalar math. Inside
``xpuc.device_context`` its loop runs as a SPIR-V kernel that xpuc compiled;
outside, it is plain Numba on the CPU. Both answers are compared.
"""

import math
import time

import numba
import numpy as np

import xpuc


@xpuc.jit
def black_scholes(price, strike, t, rate, vol, call, put):
    for i in numba.prange(price.shape[0]):
        sqrt_t = math.sqrt(t[i])
        d1 = (math.log(price[i] / strike[i]) + (rate + 0.5 * vol * vol) * t[i]) / (vol * sqrt_t)
        d2 = d1 - vol * sqrt_t
        cdf_d1 = 0.5 + 0.5 * math.erf(d1 / math.sqrt(2.0))
        cdf_d2 = 0.5 + 0.5 * math.erf(d2 / math.sqrt(2.0))
        discounted = strike[i] * math.exp(-rate * t[i])
        call[i] = price[i] * cdf_d1 - discounted * cdf_d2
        put[i] = discounted * (1.0 - cdf_d2) - price[i] * (1.0 - cdf_d1)


def main() -> None:
    n = 1_000_000
    rng = np.random.default_rng(42)
    price = rng.uniform(10.0, 50.0, n)
    strike = rng.uniform(10.0, 50.0, n)
    t = rng.uniform(0.25, 2.0, n)
    call, put = np.empty(n), np.empty(n)

    with xpuc.device_context("opencl:cpu") as queue:
        start = time.perf_counter()
        black_scholes(price, strike, t, 0.02, 0.30, call, put)
        first = time.perf_counter() - start
        start = time.perf_counter()
        black_scholes(price, strike, t, 0.02, 0.30, call, put)
        steady = time.perf_counter() - start
    stats = xpuc.stats()

    cpu_call, cpu_put = np.empty(n), np.empty(n)
    black_scholes(price, strike, t, 0.02, 0.30, cpu_call, cpu_put)  # Numba on the CPU

    print(f"Black–Scholes for {n:,} options on {queue.sycl_device.name} "
          f"({queue.sycl_device.filter_string})")
    for i in range(3):
        print(f"  S={price[i]:6.2f} K={strike[i]:6.2f} T={t[i]:4.2f}  "
              f"call={call[i]:8.4f}  put={put[i]:8.4f}")
    print(f"  mean call {call.mean():.6f}, mean put {put.mean():.6f}")
    print(f"  max |device - CPU| = {max(abs(call - cpu_call).max(), abs(put - cpu_put).max()):.2e}")
    print(f"  first call {first * 1e3:.0f} ms (compiles), next call {steady * 1e3:.1f} ms; "
          f"{stats['kernel_launches']} kernel launches, "
          f"{stats['kernels_compiled']} kernel compiled")


if __name__ == "__main__":
    main()
