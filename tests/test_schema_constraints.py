"""The constraints the published schemas put on a document's members beyond their JSON types (enums from the
documents' Literal types, required members): a document the doctor wrote validates, and the same document with one
member broken is rejected, so a user who validates our JSON is told when a value is not one we write."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import doctor
import jsonschema
import pytest
from fakemachine import Machine, check_json

REPO = Path(__file__).resolve().parents[1]
CPU = ["--hidden", "256", "--device", "cpu"]


def schema(name: str) -> dict:
    return json.loads((REPO / "mhcdoctor/schemas" / f"{name}.schema.json").read_text())


def document(proc) -> dict:
    assert proc.stderr == "" or proc.returncode in (0, 1, 3), proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """check, explain --from, diff and merge's documents, as the doctor writes them on a fake machine."""
    tmp = tmp_path_factory.mktemp("documents")
    machine = Machine(tmp)
    check, _ = check_json(machine)
    a, b = tmp / "a.json", tmp / "b.json"
    a.write_text(json.dumps(check))
    other = copy.deepcopy(check)
    other["verdict"] = "fail" if check["verdict"] != "fail" else "ok"
    b.write_text(json.dumps(other))
    return {
        "check": check,
        "explain": document(doctor.run("explain", "--json", "--from", str(a), cwd=tmp)),
        "diff": document(doctor.run("diff", str(a), str(b), "--json", cwd=tmp)),
        "fleet": document(doctor.run("merge", str(a), str(b), "--json", "--fail-on", "never", cwd=tmp)),
        "models": document(doctor.run("models", "--json", cwd=tmp)),
    }


