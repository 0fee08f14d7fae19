"""How Numba IR nodes become MLIR ops: scalar types, an SSA text builder, and
the table of emit rules (one small function per operator or callee), split by
the dialect family the rule emits into."""

from . import arith, math  # noqa: F401  (importing registers their rules)
from .builder import Builder, Value
from .complex import Complex, lookup_complex_rule
from .registry import lookup_rule
from .types import BOOL, F32, F64, I8, I16, I32, I64, INDEX, U8, U16, U32, U64, ScalarType

__all__ = [
    "BOOL", "F32", "F64", "I8", "I16", "I32", "I64", "INDEX", "U8", "U16", "U32", "U64",
    "Builder", "Complex", "ScalarType", "Value", "lookup_complex_rule", "lookup_rule",
]
