"""The launch ABI is defined once, in xpuc.abi. The C headers (runtime/*.h)
agree with it: every enum value, limit, field of the stats struct and entry
prototype. The ctypes binding (xpuc.runtime) and the llvmlite declarations of
compiled host code (xpuc.frontend.runtime_calls) are derived from it, and no
other module writes its values again.

Each side is checked against a table of its own here, so a change to any one
of them (the header, abi.py, a derivation) fails a test.
"""

import ctypes
import re
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_uint64, c_void_p
from pathlib import Path

import pytest
from llvmlite import ir as llvm
from numba.core import types
from numba.core.registry import cpu_target

from xpuc import abi, cuda_runtime, runtime, runtime_ctypes
from xpuc.frontend import runtime_calls
from xpuc.passes import launch_plan

ROOT = Path(__file__).resolve().parent.parent
HEADERS = sorted((ROOT / "runtime").glob("*.h"))
# the runtime's core and its SYCL backend (no_sycl.c stands in for the
# latter's entries where it is not built)
SOURCES = sorted((ROOT / "runtime").glob("*.c")) + sorted((ROOT / "runtime" / "sycl").glob("*.c"))
CUDA_HEADER = ROOT / "runtime" / "cuda" / "xpuc_cuda.h"
CUDA_SOURCES = sorted((ROOT / "runtime" / "cuda").glob("*.c"))


# ---- reading the C side ----------------------------------------------------------


def _code(path: Path) -> str:
    """A C file without its comments."""
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _one_line(text: str) -> str:
    """A declaration in the spelling of ``abi.c_prototype``: one space between
    words, ``*``s against the name, ``, `` between parameters."""
    text = " ".join(text.split())
    text = re.sub(r"\s*(\*+)\s*", r" \1", text)
    text = re.sub(r"\s*,\s*", ", ", text)
    text = re.sub(r"\s*\(\s*", "(", text)
    return re.sub(r"\s*\)", ")", text).strip()


_INT_CONSTANTS = {"INT32_MAX": 2**31 - 1}


def _value(text: str) -> int:
    text = text.strip()
    return _INT_CONSTANTS[text] if text in _INT_CONSTANTS else int(text, 0)


def header_enums(headers: list[Path] = HEADERS) -> dict[str, dict[str, int]]:
    """``typedef enum {...} name;`` of every header: name -> {member: value}."""
    enums: dict[str, dict[str, int]] = {}
    for path in headers:
        for body, name in re.findall(r"typedef\s+enum\s*\{(.*?)\}\s*(\w+)\s*;", _code(path),
                                     flags=re.S):
            members, value = {}, -1
            for member in filter(None, (m.strip() for m in body.split(","))):
                member_name, _, given = member.partition("=")
                value = _value(given) if given else value + 1
                members[member_name.strip()] = value
            assert enums.setdefault(name, members) == members, f"{name} differs between headers"
    return enums


def header_defines(headers: list[Path] = HEADERS) -> dict[str, str]:
    defines: dict[str, str] = {}
    for path in headers:
        for name, value in re.findall(r"^\s*#\s*define\s+(XPUC_\w+)[ \t]+([^\n]+)$",
                                      _code(path), flags=re.M):
            defines[name] = value.strip()
    return defines


def header_prototypes(headers: list[Path] = HEADERS) -> dict[str, str]:
    """Every function named ``xpuc_*`` the headers declare: name -> its
    declaration in one line."""
    prototypes: dict[str, str] = {}
    for path in headers:
        code = re.sub(r"^\s*#[^\n]*$", " ", _code(path), flags=re.M)
        code = re.sub(r"extern\s+\"C\"\s*\{|^\s*\}\s*$", " ", code, flags=re.M)
        for statement in code.split(";"):
            statement = statement.strip()
            match = re.fullmatch(r"[\w\s\*]*?\b(xpuc_\w+)\s*\(([^()]*)\)", statement, flags=re.S)
            if match and not statement.startswith("typedef"):
                line = _one_line(statement)
                assert prototypes.setdefault(match[1], line) == line, (
                    f"{match[1]} is declared twice, differently")
    return prototypes


