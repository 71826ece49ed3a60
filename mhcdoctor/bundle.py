"""The support bundle: one tar.gz a user attaches to an issue and an engineer replays.

Layout (all under one folder, `mhcdoctor-report/`, so extracting it never scatters files):
    report.json        the check/1 document (redacted unless --no-redact)
    report.md          the Markdown report, as `mhcdoctor report` prints it
    probes/<name>.json each probe's raw output (evidence: stdout/stderr tails), status, error and timing
    redactions.json    what was redacted (mhcdoctor.redactions/1)
    manifest.json      mhcdoctor.bundle/1: every other file's size and sha256, and what was truncated to fit

Design constraints: the size is bounded (long strings are cut in the middle and the cut is recorded in the
manifest); a missing or broken probe is a file saying so, never a failed bundle. Reading one back is safe:
nothing is extracted to disk, member names must be plain relative paths, and the whole decompressed tar is
read into memory under a cap near the writer's own bound (_MAX_STREAM_BYTES). Before tarfile sees it, our own
bounded scan walks every 512-byte header: only regular files and folders pass (links, devices, GNU sparse members
and GNU long-name records are refused, so a hole cannot expand), and a pax header must be small and made only of
well-formed records with known keys and short values (older Pythons' tarfile hangs on a crafted pax header,
CVE-2024-6232). A damaged bundle is one InputError line.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import io
import json
import re
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from mhcdoctor import __version__
from mhcdoctor.clock import created_now
from mhcdoctor.documents.bundle import SCHEMA, BundleManifest, Truncation
from mhcdoctor.errors import InputError
from mhcdoctor.outfiles import write_file
from mhcdoctor.text import MARK, cut
from mhcdoctor.userfiles import parse_json, read_user_bytes

ROOT = "mhcdoctor-report"
DEFAULT_LIMIT = 4 << 20  # uncompressed bytes for the whole bundle: ample for a report, small enough to attach

# Reading limits: a bundle we wrote is far below them (its files total about DEFAULT_LIMIT); anything above is
# damaged or hostile.
_MAX_MEMBERS = 1000
_MAX_STREAM_BYTES = 3 * DEFAULT_LIMIT  # the decompressed tar, headers included
_MAX_MEMBER_BYTES = 2 * DEFAULT_LIMIT
_MAX_PAX_BYTES = 8 << 10
_MAX_PAX_VALUE = 1024
# Pax keys refused: sparse maps (GNU.sparse.*, holes that cost nothing to store), size overrides and link targets.
# Others (path, mtime, bsdtar's LIBARCHIVE.* and SCHILY.*) pass when short and well-formed.
_PAX_REFUSED = re.compile(rb"GNU\.sparse\.|size$|linkpath$|realsize", re.IGNORECASE)
_PAX_KEY = re.compile(rb"[A-Za-z0-9._-]{1,64}")
_REGULAR = (b"0", b"\0", b"7")  # regular file (7: contiguous, read as regular)
_FOLDER = b"5"
_PAX = (b"x", b"g")
_MIN_STRING = 200  # strings are never cut shorter than this


@dataclass
class Bundle:
    """A bundle read back: its files by path (relative to the bundle's folder) and the parsed documents.

    Both are untyped JSON from the user's file: read_bundle_data checks the manifest's file list and hashes, and
    reportfile.validate_report checks the report before anything reads it as a check/1 document."""

    files: dict[str, bytes]
    manifest: dict[str, object]
    report: dict[str, object]


def build_files(
    document: Mapping[str, object], markdown: str, redactions: Mapping[str, object], limit: int = DEFAULT_LIMIT
) -> dict[str, bytes]:
    """Every file of the bundle, manifest.json included, within `limit` bytes (before compression).

    `document` is the check/1 document (documents.check.CheckDocument): the bundle reads only its probes."""
    truncated: list[Truncation] = []
    listed = document.get("probes")
    probes = [p for p in listed if isinstance(p, dict)] if isinstance(listed, list) else []
    budget_probes = limit // 2 // max(1, len(probes))
    files: dict[str, bytes] = {}
    for name, probe in zip(_probe_file_names(probes), probes, strict=True):
        record = {
            "name": probe.get("name"),
            "status": probe.get("status"),
            "seconds": probe.get("seconds"),
            "source": probe.get("source"),
            "error": probe.get("error"),
            "evidence": probe.get("evidence", []),
            "data": probe.get("data", {}),
        }
        files[name] = _fit_json(record, budget_probes, name, truncated)
    files["report.json"] = _fit_json(document, limit * 3 // 8, "report.json", truncated)
    files["report.md"] = _fit_text(markdown, limit // 8, "report.md", truncated)
    files["redactions.json"] = _dump(redactions)
    manifest: BundleManifest = {
        "schema": SCHEMA,
        "mhcdoctor_version": __version__,
        "created": created_now(),
        "redacted": bool(redactions.get("redacted")),
        "limit_bytes": limit,
        "files": [
            {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for path, data in sorted(files.items())
        ],
        "truncated": truncated,
    }
    files["manifest.json"] = _dump(manifest)
    return files


def write_bundle(path: str | Path, files: dict[str, bytes], root: str = ROOT, replace: bool = False) -> int:
    """Write `files` as a tar.gz at `path`, under the folder `root`; returns its size. No user, group or host name
    goes into the headers. Written whole or not at all, and only over a regular file when `replace`
    (mhcdoctor.outfiles): anything else at `path` is an InputError."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        now = int(_dt.datetime.now(_dt.timezone.utc).timestamp())
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:  # no file name in the gzip header
        gz.write(raw.getvalue())
    write_file(path, out.getvalue(), "bundle", replace)
    return len(out.getvalue())


def is_bundle_data(data: bytes) -> bool:
    """Gzip data (by its magic bytes), whatever the file's name."""
    return data[:2] == b"\x1f\x8b"


def read_bundle(path: str | Path) -> Bundle:
    """Read a bundle without extracting it; InputError (one line) when it is unreadable, unsafe or damaged."""
    return read_bundle_data(read_user_bytes(path, "bundle", InputError, _MAX_STREAM_BYTES), str(path))


def read_bundle_data(data: bytes, label: str) -> Bundle:
    """A bundle already read (from a file, a pipe or stdin) and labelled `label` in messages."""
    files = _read_members(data, label)
    where = f"bundle {label}"
    manifest = _parse(files, "manifest.json", where)
    report = _parse(files, "report.json", where)
    listed = manifest.get("files")
    if not isinstance(listed, list):
        raise InputError(f"{where}: manifest.json has no list of files")
    for entry in listed:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise InputError(f"{where}: manifest.json lists a malformed entry")
        member = files.get(entry["path"])
        if member is None:
            raise InputError(f"{where}: {entry['path']} is listed in manifest.json but missing")
        if hashlib.sha256(member).hexdigest() != entry.get("sha256"):
            raise InputError(
                f"{where}: {entry['path']} does not match its sha256 in manifest.json (changed or damaged)"
            )
    return Bundle(files, manifest, report)


def _read_members(compressed: bytes, label: str) -> dict[str, bytes]:
    where = f"bundle {label}"
    files: dict[str, bytes] = {}
    try:
        data = _decompress(compressed)
        _scan_headers(data)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for count, member in enumerate(tar, start=1):
                if count > _MAX_MEMBERS:
                    raise InputError(f"more than {_MAX_MEMBERS} files")
                name = _safe_name(member.name, where)
                if member.isdir():
                    continue
                if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE) or member.sparse:
                    raise InputError(f"{member.name} is a link or special file; refusing it")
                if member.size > _MAX_MEMBER_BYTES:
                    raise InputError(f"{member.name} is larger than {_MAX_MEMBER_BYTES >> 20} MiB")
                handle = tar.extractfile(member)
                body = handle.read(_MAX_MEMBER_BYTES + 1) if handle else b""
                if len(body) != member.size:
                    raise InputError(f"{member.name} is cut short or longer than its header says")
                files[name] = body
    except InputError as exc:
        raise InputError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
    except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(f"{where} is not a readable .tar.gz: {reason}") from None
    return _strip_root(files, where)


