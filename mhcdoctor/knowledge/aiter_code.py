"""aiter's mHC fixes told by the installed code: one content signature per fix, read from ROCm/aiter's diffs.

Each signature is a few lines of `csrc/kernels/mhc_kernels.cu` (or, for an API vLLM calls, of `aiter/ops/mhc.py`),
normalised (all whitespace and line continuations removed), that only the code before a fix or only the code after
it holds, taken from the diff at the fix commit. scripts/aiter-code-table checks every signature against every tag
from v0.1.10 to the newest and against every commit of main that changed the mHC files (and each fix's parent), and
writes what each holds to mhcdoctor/knowledge/aiter_code_table.json: that table is the version fallback here, used
only where no source is installed.

A state is about the bug, as `sqrsum_fix` always was: `present` means the code is free of it (the fix is there, or the
code predates the bug), `absent` means the buggy code is there, `unknown` means the code could not be read or holds no
known form (say so; never guess).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mhcdoctor.documents.vocabulary import FixState
from mhcdoctor.facts import AiterFacts
from mhcdoctor.knowledge.versions import Version, parse

KERNELS = "csrc/kernels/mhc_kernels.cu"
OPS = "aiter/ops/mhc.py"  # the Python side vLLM imports (site-packages/aiter/ops/mhc.py once installed)
_CONTINUATION = re.compile(r"\\[ \t\r]*\n")  # a macro's line continuation
_WHITESPACE = str.maketrans("", "", " \t\n\r\f\v")  # str.translate: fast and flat on a file of short lines
_BETWEEN = r"(?:[ \t\n\r\f\v]|\\(?=[ \t\r]*\n))*"  # what normalising drops, between two characters of a needle


@dataclass(frozen=True)
class Form:
    """One form of the code a fix is about: what holding it means, the normalised text, a line for the evidence."""

    state: FixState
    text: str
    what: str
    at_commit: bool = False  # the code of CodeFix.commit itself: on main it comes with CodeFix.ancestors
    also: tuple[str, ...] = ()  # more normalised text the file must hold for the form to count (anywhere in it)


@dataclass(frozen=True)
class CodeFix:
    id: str  # the key in AiterFacts.fixes and in --aiter-fix ID=STATE; "sqrsum" is AiterFacts.sqrsum_fix
    pr: str
    commit: str  # the fix commit on ROCm/aiter's main (the commit that introduced the code, for a report)
    file: str  # under the aiter source root
    forms: tuple[Form, ...]  # buggy forms first: a file holding one is buggy whatever else it holds
    ancestors: tuple[str, ...]  # fixes whose commits are git ancestors of this one on main (scripts/aiter-code-table)


# aiter #3033 (b639cb6): mhc_pre_gemm_sqrsum_kernel's lanes 16-63 stored row sums into other warps' rows; the race
# came with #2479 (7ea98c6, v0.1.12), which turned the store guard `lane_id < mfma_m` (v0.1.11's) into a bounds check.
SQRSUM = CodeFix(
    "sqrsum", "3033", "b639cb63bcac4672dce33a731fad042a65cb3649", KERNELS,
    (
        Form("absent", "if((warp_id*mfma_m+lane_id<m_oob)){",
             "racy store guard `if ((warp_id * mfma_m + lane_id < m_oob))` (before aiter #3033)"),
        Form("present", "if(lane_id<mfma_m&&(warp_id*mfma_m+lane_id<m_oob)){",
             "fixed store guard `lane_id < mfma_m && (...)` (aiter #3033)", at_commit=True),
        Form("present", "if(lane_id<mfma_m){",
             "store guard `if (lane_id < mfma_m)` of v0.1.11, before the race existed"),
    ),
    ("post-race", "big-fuse-sync"),
)  # fmt: skip
# aiter #2978 (a858741): mhc_pre_big_fuse's barrier sat before the double-buffered residual loop, not in it.
BIG_FUSE_SYNC = CodeFix(
    "big-fuse-sync", "2978", "a85874151dc9a9e607598b8b73f83c6fab954a6b", KERNELS,
    (
        Form("absent", "opus::s_waitcnt_vmcnt(opus::number<lds_res_load_loop>{});__builtin_amdgcn_s_barrier();"
             "static_assert(num_rows*hc_mult*residual_block%(pre_thread_num*8)==0",
             "mhc_pre_big_fuse's barrier before the residual loop (before aiter #2978)"),
        Form("present", "for(inti=0;i<out_loop;i++){__builtin_amdgcn_s_barrier();DTYPE_I*s_res_rd_ptr=s_res+",
             "mhc_pre_big_fuse's barrier inside the residual loop (aiter #2978)", at_commit=True),
        Form("present", "autoload_res_loop=[&](inti){",
             "mhc_pre_big_fuse loads the residual into registers, no LDS tile to wait for (aiter #3237, after #2978)"),
    ),
    ("post-race",),
)  # fmt: skip
# aiter #2963 (9141aa9): mhc_post refilled an LDS tile other waves may still read, with no barrier between.
POST_RACE = CodeFix(
    "post-race", "2963", "9141aa9301b960daea99fa9303f39aa28b426284", KERNELS,
    (
        Form("absent", "residual_block*((i)+2));lds_load_residual_tile((i)+2);",
             "mhc_post's prefetch `lds_load_residual_tile((i) + 2)` with no barrier before it (before aiter #2963)"),
        Form("absent", "if(i<loop-2){lds_load_x_tile(i+2);",
             "mhc_post's prefetch `lds_load_x_tile(i + 2)` with no barrier before it (before aiter #2963)"),
        Form("present", "__builtin_amdgcn_s_barrier();lds_load_residual_tile((i)+2);",
             "mhc_post's barrier before `lds_load_residual_tile((i) + 2)` (aiter #2963)", at_commit=True),
    ),
    (),
)  # fmt: skip
# aiter #3417 (1be6aee) zeroes the lanes #3396 (e394066) left outside the guard of mhc_pre's RMS reduction; the code
# before #3396 reduced the RMS in a per-row loop.
BIG_FUSE_RMS = CodeFix(
    "big-fuse-rms", "3417", "1be6aee67b7cf9e0e90daccc700f763043a99f5d", KERNELS,
    (
        Form("absent", "if(warp_id<hc_mult3_reduce_warp_num&&lane_id<warp_num_pow2*num_rows){"
             "floatsum=s_pre_rms_partial[lane_id];",
             "mhc_pre's RMS reduction reads lanes outside its guard (aiter #3396, before #3417)"),
        Form("present", "if(warp_id<hc_mult3_reduce_warp_num){floatsum=0.0f;"
             "if(lane_id<warp_num_pow2*num_rows&&lane_id%warp_num_pow2<warp_num){sum=s_pre_rms_partial[lane_id];",
             "mhc_pre's RMS reduction zeroes the lanes outside its guard (aiter #3417)", at_commit=True),
        Form("present", "rms[i]=rsqrtf(rms[i]/(hidden_size*hc_mult)+rms_eps);",
             "mhc_pre's per-row RMS loop of the code before aiter #3396, which brought the bug"),
    ),
    ("sqrsum", "post-race", "big-fuse-sync"),
)  # fmt: skip
# aiter #4633 (open, cause unknown) was reported on the code #4115 (773ef5e) left: a state here says only whether the
# installed code is that code (`absent`: it is) or older (`present`), never whether the bug is in it.
INVALID_CONFIG = CodeFix(
    "invalid-config", "4115", "773ef5e8af", KERNELS,
    (
        Form("absent", "#ifdefined(__gfx950__)||defined(__gfx942__)||defined(__gfx9_4_generic__)#defineMHC_BF16_MFMA1",
             "the bf16 MFMA path aiter #4115 added, the code aiter #4633 was reported on", at_commit=True),
        Form("present", "template<typenameDTYPE_I,intnum_warps,inttile_m,inttile_n,inttile_k>",
             "mhc_pre's GEMM template before aiter #4115 (older than the code aiter #4633 was reported on)"),
        Form("present", "template<typenameDTYPE_I,intblock_size,inttile_m,inttile_n,inttile_k>",
             "mhc_pre's GEMM template before aiter #3768 (older than the code aiter #4633 was reported on)"),
    ),
    ("sqrsum", "post-race", "big-fuse-sync", "big-fuse-rms"),
)  # fmt: skip
# aiter #4115 (773ef5e) gives mhc_pre_gemm_sqrsum and mhc_fused_post_pre_gemm_sqrsum a last argument,
# is_fn_pack_bf16, which vLLM 0.30-0.34's mhc_pre_delayed passes (vllm/_aiter_ops.py:3804-3821 at 0.30.0); before it
# the GEMM takes five arguments (aiter/ops/mhc.py:17-23 at v0.1.17, csrc/include/rocm_ops.hpp:2274-2281 its pybind),
# and v0.1.11-v0.1.15 lack the helpers vLLM imports with it (get_mhc_fused_post_pre_config, mhc_fused_post_pre_
# gemm_sqrsum: v0.1.16). `present`: the API vLLM calls is there; `absent`: the older five-argument GEMM.
DELAYED_API = CodeFix(
    "delayed-api", "4115", "773ef5e8af", OPS,
    (
        Form("absent", "defmhc_pre_gemm_sqrsum(out:Tensor,sqrsum:Tensor,x:Tensor,fn:Tensor,tile_k:int=128,#64or128)"
             "->None:",
             "mhc_pre_gemm_sqrsum(out, sqrsum, x, fn, tile_k=128): five arguments, no is_fn_pack_bf16 (before aiter "
             "#4115)"),
        Form("present", "defmhc_pre_gemm_sqrsum(out:Tensor,sqrsum:Tensor,x:Tensor,fn:Tensor,tile_k:int=128,#64or128"
             "is_fn_pack_bf16:int=0,)->None:",
             "mhc_pre_gemm_sqrsum(..., tile_k=128, is_fn_pack_bf16=0), with get_mhc_pre_splitk, "
             "get_mhc_fused_post_pre_config and mhc_fused_post_pre_gemm_sqrsum(..., is_fn_pack_bf16=0) (aiter #4115)",
             at_commit=True,
             also=("defget_mhc_pre_splitk(", "defget_mhc_fused_post_pre_config(",
                   "defmhc_fused_post_pre_gemm_sqrsum(gemm_out_mul:Tensor,gemm_out_sqrsum:Tensor,next_residual:Tensor,"
                   "layer_input:Tensor,residual_in:Tensor,post_layer_mix:Tensor,comb_res_mix:Tensor,fn:Tensor,"
                   "tile_m:int=16,#16,32or64tile_n:int=32,#16or32tile_k:int=32,#32or64is_fn_pack_bf16:int=0,)"
                   "->None:")),
    ),
    ("sqrsum", "post-race", "big-fuse-sync", "big-fuse-rms"),
)  # fmt: skip
FIXES: tuple[CodeFix, ...] = (SQRSUM, BIG_FUSE_SYNC, POST_RACE, BIG_FUSE_RMS, INVALID_CONFIG, DELAYED_API)
BY_ID = {fix.id: fix for fix in FIXES}
OTHER_FIXES = tuple(fix for fix in FIXES if fix is not SQRSUM)  # AiterFacts.fixes' (sqrsum's is sqrsum_fix)


@dataclass(frozen=True)
class Told:
    state: FixState
    line: int  # 1-based line of the file where the form starts
    last: int  # and where it ends
    what: str
    at_commit: bool


class Normalised:
    """A source file without whitespace and macro line continuations, and the way back to the file's lines: no
    per-line table, so a hostile file of short lines costs no more memory than its text."""

    def __init__(self, text: str) -> None:
        self._source = text
        self.text = (_CONTINUATION.sub("", text) if "\\" in text else text).translate(_WHITESPACE)

    def find(self, needle: str) -> tuple[int, int] | None:
        """The 1-based first and last lines of the file that `needle` (normalised) spans, or None."""
        if needle not in self.text:
            return None
        match = re.search(_BETWEEN.join(map(re.escape, needle)), self._source)
        if match is None:  # cannot be: the needle is in the text this file normalises to
            return None
        first = self._source.count("\n", 0, match.start()) + 1
        return first, first + self._source.count("\n", match.start(), match.end())


def tell(fix: CodeFix, source: Normalised) -> Told | None:
    """What the source says about `fix`: the first form it holds (buggy forms first), or None."""
    for form in fix.forms:
        lines = source.find(form.text)
        if lines is not None and all(more in source.text for more in form.also):
            return Told(form.state, lines[0], lines[1], form.what, form.at_commit)
    return None


def fill_by_ancestry(states: dict[str, FixState], found: set[str]) -> dict[str, str]:
    """Fill in, as present, the unknown fixes that a fix in `found` (its commit's own code found, or stated)
    descends from on aiter's main; returns why, per fix filled. A release branch could hold a fix without its
    ancestors, so this serves only where a fix could not be told otherwise."""
    filled: dict[str, str] = {}
    for fix in FIXES:
        if fix.id not in found:
            continue
        for earlier in fix.ancestors:
            if states.get(earlier) == "unknown":
                states[earlier] = "present"
                filled[earlier] = f"aiter #{BY_ID[earlier].pr} is a git ancestor of #{fix.pr} on aiter's main"
    return filled


@dataclass(frozen=True)
class TagRow:
    """What one tag of ROCm/aiter holds (scripts/aiter-code-table, read from its code)."""

    tag: str
    version: Version
    commit: str
    on_main: bool  # the tag is a git ancestor of main
    states: dict[str, FixState]
    holds: frozenset[str]  # the fixes whose commit (or a cherry-pick of it) is in the tag's history
    brings: frozenset[str]  # the fixes whose bug's commit is (for invalid-config: #4115, the reported code)
    features: dict[str, bool | None]  # aiter/ops/mhc.py's API: mhc_pre_norm_args, has_fused_post_pre


# setuptools_scm writes this when a source build has no git metadata (aiter's pyproject: fallback_version).
SCM_FALLBACK = Version("0.1.0")


@functools.cache
def table() -> dict[str, Any]:
    """aiter_code_table.json: per tag and per build of main, what its code holds (scripts/aiter-code-table)."""
    data: dict[str, Any] = json.loads(
        resources.files("mhcdoctor.knowledge").joinpath("aiter_code_table.json").read_text()
    )
    return data


@functools.cache
def tags() -> tuple[TagRow, ...]:
    data = table()
    rows = [
        TagRow(
            r["tag"],
            Version(r["tag"].lstrip("v")),
            r["commit"],
            r["on_main"],
            r["states"],
            frozenset(r["holds"]),
            frozenset(r["brings"]),
            {key: r[key] for key in FEATURES},
        )
        for r in data["tags"]
    ]
    return tuple(sorted(rows, key=lambda r: r.version))


def state_from_version(version: str | None, fix_id: str) -> tuple[FixState, str]:
    """(state, why) for `fix_id` by an aiter version label, from the code at ROCm/aiter's tags; for no source only.

    A tag's own version gets its code's state; a release between tags the nearest tag's below. A development build
    counts from the tag setuptools_scm described it by (v0.1.12.post1 + N commits is 0.1.12.post2.devN), so it
    descends from that tag: it holds a fix that tag holds, and is free of a bug that the next tag of its line (main,
    or its release branch) has not brought; otherwise it may or may not hold the fix: unknown."""
    v = parse(version)
    if v is None:
        return "unknown", f"version {version!r} is not a PEP 440 version" if version else "no version found"
    if v == SCM_FALLBACK:
        return "unknown", "version 0.1.0 is setuptools_scm's fallback for a build without git metadata"
    exact = next((r for r in tags() if r.version == v), None)
    if exact is not None:
        return exact.states[fix_id], f"the code at aiter's tag {exact.tag}"
    public = _release_of(v)
    if not v.is_devrelease:  # a release, or a tag's build with local changes (+local)
        below = [r for r in tags() if r.version <= public]
        if not below:
            return "unknown", f"aiter {version} is older than every tag read"
        return below[-1].states[fix_id], f"the code at aiter's tag {below[-1].tag}, the nearest to {version}"
    base = next((r for r in tags() if _next_version(r.version) == public), None)
    if base is None:
        return "unknown", f"{version} is a development build past no tag read"
    pr = BY_ID[fix_id].pr
    if fix_id in base.holds:
        return base.states[fix_id], f"a build past aiter's tag {base.tag}, which holds aiter #{pr} (git ancestry)"
    line = [r for r in tags() if r.version > base.version and _same_line(r, base)]
    if line and fix_id not in line[0].brings:
        return "present", f"a build between aiter's tags {base.tag} and {line[0].tag}, before the code of aiter #{pr}"
    if line and fix_id in base.brings and fix_id not in line[0].holds:
        return "absent", f"a build between aiter's tags {base.tag} and {line[0].tag}, neither holding aiter #{pr}"
    upto = f" (the next is {line[0].tag})" if line else ""
    return "unknown", f"{version} is a build past aiter's tag {base.tag}{upto}: it may or may not hold aiter #{pr}"


# aiter/ops/mhc.py's API that vLLM 0.29+ calls: mhc_pre's norm_weight/norm_eps, mhc_fused_post_pre (AiterFacts names).
FEATURES = ("mhc_pre_norm_args", "has_fused_post_pre")


def feature_from_version(version: str, key: str) -> bool | None:
    """Whether aiter `version`'s aiter/ops/mhc.py has API `key` (one of FEATURES), by the code at the tags as
    state_from_version reads them; a development build has what its tag has (the API only grows) and lacks what the
    next tag of its line still lacks; None where the version cannot say."""
    v = parse(version)
    if v is None or v == SCM_FALLBACK:
        return None
    public = _release_of(v)
    if not v.is_devrelease:
        below = [r for r in tags() if r.version <= public]
        return below[-1].features[key] if below else None
    base = next((r for r in tags() if _next_version(r.version) == public), None)
    if base is None:
        return None
    if base.features[key]:
        return True
    line = [r for r in tags() if r.version > base.version and _same_line(r, base)]
    return False if line and line[0].features[key] is False else None


def _same_line(row: TagRow, base: TagRow) -> bool:
    """Whether `row` follows `base` on its line: main, or the release branch of `base`'s release."""
    return row.on_main if base.on_main else row.version.release == base.version.release


def _release_of(v: Version) -> Version:
    """`v` without its .devN and +local parts: 0.1.12.post2.dev5+g1a2b3c is 0.1.12.post2."""
    pre = f"{v.pre[0]}{v.pre[1]}" if v.pre is not None else ""
    post = f".post{v.post}" if v.post is not None else ""
    return Version(f"{v.base_version}{pre}{post}")


def _next_version(tag: Version) -> Version:
    """The version setuptools_scm gives a build past `tag` (guess-next-dev, without its .devN)."""
    if tag.post is not None:
        return Version(f"{tag.base_version}.post{tag.post + 1}")
    if tag.pre is not None:
        return Version(f"{tag.base_version}{tag.pre[0]}{tag.pre[1] + 1}")
    return Version(".".join(str(n) for n in (*tag.release[:-1], tag.release[-1] + 1)))


def fix_state(aiter: AiterFacts, fix_id: str) -> tuple[FixState, str]:
    """(state, how it was told) of a fix but sqrsum for these aiter facts: what the probe, a report or a what-if
    said; by the version label where they said nothing (a report written before `fixes`)."""
    if fix_id in aiter.fixes:
        return aiter.fixes[fix_id], aiter.fix_evidence.get(fix_id) or "stated"
    state, rule = state_from_version(aiter.version, fix_id)
    return state, f"by version: {rule}"


@functools.cache
def executed() -> dict[str, Any]:
    """aiter_exec_table.json: each tag's aiter/ops/mhc.py run on the CPU per arch with the compiled ops recorded, and
    the launches those calls give by mhc_kernels.cu's launchers (scripts/aiter-mhc-exec; not run on an AMD GPU)."""
    data: dict[str, Any] = json.loads(
        resources.files("mhcdoctor.knowledge").joinpath("aiter_exec_table.json").read_text()
    )
    return data


# What aiter's mHC code does per GPU arch, tag by tag (read with `git show TAG:PATH` on ROCm/aiter; the archs each tag's
# files name are in the table, archs_ops_py/archs_kernels); what its Python side chooses when run is executed() above.
ARCH_AUDIT: tuple[tuple[str, str, str], ...] = (
    ("v0.1.11–v0.1.16", "wave64 only: mhc_pre_gemm_sqrsum's launcher sizes its grid with `const int warp_size = 64` "
     "(csrc/kernels/mhc_kernels.cu:257 at v0.1.11, :349 at v0.1.16); aiter #3768 (v0.1.17) adds wave32 (gfx11, "
     "gfx12, gfx1250)", "code"),
    ("v0.1.12–", "gfx942 takes its own branches: mhc_post's residual async loads are 4 bytes wide there "
     "(`#if defined(__gfx942__)`, mhc_kernels.cu:604 at v0.1.12), mhc_post's block choice by `get_gpu_arch()` "
     "(:862 at v0.1.12), and from v0.1.14 mhc_pre_big_fuse's smaller residual block for m > 12 × CUs (:555 at "
     "v0.1.14)", "code"),
    ("v0.1.16–", "mhc_fused_post_pre (aiter/ops/mhc.py) has tuned configs for (gfx950, 256 CUs) and (gfx942, 80 CUs), "
     "a default for every other chip, and a gfx950-only split-K for m ≥ 8192 (mhc.py:213, :350 at v0.1.16)", "code"),
    ("v0.1.17–", "mhc_pre's split-K search offers tile_k 128 only on gfx9 (`arch.startswith(\"gfx9\")`, mhc.py:75 at "
     "v0.1.17); a tuned fused config for (gfx1250, 256 CUs) (mhc.py:259); gfx1250 gets its own kernel branches "
     "(`__gfx1250__`, TDM residual loads)", "code"),
    ("v0.1.18–v0.1.20.post1", "a bf16 MFMA path on gfx942, gfx950 and gfx9_4_generic (aiter #4115, mhc_kernels.cu:28 "
     "at v0.1.18) and a wave32 WMMA bf16 path on gfx1250 that aiter's own source calls \"UNVERIFIED - no gfx1250 HW to "
     "validate\" (mhc_kernels.cu:442 at v0.1.18); aiter #4633 (MI300X) was reported on this code", "code"),
)  # fmt: skip
