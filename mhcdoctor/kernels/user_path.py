"""The user's own op implementations (`verify --kernel OP=MODULE:FUNC`, `bench --kernel`), as the path `user`.

Each function must take the reference's arguments, positionally, and return what the reference returns
(mhcdoctor.reference). The specs reach the child in the environment variable USER_KERNELS_ENV as JSON
{op: "module:func"}, and the parent's working directory in USER_FOLDER_ENV: it is appended to sys.path here, just
before the import, so a module beside the user imports, and nothing in that folder runs before mhcdoctor's code (a
sitecustomize.py on the child's PYTHONPATH would) or shadows an installed library.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

from mhcdoctor.kernels import USER, USER_FOLDER_ENV, USER_KERNELS_ENV, PathImpl, PathUnavailable, Progress


def parse_spec(spec: str) -> tuple[str, str]:
    """`OP=MODULE:FUNC` → (op, "module:func"); ValueError with a one-line reason when it is not that."""
    op, sep, target = spec.partition("=")
    op, target = op.strip(), target.strip()
    module, colon, func = target.partition(":")
    if not sep or not colon or not module or not func:
        raise ValueError(f"--kernel takes OP=MODULE:FUNC (for example mhc_post=mykernels:post), not {spec!r}")
    if op not in USER.ops:
        raise ValueError(f"--kernel {spec!r}: unknown op {op!r}; ops: {', '.join(USER.ops)}")
    stem = module.removesuffix(".py")
    if module.endswith(".py") and all(part.isidentifier() for part in stem.split(".")):
        raise ValueError(f"--kernel {spec!r}: give the module, {stem}, not its file {module}")
    if not all(part.isidentifier() for part in module.split(".")):  # a path would reach the import as a name
        raise ValueError(
            f"--kernel {spec!r}: {module!r} is not a module name (e.g. mykernels or pkg.kernels, run from the "
            "folder that holds it)"
        )
    if not func.isidentifier():
        raise ValueError(f"--kernel {spec!r}: {func!r} is not a function name")
    return op, f"{module}:{func}"


def load(name: str, device: str, progress: Progress) -> PathImpl:
    try:
        specs = json.loads(os.environ.get(USER_KERNELS_ENV, "{}"))
    except ValueError:
        specs = {}
    if not isinstance(specs, dict) or not specs:
        raise PathUnavailable("no --kernel OP=MODULE:FUNC was given")
    folder = os.environ.get(USER_FOLDER_ENV)
    if folder and folder not in sys.path:  # last: the user's folder adds modules, it does not replace libraries
        sys.path.append(folder)
    ops: dict[str, Any] = {}
    for op, target in specs.items():
        module_name, _, func_name = str(target).partition(":")
        progress(f"importing {module_name} for {op}")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the user's module: any error is a reason, not a crash
            reason = f"--kernel {op}={target}: {module_name} does not import: {type(exc).__name__}: {exc}"
            raise PathUnavailable(reason) from None
        func = getattr(module, func_name, None)
        if not callable(func):
            raise PathUnavailable(f"--kernel {op}={target}: {module_name} has no function {func_name!r}")
        ops[str(op)] = func
    return PathImpl(name=name, ops=ops, notes=[f"{op}={target}" for op, target in specs.items()])
