"""Conformance of xpuc against Numba's own parfor tests (numba.tests.test_parfors).

Each Numba test runs in its own worker process (``worker.py``) with the
parallel side of the test routed through ``xpuc.jit`` under a device context
(``routing.py``); ``run.py`` schedules the workers, classifies their outcomes
(``outcome.py``) and writes the report (``report.py``)."""