def _decompress(compressed: bytes) -> bytes:
    """The decompressed tar, read in chunks and refused past _MAX_STREAM_BYTES (a gzip bomb stops here)."""
    chunks, total = [], 0
    with gzip.GzipFile(fileobj=io.BytesIO(compressed), mode="rb") as gz:
        while chunk := gz.read(1 << 20):
            total += len(chunk)
            if total > _MAX_STREAM_BYTES:
                raise InputError(f"decompresses to more than {_MAX_STREAM_BYTES >> 20} MiB")
            chunks.append(chunk)
    return b"".join(chunks)


def _scan_headers(data: bytes) -> None:
    """Walk the tar's 512-byte headers ourselves, in bounded time, and refuse what tarfile must never parse."""
    pos = 0
    while pos + 512 <= len(data):
        header = data[pos : pos + 512]
        if header == bytes(512):
            return
        kind = header[156:157]
        size = _octal(header[124:136])
        if kind in _PAX:
            if size > _MAX_PAX_BYTES:
                raise InputError(f"a pax header of {size} bytes (at most {_MAX_PAX_BYTES} expected); refusing it")
            _check_pax(data[pos + 512 : pos + 512 + size])
        elif kind not in _REGULAR and kind != _FOLDER:
            what = {b"S": "a GNU sparse member", b"L": "a GNU long name", b"K": "a GNU long link"}.get(kind)
            raise InputError(f"{what or 'a link or special file'} (tar type {kind!r}); refusing it")
        pos += 512 + (size + 511) // 512 * 512
    # Running off the end is tarfile's to report (a truncated download).


