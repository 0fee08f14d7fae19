"""Threads: xpuc's own copies never hang, whatever the threads around them do.

dpctl's NumPy-to-USM copy waits on its queue holding the GIL while dpctl's
host tasks want the GIL; four threads copying at once hung about one process
in eight (issue 23). The hang strikes while a process first copies, so the
stress test starts many short processes, each with four threads copying at
once, and fails on any that does not finish in time (printing its threads'
stacks)."""

import os
import subprocess
import sys

from device_support import DEVICE

# How many processes: enough to catch a hang of one process in ten with 95%
# confidence (0.9 ** 30 < 0.05). XPUC_STRESS_RUNS changes it, to measure.
RUNS = int(os.environ.get("XPUC_STRESS_RUNS", "30"))
AT_ONCE = 2  # processes running together (each mostly waits on its threads)
DEADLINE = 30  # seconds for one process, imports included; a healthy one takes 3

# the end of each script: its workers in threads started at once, then the verdict
RUN_THREADS = '''
threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"wrong data in threads {{wrong}}" if wrong else "ok")
'''

COPIES = '''
import faulthandler, sys, threading
import numpy as np
import dpctl
import xpuc
from xpuc import runtime

faulthandler.dump_traceback_later({deadline}, exit=True)  # a hang: every stack, then exit 1
THREADS, COPIES, N = 4, 25, 4096
start = threading.Barrier(THREADS)
wrong = []


def worker(index):
    queue = dpctl.SyclQueue({device!r})
    source = np.arange(index * N, (index + 1) * N, dtype=np.float64)
    back = np.empty_like(source)
    start.wait()
    for _ in range(COPIES):
        copy = xpuc.asarray(source, queue=queue)
        # read back through the runtime, which lets the GIL go while it waits
        runtime.copy_to_host(runtime.queue_handle(queue), back.ctypes.data,
                             copy.usm_data._pointer, back.nbytes)
        if not np.array_equal(back, source):
            wrong.append(index)
            return

''' + RUN_THREADS


CALLS = '''
import faulthandler, os, threading
os.environ["XPUC_COPY_HOST_ARRAYS"] = "1"  # copies in and back, as a GPU needs
import numba
import numpy as np
import dpctl
import xpuc

faulthandler.dump_traceback_later({deadline}, exit=True)
THREADS, CALLS, N = 4, 20, 4096


@xpuc.jit
def step(a, out):
    for i in numba.prange(a.shape[0]):
        out[i] = 2.0 * a[i] + 1.0


step(np.zeros(1), np.zeros(1))  # compiled for the CPU before the threads start
start = threading.Barrier(THREADS)
wrong = []


def worker(index):
    queue = dpctl.SyclQueue({device!r})
    a = np.arange(index * N, (index + 1) * N, dtype=np.float64)
    start.wait()
    for _ in range(CALLS):
        out = np.zeros_like(a)
        with xpuc.device_context(queue):
            step(a, out)
            step(xpuc.asarray(a), xpuc.asarray(out))  # USM in: no copies, rule 2
        if not np.array_equal(out, 2.0 * a + 1.0):
            wrong.append(index)
            return

''' + RUN_THREADS


def run_processes(script: str, runs: int) -> list[str]:
    """Runs ``script`` in ``runs`` processes, ``AT_ONCE`` at a time; returns
    what went wrong in each that failed (its output: stacks of a hang)."""
    failures = []
    for first in range(0, runs, AT_ONCE):
        batch = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
                 for _ in range(min(AT_ONCE, runs - first))]
        for process in batch:
            try:
                output, _ = process.communicate(timeout=DEADLINE + 30)
            except subprocess.TimeoutExpired:  # faulthandler did not get to run
                process.kill()
                output = process.communicate()[0] + "\n(killed: no output in time)"
            if process.returncode != 0 or output.strip().splitlines()[-1:] != ["ok"]:
                failures.append(output)
    return failures


def test_asarray_from_four_threads_at_once_never_hangs():
    failures = run_processes(COPIES.format(deadline=DEADLINE, device=DEVICE), RUNS)
    assert not failures, (f"{len(failures)} of {RUNS} processes failed or hung; the first:\n"
                          + failures[0][-6000:])


def test_offloaded_calls_copying_from_four_threads_never_hang():
    """Residency copies and results read back go through the runtime too."""
    failures = run_processes(CALLS.format(deadline=DEADLINE, device=DEVICE), RUNS // 5)
    assert not failures, (f"{len(failures)} of {RUNS // 5} processes failed or hung; the "
                          "first:\n" + failures[0][-6000:])
