"""The labels aiter's code carries (for the tests of aiter by its installed code: tests/probes/test_aiter_code.py,
tests/rules/test_aiter_code_matrix.py): each row of mhcdoctor's aiter code table, the version setuptools_scm gives
its code, and the misleading labels a source build really carries."""

from __future__ import annotations

import json
import re
from importlib import resources

TABLE = json.loads(resources.files("mhcdoctor.knowledge").joinpath("aiter_code_table.json").read_text())
ROWS = {re.sub(r"[^0-9A-Za-z.]+", "-", row.get("tag") or row["build"]).strip("-"): row for row in
        TABLE["tags"] + TABLE["main"]}  # fmt: skip
# Labels a source build really carries: setuptools_scm's for a build of main (0.1.12.post2.devN), its fallback for
# a tarball (0.1.0), and a release's label on other code.
MISLEADING = ("0.1.12.post2.dev5", "0.1.0", "0.1.16", "0.1.13")


def honest_label(row: dict) -> str:
    """The version setuptools_scm gives this code: the tag's, or N commits past a tag (`git describe`)."""
    if "tag" in row:
        return row["tag"].lstrip("v")
    if not row["describe"]:  # no tag behind it: setuptools_scm counts from nothing
        return "0.1.dev1"
    described = re.fullmatch(r"v(.+)-(\d+)-g([0-9a-f]+)", row["describe"])
    assert described is not None, row["describe"]
    tag, commits, sha = described.groups()
    bumped = re.sub(r"(\d+)$", lambda m: str(int(m.group(1)) + 1), tag.replace("-rc", "rc"))
    return f"{bumped}.dev{commits}+g{sha}"