def header_stats_fields(headers: list[Path] = HEADERS) -> list[tuple[str, str]]:
    (body,) = [body for path in headers for body in re.findall(
        r"typedef\s+struct\s*\{(.*?)\}\s*xpuc_stats\s*;", _code(path), flags=re.S)]
    return re.findall(r"(\w+)\s+(\w+)\s*;", body)


def defined_entries(sources: list[Path] = SOURCES) -> set[str]:
    """The functions named ``xpuc_*`` the C sources define with external
    linkage."""
    names = set()
    for path in sources:
        for header, name in re.findall(r"^([^\n;{}#]*?)\b(xpuc_\w+)\s*\([^;{}]*\)\s*\{",
                                       _code(path), flags=re.M):
            if "static" not in header.split():
                names.add(name)
    return names


# ---- the C headers agree with abi.py ------------------------------------------------


def test_headers_are_found():
    assert ROOT / "runtime" / "xpuc_runtime.h" in HEADERS
    assert SOURCES


def test_enums_agree():
    enums = header_enums()
    assert {name for name in enums if name.startswith("xpuc_")} == set(abi.ENUMS)
    for c_name, (enum, prefix) in abi.ENUMS.items():
        assert enums[c_name] == {prefix + member.name: member.value for member in enum}, c_name


def test_limits_agree():
    defines = header_defines()
    assert {name for name in defines if name.startswith("XPUC_MAX_")} == set(abi.LIMITS)
    for name, value in abi.LIMITS.items():
        assert _value(defines[name]) == value, name
    assert abi.MAX_KERNEL_ARGS == abi.LIMITS["XPUC_MAX_KERNEL_ARGS"]
    assert abi.MAX_WORK_ITEMS == abi.LIMITS["XPUC_MAX_WORK_ITEMS"]


def test_stats_struct_agrees():
    fields = header_stats_fields()
    assert [name for _, name in fields] == list(abi.STATS_FIELDS)
    assert {kind for kind, _ in fields} == {"int64_t"}


def test_entry_prototypes_agree():
    prototypes = header_prototypes()
    assert set(prototypes) == set(abi.ENTRIES)
    for name, entry in abi.ENTRIES.items():
        assert prototypes[name] == abi.c_prototype(entry)


def test_every_defined_entry_is_declared():
    assert defined_entries() == set(abi.ENTRIES)


def test_cuda_entry_prototypes_agree():
    """The CUDA runtime's header declares CUDA_ENTRIES (and includes the SYCL
    runtime's header for the enums and limits both share)."""
    prototypes = header_prototypes([CUDA_HEADER])
    assert set(prototypes) == set(abi.CUDA_ENTRIES)
    for name, entry in abi.CUDA_ENTRIES.items():
        assert prototypes[name] == abi.c_prototype(entry)
    assert '#include "../xpuc_runtime.h"' in CUDA_HEADER.read_text()
    assert defined_entries(CUDA_SOURCES) == set(abi.CUDA_ENTRIES)


def test_the_contiguous_x_mark_agrees():
    """The nvvm stage names the global the CUDA runtime looks up."""
    defines = header_defines([CUDA_HEADER])
    assert defines["XPUC_CUDA_X_CONTIGUOUS_SUFFIX"] == f'"{abi.CUDA_X_CONTIGUOUS_SUFFIX}"'


def test_one_launch_abi():
    """A CUDA launch takes a device and stream, then what a SYCL launch takes."""
    cuda = abi.CUDA_ENTRIES["xpuc_cuda_launch"].params
    sycl = abi.ENTRIES["xpuc_launch"].params
    assert cuda[:2] == (("device", "cuda_device*"), ("stream", "void*"))
    assert [kind for _, kind in cuda[2:]] == [kind for _, kind in sycl]


