# A syntax error in the compiled file is reported at its line.
# RUN: echo "def broken(:" > %t.py
# RUN: not %xpuc compile %t.py --emit linalg 2>&1 | filecheck %s
# CHECK: error-syntax.py.tmp.py:1: SyntaxError:
# CHECK-NOT: Traceback
