"""Empty slices (``x[1:-1]`` of one element, ``x[5:2]``, ``x[n:]`` with
``n == len(x)``) as NumPy has them: arrays of no elements.

Numba's array analysis takes a slice's length to be its stop less its start,
each put in ``[0, n]``; for a start past the stop that is negative, and the
array of an expression over the slice (or a parfor's loop over it) is made
with that length: ``ValueError: negative dimensions not allowed`` (under
``numba.njit(parallel=True)`` too). The parfor passes of an offload build run
that analysis with each slice's length clipped at 0.

The same two passes, as an offload build runs them, also type the mask reads
Numba's parfor pass leaves untyped, and fuse no two parfors that may share
memory through different arrays (``fusion_aliases.py``)."""

from __future__ import annotations

import builtins
import operator

from numba.core import ir, types
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import find_build_sequence, guard, mk_unique_var, require
from numba.core.typed_passes import _reload_parfors
from numba.parfors import array_analysis, parfor

from .fusion_aliases import fusion_would_race


class NonNegativeSliceAnalysis(array_analysis.ArrayAnalysis):
    """Numba's array analysis, whose slice lengths are never negative."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        # (unclipped, clipped) length pairs: lengths equal before clipping are
        # equal after it, which keeps the parfors over them fusable
        self._clipped_lengths: list[tuple[ir.Var, ir.Var]] = []

    def slice_size(self, index, dsize, equiv_set, scope, stmts):
        length, replacement = super().slice_size(index, dsize, equiv_set, scope, stmts)
        known = equiv_set.get_rel(length)
        if length is dsize or isinstance(known, int) and known >= 0:
            return length, replacement
        loc = index.loc
        if isinstance(known, int):  # a start past the stop, both known
            return self.gen_literal_slice_part(0, loc, scope, stmts, equiv_set,
                                               name="empty_slice_size")[0], replacement
        return self._clipped(length, equiv_set, scope, loc, stmts), replacement

    def _index_to_shape(self, scope, equiv_set, var, ind_var):
        # Numba sizes the slices of an index one by one and gives up at one
        # with a step; the lengths of those before it are then defined in
        # the equivalence set by statements it drops, and a later view
        # through the same slices (``x[1:, :]`` after ``x[1:, ::-1]``) takes
        # a length nothing computes: an array of no rows. Give up first.
        index_type = self.typemap[ind_var.name]
        items = (ind_var,) if isinstance(index_type, types.SliceType) else \
            guard(find_build_sequence, self.func_ir, ind_var)
        if isinstance(index_type, types.BaseTuple) and items is not None:
            items = items[0]
        require(items is not None and not any(
            getattr(self.typemap[item.name], "has_step", False) for item in items))
        return super()._index_to_shape(scope, equiv_set, var, ind_var)

    def _clipped(self, length: ir.Var, equiv_set, scope: ir.Scope, loc: ir.Loc,
                 stmts: list[ir.Stmt]) -> ir.Var:
        """``max(length, 0)``, appended to ``stmts``."""
        zero = ir.Var(scope, mk_unique_var("zero"), loc)
        self._define(equiv_set, zero, types.intp, ir.Const(0, loc))
        stmts.append(ir.Assign(ir.Const(0, loc), zero, loc))
        max_type = self.context.resolve_value_type(builtins.max)
        max_function = ir.Var(scope, mk_unique_var("max"), loc)
        self._define(equiv_set, max_function, max_type, ir.Global("max", builtins.max, loc))
        stmts.append(ir.Assign(ir.Global("max", builtins.max, loc), max_function, loc))
        call = ir.Expr.call(max_function, [length, zero], (), loc)
        self.calltypes[call] = self.context.resolve_function_type(
            max_type, (types.intp, types.intp), {})
        clipped = ir.Var(scope, mk_unique_var("nonnegative_slice_size"), loc)
        self._define(equiv_set, clipped, types.intp, call)
        stmts.append(ir.Assign(call, clipped, loc))
        for unclipped, earlier in self._clipped_lengths:
            if equiv_set.is_equiv(length, unclipped):
                equiv_set.insert_equiv(clipped, earlier)
                break
        self._clipped_lengths.append((length, clipped))
        return clipped


def _with_nonnegative_slices(pass_states: parfor.ParforPassStates) -> None:
    pass_states.array_analysis = NonNegativeSliceAnalysis(
        pass_states.typingctx, pass_states.func_ir, pass_states.typemap, pass_states.calltypes)


class _SliceLengthParforPass(parfor.ParforPass):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        _with_nonnegative_slices(self)


class _SliceLengthParforFusionPass(parfor.ParforFusionPass):
    def __init__(self, state, *args) -> None:
        super().__init__(*args)
        _with_nonnegative_slices(self)
        self.state = state

    def fuse_parfors(self, array_analysis, blocks, func_ir, typemap) -> None:
        # Numba's, where two parfors that may share memory through different
        # arrays are not fused (fusion_aliases.py)
        for label, block in blocks.items():
            fusion_happened = True
            while fusion_happened:
                fusion_happened = False
                new_body = []
                i = 0
                while i < len(block.body) - 1:
                    stmt, next_stmt = block.body[i], block.body[i + 1]
                    if isinstance(stmt, parfor.Parfor) and isinstance(next_stmt, parfor.Parfor) \
                            and not fusion_would_race(self.state, stmt, next_stmt):
                        # renamed variables since the analysis: its sets again
                        equiv_set = array_analysis.get_equiv_set(label)
                        stmt.equiv_set = next_stmt.equiv_set = equiv_set
                        fused_node, fuse_report = parfor.try_fuse(
                            equiv_set, stmt, next_stmt, self.metadata["parfors"], func_ir,
                            typemap)
                        self.diagnostics.fusion_reports.append(fuse_report)
                        if fused_node is not None:
                            fusion_happened = True
                            self.diagnostics.fusion_info[stmt.id].extend([next_stmt.id])
                            new_body.append(fused_node)
                            self.fuse_recursive_parfor(fused_node, equiv_set, func_ir, typemap)
                            i += 2
                            continue
                    new_body.append(stmt)
                    if isinstance(stmt, parfor.Parfor):
                        self.fuse_recursive_parfor(stmt, array_analysis.get_equiv_set(label),
                                                   func_ir, typemap)
                    i += 1
                new_body.append(block.body[-1])
                block.body = new_body

    def fuse_recursive_parfor(self, parfor_node, equiv_set, func_ir, typemap) -> None:
        # Numba's, with this module's analysis of the nested loops
        blocks = parfor.wrap_parfor_blocks(parfor_node)
        parfor.maximize_fusion(self.func_ir, blocks, self.typemap)
        analysis = NonNegativeSliceAnalysis(self.typingctx, self.func_ir, self.typemap,
                                            self.calltypes)
        analysis.run(blocks, equiv_set)
        self.fuse_parfors(analysis, blocks, func_ir, typemap)
        parfor.unwrap_parfor_blocks(parfor_node)


def _pass_arguments(state) -> tuple:
    return (state.func_ir, state.typemap, state.calltypes, state.return_type, state.typingctx,
            state.targetctx, state.flags.auto_parallel, state.flags, state.metadata,
            state.parfor_diagnostics)


@register_pass(mutates_CFG=True, analysis_only=False)
class OffloadParforPass(FunctionPass):
    """Numba's parfor pass (NumPy calls, array expressions and prange loops
    to parfors) with non-negative slice lengths. Unlike Numba's, it does not
    warn of a function without parfors: ``parallel=True`` is not the user's
    request in an offload build."""

    _name = "xpuc_parfor_pass"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        _SliceLengthParforPass(*_pass_arguments(state)).run()
        _type_mask_reads(state)
        # a cached entry's host parfors need Numba's threads started on load
        state.reload_init.append(_reload_parfors)
        return True


def _type_mask_reads(state) -> None:
    """Type the reads of a mask that Numba's parfor pass leaves untyped: the
    loop of a masked store (``a[m] = v``) reads ``m[i]`` without a call type,
    which Numba's threads type again and the cost model's sequential copy of
    the loop (host_parfors.py) does not."""
    blocks = list(state.func_ir.blocks.values())
    while blocks:
        block = blocks.pop()
        for stmt in block.body:
            if isinstance(stmt, parfor.Parfor):
                blocks.extend(stmt.loop_body.values())
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and \
                    stmt.value.op == "getitem" and stmt.value not in state.calltypes:
                read = stmt.value
                signature = state.typingctx.resolve_function_type(
                    operator.getitem,
                    (state.typemap[read.value.name], state.typemap[read.index.name]), {})
                if signature is not None:
                    state.calltypes[read] = signature


@register_pass(mutates_CFG=True, analysis_only=False)
class OffloadParforFusionPass(FunctionPass):
    """Numba's parfor fusion pass with non-negative slice lengths, which
    fuses no two parfors that may share memory through different arrays."""

    _name = "xpuc_parfor_fusion_pass"

    def __init__(self) -> None:
        FunctionPass.__init__(self)

    def run_pass(self, state) -> bool:
        _SliceLengthParforFusionPass(state, *_pass_arguments(state)).run()
        return True