def _octal(field: bytes) -> int:
    text = field.rstrip(b"\0 ").strip()
    if not text:
        return 0
    if not re.fullmatch(rb"[0-7]{1,12}", text):
        raise InputError("a tar header with a malformed size field; refusing it")
    return int(text, 8)


def _check_pax(body: bytes) -> None:
    """Every record is `LENGTH KEY=VALUE\n`, LENGTH its exact size, KEY known, VALUE short: nothing to backtrack on."""
    pos = 0
    while pos < len(body):
        if body[pos:] == bytes(len(body) - pos):
            return  # padding
        space = body.find(b" ", pos, pos + 8)
        digits = body[pos:space] if space > 0 else b""
        if not digits.isdigit() or digits.startswith(b"0"):
            raise InputError("a malformed pax header; refusing it")
        end = pos + int(digits)
        record = body[space + 1 : end]
        key, eq, value = record.partition(b"=")
        if end > len(body) or not record.endswith(b"\n") or not eq or len(value) > _MAX_PAX_VALUE + 1:
            raise InputError("a malformed pax header; refusing it")
        if not _PAX_KEY.fullmatch(key) or _PAX_REFUSED.match(key):
            raise InputError(f"a pax header with key {key[:40].decode('ascii', 'replace')!r}; refusing it")
        pos = end


def _safe_name(name: str, where: str) -> str:
    """A member name as a plain relative path; absolute paths and `..` would write outside when extracted."""
    path = PurePosixPath(name)
    if name.startswith(("/", "\\")) or path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise InputError(f"{where}: unsafe path {name!r} (absolute or with '..'); refusing it")
    return str(path)


def _strip_root(files: dict[str, bytes], where: str) -> dict[str, bytes]:
    """Paths relative to the bundle's one top folder (or as they are, for a bundle packed flat)."""
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and not any(name == next(iter(tops)) for name in files):
        top = next(iter(tops))
        return {str(PurePosixPath(name).relative_to(top)): data for name, data in files.items()}
    if not files:
        raise InputError(f"{where} is empty")
    return files


def _parse(files: dict[str, bytes], name: str, where: str) -> dict[str, object]:
    if name not in files:
        raise InputError(f"{where} has no {name}; is it an mhcdoctor bundle?")
    try:
        doc = parse_json(files[name].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{where}: {name} is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{where}: {name} must hold a JSON object")
    return doc


def _probe_file_names(probes: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for probe in probes:
        base = re.sub(r"[^A-Za-z0-9._-]", "_", str(probe.get("name") or "probe")).strip(".") or "probe"
        name, n = f"probes/{base}.json", 2
        while name in names:
            name, n = f"probes/{base}-{n}.json", n + 1
        names.append(name)
    return names


def _dump(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _fit_json(obj: object, budget: int, path: str, truncated: list[Truncation]) -> bytes:
    """`obj` as JSON within `budget` bytes: the longest strings are cut in the middle, halving until it fits."""
    data = _dump(obj)
    cap = max((len(s) for s in _strings(obj)), default=0)
    while len(data) > budget and cap > _MIN_STRING:
        cap = max(_MIN_STRING, cap // 2)
        data = _dump(_cut_strings(obj, cap))
    if len(data) > budget:
        truncated.append({"path": path, "note": f"still {len(data)} bytes with every string cut to {cap} characters"})
    elif cap and data != _dump(obj):
        truncated.append({"path": path, "note": f"strings longer than {cap} characters cut in the middle"})
    return data


def _fit_text(text: str, budget: int, path: str, truncated: list[Truncation]) -> bytes:
    data = text.encode("utf-8")
    if len(data) <= budget:
        return data
    truncated.append({"path": path, "note": f"cut to {budget} bytes"})
    # text.cut's style, counted in bytes: the head, then MARK (a character cut in two is dropped)
    return (data[: max(0, budget - len(MARK.encode()))].decode("utf-8", errors="ignore") + MARK).encode("utf-8")


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def _cut_strings(obj: Any, cap: int) -> Any:
    if isinstance(obj, str):
        return cut(obj, cap, keep="middle")  # the manifest's `truncated` says which file and to how many characters
    if isinstance(obj, dict):
        return {k: _cut_strings(v, cap) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_cut_strings(v, cap) for v in obj]
    return obj
