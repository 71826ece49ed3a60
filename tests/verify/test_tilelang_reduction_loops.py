"""The project's own tilelang kernels never accumulate along a serial loop nested inside a T.Parallel loop.

tilelang 0.1.9 to 0.1.13 vectorize such a loop and keep one product in four (tile-ai/tilelang #2050 dropped the
guard for stores that do not move with the vectorized index; #2935, after 0.1.13, restored it): the prenorm GEMM
written that way made `mhcdoctor verify --path tilelang` fail mhc_pre at every token count under vLLM's pinned
tilelang 0.1.12, while the same kernel passed under 0.1.15. This reads the kernel source: it holds without tilelang
or a GPU.
"""

import ast
from pathlib import Path

import mhcdoctor.kernels.tilelang_path as tilelang_path


def _calls(node: ast.For, name: str) -> bool:
    call = node.iter
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def reductions_inside_parallel(source: str) -> list[str]:
    """`line: target` for each `x[...] += …` in a T.serial loop inside a T.Parallel loop whose index skips the serial
    loop's variable (every iteration of the serial loop adds into the same element)."""
    found = []
    for outer in ast.walk(ast.parse(source)):
        if not (isinstance(outer, ast.For) and _calls(outer, "Parallel")):
            continue
        for inner in ast.walk(outer):
            if not (isinstance(inner, ast.For) and _calls(inner, "serial")):
                continue
            for stmt in ast.walk(inner):
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
                    if not _names(inner.target) & _names(stmt.target.slice):
                        found.append(f"{stmt.lineno}: {ast.unparse(stmt.target)}")
    return found


def test_the_tilelang_kernels_keep_every_reduction_loop_outside_t_parallel() -> None:
    assert reductions_inside_parallel(Path(tilelang_path.__file__).read_text()) == []


def test_the_check_finds_the_gemm_loop_that_tilelang_0_1_12_miscompiled() -> None:
    miscompiled = """
for r, j in T.Parallel(bt, m):
    for c in T.serial(bk):
        acc[r, j] += xs[r, c] * fs[j, c]
"""
    assert reductions_inside_parallel(miscompiled) == ["4: acc[r, j]"]
    fixed = """
for c in T.serial(bk):
    for r, j in T.Parallel(bt, m):
        acc[r, j] += xs[r, c] * fs[j, c]
"""
    assert reductions_inside_parallel(fixed) == []