def test_readers_see_a_change(tmp_path):
    """A header that differs from abi.py reads differently."""
    header = (ROOT / "runtime" / "xpuc_runtime.h").read_text()
    changes = {
        "XPUC_ARG_I16 = 6": "XPUC_ARG_I16 = 7",
        "#define XPUC_MAX_KERNEL_ARGS 256": "#define XPUC_MAX_KERNEL_ARGS 128",
        "int32_t nargs,": "int64_t nargs,",
        "int64_t usm_frees;": "int64_t usm_frees;\n    int64_t usm_reuses;",
    }
    for old, new in changes.items():
        assert old in header
        header = header.replace(old, new)
    changed = tmp_path / "xpuc_runtime.h"
    changed.write_text(header)
    enum, prefix = abi.ENUMS["xpuc_arg_kind"]
    assert header_enums([changed])["xpuc_arg_kind"] != {
        prefix + member.name: member.value for member in enum}
    assert _value(header_defines([changed])["XPUC_MAX_KERNEL_ARGS"]) != abi.MAX_KERNEL_ARGS
    assert header_prototypes([changed])["xpuc_launch"] != abi.c_prototype(
        abi.ENTRIES["xpuc_launch"])
    assert len(header_stats_fields([changed])) != len(abi.STATS_FIELDS)


# ---- the notation -------------------------------------------------------------------


def test_type_notation():
    assert abi.parse_type("const u64*") == abi.Type("u64", 1, const=True)
    assert abi.parse_type("void**") == abi.Type("void", 2)
    assert abi.parse_type("const u64*").c_declaration("slots") == "const uint64_t *slots"
    assert abi.parse_type("i64").c_declaration("n") == "int64_t n"
    for bad in ("u128", "queue", "const", "i64 i64", "*i64"):
        with pytest.raises(ValueError):
            abi.parse_type(bad)
    assert abi.c_prototype(abi.ENTRIES["xpuc_call_end"]) == "int xpuc_call_end(void)"


# ---- ctypes and llvmlite are derived from abi.py --------------------------------------

# What each type the entries use is, for ctypes and for LLVM (a C int is 32 bits).
_CTYPES = {
    "void": None,
    "status": c_int,
    "i32": c_int32,
    "i64": c_int64,
    "u64": c_uint64,
    "void*": c_void_p,
    "const void*": c_void_p,
    "void**": POINTER(c_void_p),
    "queue*": c_void_p,
    "queue**": POINTER(c_void_p),
    "const char*": c_char_p,
    "const u64*": POINTER(c_uint64),
    "const i32*": POINTER(c_int32),
    "const i64*": POINTER(c_int64),
    "stats*": POINTER(runtime_ctypes.Stats),
    "cuda_device*": c_void_p,
    "cuda_device**": POINTER(c_void_p),
    "char*": c_char_p,
    "i32*": POINTER(c_int32),
}
_LLVM = {
    "void": "void",
    "status": "i32",
    "i32": "i32",
    "i64": "i64",
    "u64": "i64",
    "void*": "i8*",
    "const void*": "i8*",
    "void**": "i8**",
    "queue*": "i8*",
    "queue**": "i8**",
    "const char*": "i8*",
    "const u64*": "i64*",
    "const i32*": "i32*",
    "const i64*": "i64*",
    "i32*": "i32*",
    "stats*": "{" + ", ".join(["i64"] * len(abi.STATS_FIELDS)) + "}*",
}


def _used_types(entries: dict[str, abi.Entry] = abi.ENTRIES) -> set[str]:
    return {kind for entry in entries.values()
            for kind in (entry.result, *(kind for _, kind in entry.params))}


def test_tables_here_cover_every_type():
    assert ctypes.sizeof(c_int) == 4
    assert _used_types() <= set(_CTYPES) and _used_types() <= set(_LLVM)
    assert _used_types(abi.CUDA_ENTRIES) <= set(_CTYPES)  # no host code calls them


