"""Device arrays as globals of compiled code, refused by name.

Numba compiles a global (or closure) array as a constant: it copies the
array's elements into the compiled code. A device array's memory (USM, a CUDA
array) is not the host's to copy, and a constant would not follow the array's
later changes, so a function that refers to one is refused at its line,
telling the user to pass the array as an argument (NumPy arrays stay
Numba's constants).
"""

from __future__ import annotations

from numba.core import ir
from numba.core.compiler_machinery import FunctionPass, register_pass

from ..errors import UnsupportedError

_DEVICE_ARRAY_PROTOCOLS = ("__sycl_usm_array_interface__", "__cuda_array_interface__")


def _is_device_array(value: object) -> bool:
    return any(hasattr(type(value), protocol) for protocol in _DEVICE_ARRAY_PROTOCOLS)


@register_pass(mutates_CFG=False, analysis_only=True)
class RefuseDeviceGlobals(FunctionPass):
    """Refuse the first global or closure variable that holds a device array."""

    _name = "xpuc_refuse_device_globals"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        for block in state.func_ir.blocks.values():
            for assign in block.find_insts(ir.Assign):
                value = assign.value
                if isinstance(value, (ir.Global, ir.FreeVar)) and _is_device_array(value.value):
                    kind = "global" if isinstance(value, ir.Global) else "closure variable"
                    raise UnsupportedError(
                        f"{value.loc.filename}:{value.loc.line}: the {kind} '{value.name}' "
                        f"is a device array ({type(value.value).__module__}."
                        f"{type(value.value).__name__}), which compiled code cannot hold as "
                        "a constant: pass it to the function as an argument")
        return False
