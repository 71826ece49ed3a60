"""The log reader's order of known-bug signatures is a property, not a comment: each record's sample traceback
(knowledge/bugs.py LogSignature.sample) reads as its own bug in `mhcdoctor log`, alone and with every other
signature's frames on the same stack, where a catch-all (DeepGEMM's "any error under tf32_hc_prenorm_gemm") would
take another bug's line if it were tried first."""

from __future__ import annotations

import json
import re

import doctor
import pytest

from mhcdoctor.knowledge.bugs import BUGS, LogSignature

SIGNATURES = [(bug.id, i, log) for bug in BUGS for i, log in enumerate(bug.log)]
IDS = [f"{bug_id}-{i}" for bug_id, i, _ in SIGNATURES]


def fatal_findings(tmp_path, lines: list[str]) -> list[str | None]:
    log = tmp_path / "vllm.log"
    log.write_text("Traceback (most recent call last):\n" + "\n".join(lines) + "\n")
    done = doctor.run("log", str(log), "--json")
    return [f["finding"] for f in json.loads(done.stdout)["fatal"]]


def frames_of_the_others(own: LogSignature) -> list[str]:
    return [line for _, _, log in SIGNATURES if log is not own for line in log.sample[:-1]]


@pytest.mark.parametrize(("bug_id", "index", "log"), SIGNATURES, ids=IDS)
def test_each_records_sample_reads_as_its_own_bug(tmp_path, bug_id, index, log):
    assert log.sample, f"{bug_id}: log signature {index} has no sample"
    assert fatal_findings(tmp_path, list(log.sample)) == [bug_id]


@pytest.mark.parametrize(("bug_id", "index", "log"), SIGNATURES, ids=IDS)
def test_each_sample_under_every_other_signatures_frames_still_reads_as_its_own_bug(tmp_path, bug_id, index, log):
    assert fatal_findings(tmp_path, [*frames_of_the_others(log), *log.sample]) == [bug_id]


def test_the_catch_all_is_among_the_samples_and_would_take_other_bugs_lines():
    """The test above can fail: the fallback's pattern matches another bug's error line under its frames."""
    fallback = next(log for _, _, log in SIGNATURES if log.fallback)
    others = [log for _, _, log in SIGNATURES if not log.fallback and log.sample]
    taken = [log.sample[-1] for log in others if re.search(fallback.text, log.sample[-1])]
    assert len(taken) >= 3, taken