@pytest.mark.parametrize("name", sorted(abi.ENTRIES))
def test_ctypes_signatures_are_derived(name):
    entry = abi.ENTRIES[name]
    function = getattr(runtime._lib, name)
    expected = (_CTYPES[entry.result], [_CTYPES[kind] for _, kind in entry.params])
    assert (function.restype, function.argtypes) == expected
    assert runtime_ctypes.ctypes_signature(entry) == expected


@pytest.mark.parametrize("name", sorted(abi.CUDA_ENTRIES))
def test_cuda_ctypes_signatures_are_derived(name):
    entry = abi.CUDA_ENTRIES[name]
    function = getattr(cuda_runtime._lib, name)
    expected = (_CTYPES[entry.result], [_CTYPES[kind] for _, kind in entry.params])
    assert (function.restype, function.argtypes) == expected


def test_ctypes_side_covers_the_abi():
    assert set(runtime.symbol_addresses()) == set(abi.ENTRIES)
    assert [name for name, _ in runtime_ctypes.Stats._fields_] == list(abi.STATS_FIELDS)
    assert set(runtime.stats()) == set(abi.STATS_FIELDS)
    for kind in abi.ArgKind:
        assert getattr(runtime, f"ARG_{kind.name}") is kind
    for kind in abi.UsmKind:
        assert getattr(runtime, f"USM_{kind.name}") is kind
    assert runtime.MAX_KERNEL_ARGS == abi.MAX_KERNEL_ARGS
    assert runtime.MAX_WORK_ITEMS == abi.MAX_WORK_ITEMS


@pytest.mark.parametrize("name", sorted(abi.ENTRIES))
def test_llvm_types_are_derived(name):
    entry = abi.ENTRIES[name]
    function_type = runtime_calls.entry_type(entry)
    assert str(function_type.return_type) == _LLVM[entry.result]
    assert [str(arg) for arg in function_type.args] == [_LLVM[kind] for _, kind in entry.params]


def test_host_code_declares_entries_as_derived():
    """What compiled host code declares (through call_runtime) is the
    entry's derived type, for every entry it may call."""
    host_entries = {name for name, entry in abi.ENTRIES.items() if entry.host_code}
    assert set(runtime_calls.ENTRY_TYPES) == host_entries
    assert {"xpuc_launch", "xpuc_buffer_acquire", "xpuc_buffer_release"} <= host_entries
    context = cpu_target.target_context
    module = llvm.Module()
    function = llvm.Function(module, context.call_conv.get_function_type(types.none, ()), "f")
    builder = llvm.IRBuilder(function.append_basic_block())
    for name in sorted(host_entries):
        entry_type = runtime_calls.ENTRY_TYPES[name]
        runtime_calls.call_runtime(context, builder, name,
                                   *(llvm.Constant(arg, None) for arg in entry_type.args))
        declared = module.get_global(name)
        assert str(declared.function_type) == str(runtime_calls.entry_type(abi.ENTRIES[name]))


def test_launch_plan_kinds_are_the_abi_kinds():
    assert launch_plan.ArgKind is abi.ArgKind


# Assignments of a number (or a range) to an ABI name: the values live in abi.py.
_RESTATED = re.compile(
    r"^\s*(?:(?:ARG|USM)_[A-Z0-9]+|MAX_KERNEL_ARGS|MAX_WORK_ITEMS)\b[\w\s,]*=\s*(?:\d|range\()",
    re.M)


def test_no_module_restates_the_abi():
    offenders = [
        str(path.relative_to(ROOT)) for path in sorted((ROOT / "compiler").rglob("*.py"))
        if path.name != "abi.py" and _RESTATED.search(path.read_text())
    ]
    assert offenders == []
    assert "argtypes = [" not in (ROOT / "compiler" / "runtime.py").read_text()


def test_abi_imports_nothing_from_xpuc():
    source = (ROOT / "compiler" / "abi.py").read_text()
    imports = re.findall(r"^\s*(?:from|import)\s+(\S+)", source, flags=re.M)
    assert not [name for name in imports if name.startswith(".") or name.startswith("xpuc")]
