# An exception the file raises while it is loaded is reported at the line
# that raised it, in that file.
# RUN: not %xpuc compile %s 2>&1 | filecheck %s

# CHECK: error-import.py:[[# @LINE + 1]]: ModuleNotFoundError: No module named 'no_such_module'
import no_such_module  # noqa: F401

# CHECK-NOT: Traceback
