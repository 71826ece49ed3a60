"""The support bundle: it extracts with plain tar, its JSON validates, its size is bounded, and reading one is safe."""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import subprocess
import tarfile
import tempfile
from importlib.resources import files as package_files
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from triage_docs import rocm_report, variant

from mhcdoctor import bundle
from mhcdoctor.bundle import build_files, read_bundle, write_bundle
from mhcdoctor.errors import InputError
from mhcdoctor.redact import Identity, redact

SCHEMAS = package_files("mhcdoctor") / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def _bundle(tmp_path: Path, doc: dict | None = None, limit: int = bundle.DEFAULT_LIMIT) -> Path:
    redacted, record = redact(doc or rocm_report(), Identity())
    path = tmp_path / "report.tar.gz"
    write_bundle(path, build_files(redacted, "# report\n", record.to_dict(), limit=limit))
    return path


def _extract(path: Path, into: Path) -> Path:
    into.mkdir()
    subprocess.run(["tar", "xzf", str(path), "-C", str(into)], check=True)
    return into / "mhcdoctor-report"


def test_the_bundle_extracts_with_tar_into_one_folder(tmp_path):
    root = _extract(_bundle(tmp_path), tmp_path / "out")
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert found == [
        "manifest.json",
        "probes/aiter.import.json",
        "probes/gpu.kfd.json",
        "redactions.json",
        "report.json",
        "report.md",
    ]


def test_every_json_file_validates_against_the_published_schemas(tmp_path):
    root = _extract(_bundle(tmp_path), tmp_path / "out")
    jsonschema.validate(json.loads((root / "report.json").read_text()), _schema("check"))
    bundle_schema = _schema("bundle")
    jsonschema.validate(json.loads((root / "manifest.json").read_text()), bundle_schema)
    jsonschema.validate(json.loads((root / "redactions.json").read_text()), _schema("redactions"))
    probe_file = {"$ref": "#/$defs/probe_file", "$defs": bundle_schema["$defs"]}
    for path in (root / "probes").iterdir():
        jsonschema.validate(json.loads(path.read_text()), probe_file)


def test_the_manifest_holds_each_files_sha256(tmp_path):
    root = _extract(_bundle(tmp_path), tmp_path / "out")
    manifest = json.loads((root / "manifest.json").read_text())
    sums = {f["path"]: f["sha256"] for f in manifest["files"]}
    assert sums == {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in sums}
    assert len(sums) == 5


def test_a_probe_file_keeps_the_raw_output_and_timing(tmp_path):
    root = _extract(_bundle(tmp_path), tmp_path / "out")
    probe = json.loads((root / "probes" / "aiter.import.json").read_text())
    assert (probe["status"], probe["seconds"]) == ("error", 1.5)
    assert "KeyError: 'libamd_smi'" in probe["evidence"][1]


def test_the_size_is_bounded_and_the_cut_is_recorded(tmp_path):
    huge = variant(rocm_report(), **{"probes.1.evidence": ["stderr: " + "x" * 3990] * 100})
    limit = 256 << 10
    root = _extract(_bundle(tmp_path, huge, limit=limit), tmp_path / "out")
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert total <= limit
    manifest = json.loads((root / "manifest.json").read_text())
    assert {t["path"] for t in manifest["truncated"]} == {"probes/aiter.import.json", "report.json"}


def test_a_report_without_probes_still_makes_a_bundle(tmp_path):
    root = _extract(_bundle(tmp_path, variant(rocm_report(), probes=[])), tmp_path / "out")
    assert not (root / "probes").exists()
    assert json.loads((root / "report.json").read_text())["verdict"] == "fail"


def test_no_user_name_goes_into_the_tar_headers(tmp_path):
    with tarfile.open(_bundle(tmp_path)) as tar:
        owners = {(m.uname, m.gname, m.uid, m.gid) for m in tar.getmembers()}
    assert owners == {("", "", 0, 0)}


def test_reading_a_bundle_back_gives_the_report(tmp_path):
    read = read_bundle(_bundle(tmp_path))
    assert read.report["facts"]["aiter"]["version"] == "0.1.13"
    assert read.manifest["redacted"] is True


def _tar_gz(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes]) -> Path:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for member in members:
            content = data.get(member.name)
            if content is not None:
                member.size = len(content)
            tar.addfile(member, io.BytesIO(content) if content is not None else None)
    path.write_bytes(gzip.compress(raw.getvalue()))
    return path


def test_a_member_that_climbs_out_of_the_folder_is_refused(tmp_path):
    path = _tar_gz(tmp_path / "evil.tar.gz", [tarfile.TarInfo("../../etc/cron.d/x")], {"../../etc/cron.d/x": b"x"})
    with pytest.raises(InputError, match=r"unsafe path '\.\./\.\./etc/cron\.d/x'"):
        read_bundle(path)


def test_a_symlink_member_is_refused(tmp_path):
    link = tarfile.TarInfo("mhcdoctor-report/report.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with pytest.raises(InputError, match="link or special file"):
        read_bundle(_tar_gz(tmp_path / "link.tar.gz", [link], {}))


def test_a_gzip_bomb_stops_at_the_stream_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(bundle, "_MAX_STREAM_BYTES", 1 << 20)
    member = tarfile.TarInfo("mhcdoctor-report/report.json")
    path = _tar_gz(tmp_path / "bomb.tar.gz", [member], {member.name: b"0" * (4 << 20)})
    with pytest.raises(InputError, match="decompresses to more than"):
        read_bundle(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a tarball at all", "is not a readable .tar.gz"),
        (gzip.compress(b"plain text, gzipped"), "is not a readable .tar.gz"),
    ],
    ids=["not-gzip", "gzip-not-tar"],  # gzip's header holds the time: ids from bytes differ between xdist workers
)
def test_a_malformed_bundle_is_one_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.tar.gz"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_bundle(path)


def test_a_truncated_download_is_one_clear_error(tmp_path):
    path = _bundle(tmp_path)
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(InputError, match="is not a readable .tar.gz"):
        read_bundle(path)


def test_a_changed_report_no_longer_matches_the_manifest(tmp_path):
    root = _extract(_bundle(tmp_path), tmp_path / "out")
    doc = json.loads((root / "report.json").read_text())
    doc["facts"]["aiter"]["sqrsum_fix"] = "present"
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    files["report.json"] = json.dumps(doc).encode()
    write_bundle(tmp_path / "edited.tar.gz", files)
    with pytest.raises(InputError, match="report.json does not match its sha256"):
        read_bundle(tmp_path / "edited.tar.gz")


@functools.cache
def _real_bundle_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return _bundle(Path(tmp)).read_bytes()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["bytes", "gzip", "cut"]), data=st.binary(max_size=2048), cut=st.integers(0, 4096))
def test_any_damaged_file_is_an_input_error_and_nothing_else(tmp_path, kind, data, cut):
    """Random bytes, a gzip of random bytes, a real bundle cut short: one InputError line, never another exception."""
    real = _real_bundle_bytes()
    content = {"bytes": data, "gzip": gzip.compress(data), "cut": real[: min(cut, len(real) - 1)]}[kind]
    path = tmp_path / "damaged.tar.gz"
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        read_bundle(path)
    assert "\n" not in str(error.value)