@pytest.fixture(scope="module")
def verified(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """verify's document: the torch path on the CPU (a real child process)."""
    tmp = tmp_path_factory.mktemp("verify")
    return document(doctor.run("verify", *CPU, "--path", "torch", "--tokens", "7", "--json", cwd=tmp))


def setter(*keys: str | int, value: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value

    return change


def dropper(*keys: str | int) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        for key in keys[:-1]:
            doc = doc[key]
        del doc[keys[-1]]

    return change


def first_op(doc: dict) -> str:
    return next(iter(doc["ops"]))


# (document, what is broken, how): each a constraint the hand-written schemas had and the generated ones regained.
BROKEN = [
    ("check", "mode", setter("mode", value="quick")),
    ("check", "verdict", setter("verdict", value="good")),
    ("check", "a probe's status", setter("probes", 0, "status", value="fine")),
    ("check", "host without hostname", dropper("host", "hostname")),
    ("check", "host without python", dropper("host", "python")),
    ("check", "a model's verdict", setter("models", 0, "verdict", value="warn")),
    ("check", "a finding's severity", setter("findings", 0, "severity", value="error")),
    ("check", "a finding's op", setter("findings", 0, "ops", value=["mhc_prenorm"])),
    ("check", "vLLM's build", setter("facts", "vllm", "build", value="metal")),
    ("check", "a finding's id", setter("findings", 0, "id", value="No GPU")),
    ("explain", "verdict", setter("verdict", value="degradedish")),
    ("explain", "an op's path", lambda doc: doc["ops"][first_op(doc)].__setitem__("path", "cuda")),
    ("explain", "an op's preferred path", lambda doc: doc["ops"][first_op(doc)].__setitem__("preferred", "cuda")),
    ("diff", "a difference's section", setter("differences", 0, "section", value="machine")),
    ("fleet", "source", setter("source", value="ssh")),
    ("fleet", "verdict", setter("verdict", value="mixed")),
    ("fleet", "a node's status", setter("nodes", 0, "status", value="ok")),
    ("fleet", "a node's verdict", setter("nodes", 0, "verdict", value="checked")),
    # minimums (documents.vocabulary's Count, Positive, NonNegative)
    ("check", "negative seconds", setter("seconds", value=-0.5)),
    ("check", "a probe's negative seconds", setter("probes", 0, "seconds", value=-1)),
    ("check", "a model of hidden size 0", setter("models", 0, "model", "hidden_size", value=0)),
    ("explain", "hc_mult 0", setter("model", "hc_mult", value=0)),
    ("fleet", "a negative count", setter("counts", "nodes", value=-1)),
    ("models", "hidden size 0", setter("models", 0, "hidden_size", value=0)),
    ("models", "0 layers", setter("models", 0, "num_layers", value=0)),
]
VERIFY_BROKEN = [
    ("verdict", setter("verdict", value="pass")),
    ("a row's status", setter("results", 0, "status", value="ok")),
    ("a row's op", setter("results", 0, "op", value="mhc_head")),
    ("a path's status", setter("paths", 0, "status", value="pass")),
    ("a token count of 0", setter("tokens", value=[0])),
    ("a row of 0 tokens", setter("results", 0, "tokens", value=0)),
    ("a row of negative seconds", setter("results", 0, "seconds", value=-1.0)),
]


def rejected(good: dict, name: str, change: Callable[[dict], None]) -> list[str]:
    """What the published schema says of `good` with `change` made (it says nothing of `good` itself)."""
    validator = jsonschema.Draft202012Validator(schema(name))
    assert list(validator.iter_errors(good)) == []
    bad = copy.deepcopy(good)
    change(bad)
    assert bad != good
    return [e.message for e in validator.iter_errors(bad)]


@pytest.mark.parametrize(("name", "what", "change"), BROKEN, ids=[f"{n}: {w}" for n, w, _ in BROKEN])
def test_a_document_with_a_value_we_never_write_is_rejected(written, name, what, change):
    assert rejected(written[name], name, change) != []


@pytest.mark.slow
@pytest.mark.parametrize(("what", "change"), VERIFY_BROKEN, ids=[w for w, _ in VERIFY_BROKEN])
def test_a_verify_document_with_a_value_we_never_write_is_rejected(verified, what, change):
    assert rejected(verified, "verify", change) != []


@pytest.mark.slow
def test_a_passing_row_has_no_reason_and_any_other_row_may(verified):
    """verify/1's rule that `reason` depends on `status` (documents.verify's NullWhen): null on a pass."""
    at = next(i for i, r in enumerate(verified["results"]) if r["status"] == "pass")
    assert rejected(verified, "verify", setter("results", at, "reason", value="it was slow")) != []

    def failed(doc: dict) -> None:
        doc["results"][at] |= {"status": "fail", "reason": "out by 0.5"}

    assert rejected(verified, "verify", failed) == []


def test_a_redactions_document_with_a_kind_we_never_write_is_rejected(written):
    """redactions/1's kinds: what redaction replaced (the home folder, user and host names, secrets, GPU UUIDs)."""
    from mhcdoctor.redact import Identity, redact

    identity = Identity.of_this_machine({"HOME": "/home/ada", "USER": "ada"})
    doc = copy.deepcopy(written["check"]) | {"env": {"HF_TOKEN": "hf_" + "x" * 30}}
    doc["host"] |= {"user": "ada", "cwd": "/home/ada/src"}
    _, record = redact(doc, identity)
    redactions = record.to_dict()
    assert {r["kind"] for r in redactions["replaced"]} >= {"home", "user"}
    assert rejected(redactions, "redactions", setter("replaced", 0, "kind", value="email")) != []
    assert rejected(redactions, "redactions", setter("replaced", 0, "strings", value=0)) != []


def test_a_bundle_manifest_with_a_hash_that_is_no_sha256_is_rejected(written):
    from mhcdoctor.bundle import build_files

    files = build_files(written["check"], "# report\n", {"schema": "mhcdoctor.redactions/1"})
    manifest = json.loads(files["manifest.json"])
    assert rejected(manifest, "bundle", setter("files", 0, "sha256", value="0" * 63 + "G")) != []
    assert rejected(manifest, "bundle", setter("files", 0, "bytes", value=-1)) != []
    assert rejected(manifest, "bundle", setter("limit_bytes", value=0)) != []


@pytest.fixture(scope="module")
def benched(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """bench's document: the torch path on the CPU, one token count (real child processes)."""
    tmp = tmp_path_factory.mktemp("bench")
    args = ["--model", "deepseek-v4-flash", *CPU, "--path", "torch", "--tokens", "8", "--repeats", "3", "--json"]
    return document(doctor.run("bench", *args, cwd=tmp))


BENCH_BROKEN = [
    ("timer", setter("timer", value="wall-clock")),
    ("the peak's source", setter("peak", "how", value="guessed")),
    ("a peak of 0 TB/s", setter("peak", "tb_per_s", value=0)),
    ("verdict", setter("verdict", value="fast")),
    ("a row's status", setter("results", 0, "status", value="ran")),
    ("a row's op", setter("results", 0, "op", value="copy")),
    ("a row's negative time", setter("results", 0, "median_ms", value=-0.1)),
    ("a row of 0 runs", setter("results", 0, "runs", value=0)),
    ("a token count of 0", setter("tokens", value=[0])),
]


@pytest.mark.slow
@pytest.mark.parametrize(("what", "change"), BENCH_BROKEN, ids=[w for w, _ in BENCH_BROKEN])
def test_a_bench_document_with_a_value_we_never_write_is_rejected(benched, what, change):
    assert rejected(benched, "bench", change) != []
