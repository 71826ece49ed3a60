"""Redaction: what may leave the user's machine in a report or bundle.

Design constraints:
- Pure: `redact(document, identity)` walks every string of a check/1 document (probe evidence, stderr tails,
  paths, keys that are not plain identifiers), not only known fields, and returns a new document plus a record of
  what it replaced. `Identity.of_this_machine()` is the only part that looks at the machine.
- Environment variables: only the allowlist of mhcdoctor.environment is kept (`check` collects by it too);
  within it, any name that looks like a secret has its value masked.
- Identity: the home folder becomes `~`; user and host names become salted hashes (`user-1a2b3c4d5e6f`). The salt
  is random per report and never stored, so a pseudonym cannot be reversed by hashing guessed names; within one
  report a name always gives the same pseudonym. `mhcdoctor diff` compares facts, not names.
- A user or host name that is also one of the doctor's own words (user `vllm`, host `vllm-0` or `mi300x`) is
  replaced only where it stands as an identity: a path segment, a URL's host, after `@`, `host=`/`user=` fields.
- Secrets are masked even with `--no-redact` (which keeps home, user and host names): no triage step needs a
  token's value, so no flag un-masks them.
- Redact first, then cut: probes keep a large bound of output; redaction cuts evidence to its display length
  only after masking, so a secret split by the cut cannot ship in part.
- Secrets in free text (tokens in stderr, credentials in URLs) are masked by shape (SECRET_FORMS: every form, its
  source and an example; docs/secret-forms.md is generated from it), and the values of every secret-looking variable
  in the environment are masked wherever they appear. One table serves check (`mask_secrets`), report, merge and log.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import secrets as _secrets
import socket
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mhcdoctor.documents.bundle import REDACTIONS_SCHEMA, RedactionKind, RedactionsDocument
from mhcdoctor.environment import ENV_NAMES, ENV_PREFIXES, ENV_SUFFIXES, is_relevant_env
from mhcdoctor.text import cut

MASK = "[masked]"

# A variable whose name holds one of these words (case-insensitive) has its value masked.
SECRET_NAME_WORDS: tuple[str, ...] = (
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDS",
    "AUTH",
    "COOKIE",
    "SIGNATURE",
)
# ...and so does one that ends with one of these (DB_PWD; but PWD alone is the working folder).
SECRET_NAME_SUFFIXES: tuple[str, ...] = ("_PWD", "_PASS")
_SECRET_NAME = re.compile("|".join(SECRET_NAME_WORDS) + "|(?:" + "|".join(SECRET_NAME_SUFFIXES) + ")$", re.IGNORECASE)
# Query parameters whose value is a credential: ?access_token=..., &X-Amz-Signature=..., GitLab's ?private_token=...
SECRET_QUERY_PARAMS: tuple[str, ...] = (
    "access_token",
    "refresh_token",
    "id_token",
    "private_token",
    "token",
    "key",
    "api_key",
    "apikey",
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
    "client_secret",
    "secret",
    "password",
    "auth",
    "code",
)
_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
# A quote around a name or value, JSON-escaped or not: {\"api_key\": \"...\"} in a JSON string inside a log line.
_Q = r"(?:\\?['\"])?"
# A value: up to a space, quote, comma, semicolon or backslash (the start of a JSON escape); never a `[`, which opens a
# list (masked whole by its own pattern) or is the mask itself.
_VALUE = r"(?!\[)[^\s'\",;\\]+"
_ASSIGN = _Q + r"\s*[=:]\s*"  # `: `, `=`, `": `, `\": `
# A list's items, to its closing bracket; not the mask itself (`[masked]` after `=` is no list to mask again)
_LIST = r"(?!\[?masked\])[^\])\r\n]+"
# A key that names a secret, in any case and joined by _ - . to other words (`client_secret`, `db_password`,
# `aws_secret_access_key`, `private-token`), never inside a longer word (`tokenizer`, `max_tokens`). The lookahead
# finds the word once per key (linear: the key is read from its start only), then the key is taken whole.
_SECRET_KEY_WORDS = r"token|secret|password|passwd|passphrase|api[_-]?key|access[_-]?key|private[_-]?key"
_SECRET_KEY = (
    r"(?<![A-Za-z0-9_.-])(?=(?:[A-Za-z0-9_.-]*?[_.-])?(?i:" + _SECRET_KEY_WORDS + r")(?![A-Za-z0-9]))[A-Za-z0-9_.-]+"
)
_SECRET_KEY_ASSIGN = r"(" + _Q + _SECRET_KEY + _ASSIGN


@dataclass(frozen=True)
class SecretForm:
    """One form a secret is printed in, as the table in docs/secret-forms.md shows it and its test redacts it."""

    form: str
    example: str  # a line as a program prints it; `␤` stands for a line break
    masked: str  # what must not remain of it (parts separated by `␤`)
    source: str  # who prints it, or the secret-scanning rule (gitleaks, trufflehog) or format that defines it


# Every form of secret the doctor masks in free text (probe output, a library's error, a log line, a path), with its
# source: served to check's output, report, report --bundle, merge --bundle and log alike. Each row is a test.
SECRET_FORMS: tuple[SecretForm, ...] = (
    SecretForm("URL user and password", "https://alice:pa@ss/w0rd@git.example.com/r", "alice:pa@ss/w0rd",
               "trufflehog `uri`"),
    SecretForm("URL password, no user", "redis://:s3cretPASSWORD@cache:6379/0", "s3cretPASSWORD",
               "trufflehog `redis`"),
    SecretForm("URL token", "https://tokenvalue0abc@github.com/o/r.git", "tokenvalue0abc", "trufflehog `uri`"),
    SecretForm("Authorization header", "Authorization: Bearer abcdefgh12345678", "abcdefgh12345678",
               "gitleaks `curl-auth-header`"),
    SecretForm("bare Bearer token", "sent Bearer abcdefgh12345678 to it", "abcdefgh12345678",
               "gitleaks `curl-auth-header`"),
    SecretForm("Cookie header", "Cookie: session=abc123; csrftoken=def456", "session=abc123; csrftoken=def456",
               "RFC 6265 (a session cookie is a credential)"),
    SecretForm("Set-Cookie header", "< Set-Cookie: id=a3fWa8; Secure", "id=a3fWa8", "RFC 6265"),
    SecretForm("secret-named variable", "VLLM_API_KEY=vk-0123456789", "vk-0123456789", "gitleaks `generic-api-key`"),
    SecretForm("secret-named variable, a list", "MY_AUTH=['abc one', 'def two']", "abc one␤def two",
               "gitleaks `generic-api-key`"),
    SecretForm("vLLM's non-default args, a list of API keys",
               "(APIServer pid=7) INFO [utils.py:233] non-default args: {'model': 'deepseek-ai/DeepSeek-V4-Flash', "
               "'api_key': ['sk-live-one', 'second key 2']}", "sk-live-one␤second key 2",
               "vLLM `log_non_default_args` (vllm/entrypoints/utils.py; `--api-key` is a `list[str]`)"),
    SecretForm("secret-named key, JSON", '{"password": "p4ssw0rdValue"}', "p4ssw0rdValue",
               "gitleaks `generic-api-key`"),
    SecretForm("secret-named key, JSON list", '{"api_key": ["abcDEF123456", "ghiJKL7890"]}',
               "abcDEF123456␤ghiJKL7890", "vLLM `jsonify_non_default_args`; gitleaks `generic-api-key`"),
    SecretForm("compound secret-named key, JSON", '{"client_secret": "s3cr3t value 9"}', "s3cr3t value 9",
               "OAuth 2.0 client credentials (RFC 6749 §2.3.1)"),
    SecretForm("secret-named key, JSON-escaped", 'log: {\\"api_key\\": \\"abcDEF123456\\"}', "abcDEF123456",
               "gitleaks `generic-api-key`"),
    SecretForm("secret-named key, YAML", "  db_password: hunter2hunter2", "hunter2hunter2",
               "gitleaks `generic-api-key`"),
    SecretForm("secret-named key, Python keyword", "LLM(model='m', api_key='abc123xyz789')", "abc123xyz789",
               "gitleaks `generic-api-key`"),
    SecretForm("AWS credentials file", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
               "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS CLI `~/.aws/credentials`; gitleaks `aws-access-token`"),
    SecretForm("value wrapped over two lines", "token=abcdefghijkl␤mnopq7rstuv", "abcdefghijkl␤mnopq7rstuv",
               "(a terminal's or logger's line width)"),
    SecretForm("token wrapped over two lines", "hf_ABCDEFGHIJKLMNOPQR␤STUVWXYZ0123",
               "hf_ABCDEFGHIJKLMNOPQR␤STUVWXYZ0123", "gitleaks `huggingface-access-token`"),
    SecretForm("command-line flag", "serve --api-key abcdef123456", "abcdef123456", "gitleaks `generic-api-key`"),
    SecretForm("Hugging Face CLI login", "huggingface-cli login --token abcdefghij123", "abcdefghij123",
               "huggingface_hub `huggingface-cli login --token`"),
    SecretForm("Ray's Redis password", "ray start --head --redis-password=5241590000000000", "5241590000000000",
               "Ray `ray start --redis-password`"),
    SecretForm("mysql -pPASSWORD", "mysql -u root -phunter2pw -h db.internal", "hunter2pw",
               "MySQL client `-p[password]` (no space)"),
    SecretForm("docker login -p", "docker login -u bob -p hunter6pw registry.example", "hunter6pw",
               "Docker CLI `docker login --password`"),
    SecretForm("curl -u user:password", "curl -u bob:hunter4pw https://h.example/x", "hunter4pw",
               "curl `-u, --user <user:password>`"),
    SecretForm(".netrc line", "machine h.example login bob password hunter5pw", "hunter5pw", "curl, git: `.netrc`"),
    SecretForm("Azure storage account key",
               "AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4+/ABCDEF==;EndpointSuffix=core.windows.net",
               "Zm9vYmFyYmF6cXV4+/ABCDEF==", "trufflehog `azure_storage`"),
    SecretForm("Azure shared access key",
               "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0a2V5dmFsdWU=",
               "c2VjcmV0a2V5dmFsdWU=", "Azure Service Bus and IoT Hub connection strings"),
    SecretForm("Azure SAS token", "SharedAccessSignature=sv%3D2024%26sig%3Dabc123", "sv%3D2024%26sig%3Dabc123",
               "Azure Storage connection strings"),
    SecretForm("S3 presigned URL",
               "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIDEXAMPLE&X-Amz-Signature=fe5f80f77d5f",
               "fe5f80f77d5f", "AWS Signature Version 4 query string"),
    SecretForm("GCS signed URL",
               "https://storage.googleapis.com/b/o?X-Goog-Credential=sa%40p.iam&X-Goog-Signature=0123abcdef",
               "0123abcdef", "Google Cloud Storage V4 signed URLs"),
    SecretForm("token in a query", "https://h.example/x?access_token=abcdef123456&y=1", "abcdef123456",
               "gitleaks `generic-api-key`"),
    SecretForm("GitLab private_token query", "GET https://gitlab.example.com/api/v4/projects?private_token=glsecret1234",
               "glsecret1234", "GitLab REST API `private_token` parameter"),
    SecretForm("token in a percent-encoded query",
               "redirect=https%3A%2F%2Fh.example%2Fcb%3Faccess_token%3Dabc123def%26x%3D1", "abc123def",
               "RFC 3986 percent-encoding of a query inside a query"),
    SecretForm("JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig-part_1",
               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig-part_1", "gitleaks `jwt`"),
    SecretForm("private key block",
               "-----BEGIN OPENSSH PRIVATE KEY-----␤b3BlbnNzaC1rZXk␤-----END OPENSSH PRIVATE KEY-----",
               "b3BlbnNzaC1rZXk", "gitleaks `private-key`"),
    SecretForm("Hugging Face token", "hf_ABCDEFGHIJKLMNOPQRSTUV", "hf_ABCDEFGHIJKLMNOPQRSTUV",
               "gitleaks `huggingface-access-token`"),
    SecretForm("GitHub token", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
               "gitleaks `github-pat`"),
    SecretForm("GitLab token", "glpat-ABCDEFGHIJKLMNOPQRST", "glpat-ABCDEFGHIJKLMNOPQRST", "gitleaks `gitlab-pat`"),
    SecretForm("Docker Hub token", "dckr_pat_ABCDEFGHIJKLMNOPQRSTUVWXYZa", "dckr_pat_ABCDEFGHIJKLMNOPQRSTUVWXYZa",
               "trufflehog `dockerhub`"),
    SecretForm("npm token", "npm_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "npm_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
               "gitleaks `npm-access-token`"),
    SecretForm("PyPI token", "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAw", "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAw",
               "gitleaks `pypi-upload-token`"),
    SecretForm("OpenAI/Anthropic-style key", "sk-proj-ABCDEFGHIJKLMNOPQRSTUV", "sk-proj-ABCDEFGHIJKLMNOPQRSTUV",
               "gitleaks `openai-api-key`, `anthropic-api-key`"),
    SecretForm("Stripe key", "charge with sk_live_EXAMPLEKEY0000000000 now", "sk_live_EXAMPLEKEY0000000000",
               "gitleaks `stripe-access-token`"),
    SecretForm("Google API key", "AIzaSyABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "AIzaSyABCDEFGHIJKLMNOPQRSTUVWXYZ0123456",
               "gitleaks `gcp-api-key`"),
    SecretForm("AWS access key id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "gitleaks `aws-access-token`"),
    SecretForm("Slack token", "xoxb-0000000000-ABCDEFGHIJ", "xoxb-0000000000-ABCDEFGHIJ", "gitleaks `slack-bot-token`"),
    SecretForm("Slack webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
               "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "gitleaks `slack-webhook-url`"),
)  # fmt: skip

_QUERY_PARAMS = "|".join(re.escape(p) for p in SECRET_QUERY_PARAMS)
# The patterns that mask SECRET_FORMS; each pattern's first group, if any, is kept.
SECRET_TEXT_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL),
    # https://user:pa@ss/word@host (the password runs to the last @ before the host), redis://:password@host (no
    # user), and https://TOKEN@host; user and password at most 256 characters each, so `://a` repeated is read in
    # linear time
    re.compile(r"(?<=://)[^\s/@:'\"]{0,256}:[^\s'\"]{0,256}(?=@[A-Za-z0-9.\[\]-]+(?:[:/?#\s'\",)]|$))"),
    re.compile(r"(?<=://)[^\s/@:'\"]{8,}(?=@[A-Za-z0-9.\[\]-]+)"),
    # Authorization: Bearer x, {'Authorization': 'Bearer x'}, authorization=Basic x
    re.compile(
        r"((?i:authorization|proxy-authorization)"
        + _Q
        + r"\s*[:=]\s*"
        + _Q
        + r"(?i:bearer|basic|token)?\s*)[^\s'\",}\\]+"
    ),
    re.compile(r"(\b(?i:bearer|basic)\s+)" + _TOKEN_CHARS + r"{8,}"),
    # Cookie: and Set-Cookie: headers carry sessions: the whole value, to the end of the line
    re.compile(r"(\b(?i:set-cookie|cookie)" + _Q + r"\s*:\s*" + _Q + r")[^\r\n'\"\\]+"),
    # A secret-named key's list value, whole: vLLM's `'api_key': ['k1', 'k2']`, JSON's `"api_key": ["k1"]`
    re.compile(_SECRET_KEY_ASSIGN + r"[\[(])" + _LIST),
    # ...its quoted value, to the closing quote (spaces and commas included): `"client_secret": "a b"`, `api_key='x'`
    re.compile(_SECRET_KEY_ASSIGN + r"(\\?['\"]))(?!\[masked\])(?:(?!\2)[^\r\n])+(?=\2)"),
    # ...and its bare value: `db_password: x`, `token=x`
    re.compile(_SECRET_KEY_ASSIGN + _Q + ")" + _VALUE),
    # HF_TOKEN=..., VLLM_API_KEY: ... (upper case only: "KeyError: 'aiter'" is evidence, not a secret); a list whole
    re.compile(r"(\b[A-Z0-9_]*(?:" + "|".join(SECRET_NAME_WORDS) + r")[A-Z0-9_]*" + _Q + r"\s*[=:]\s*[\[(])" + _LIST),
    re.compile(
        r"(\b[A-Z0-9_]*(?:" + "|".join(SECRET_NAME_WORDS) + r")[A-Z0-9_]*" + _Q + r"\s*[=:]\s*" + _Q + ")" + _VALUE
    ),
    re.compile(r"(\b[A-Z0-9_]+(?:" + "|".join(SECRET_NAME_SUFFIXES) + r")" + _Q + r"\s*[=:]\s*" + _Q + ")" + _VALUE),
    # Azure connection strings: AccountKey=..., SharedAccessKey=..., SharedAccessSignature=... (base64, to the `;`)
    re.compile(r"(\b(?i:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)[^;\s'\"\\]+"),
    # --api-key x, --token=x, --redis-password=x, --http-password x (never --tokenizer or --ssl-keyfile); read from
    # a flag's start only, so a run of dashes is read once
    re.compile(r"((?<![A-Za-z0-9-])(?i:--[a-z0-9-]*?(?:key|token|password|passwd|secret))[= ])\S+"),
    # mysql/mariadb -pPASSWORD (attached: a bare -p prompts); docker login -p PASSWORD
    re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\r\n]{0,512}?\s-p)[^\s'\"]+"),
    re.compile(r"(\bdocker\s+login\b[^\r\n]{0,512}?\s-p\s+)[^\s'\"]+"),
    # curl -u user:password, --user, --proxy-user, -U (curl's own `-uuser:pw` too)
    re.compile(r"(\bcurl\b[^\r\n]{0,512}?\s(?:-u|-U|--user|--proxy-user)\s*['\"]?[^\s:'\"]*:)[^\s'\"]+"),
    # .netrc: machine h login bob password PW
    re.compile(r"(\blogin\s+\S+\s+password\s+)\S+"),
    re.compile(r"([?&;](?i:" + _QUERY_PARAMS + r")=)[^&#\s'\"\\]+"),
    # a query inside a query, percent-encoded: %3Faccess_token%3D...%26
    re.compile(r"((?i:%3F|%26|%3B)(?i:" + _QUERY_PARAMS + r")(?i:%3D))(?:(?!%26|%23)[^&#\s'\"\\])+"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWT
    re.compile(r"\bhf_[A-Za-z0-9]{16,}"),  # Hugging Face
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),  # GitHub
    re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}"),  # GitLab
    re.compile(r"\bdckr_pat_[A-Za-z0-9_-]{20,}"),  # Docker Hub (trufflehog dockerhub)
    re.compile(r"\bnpm_[A-Za-z0-9]{30,}"),  # npm
    re.compile(r"\bpypi-[A-Za-z0-9_-]{30,}"),  # PyPI
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),  # OpenAI/Anthropic-style API keys
    re.compile(r"\b(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,}"),  # Stripe (gitleaks stripe-access-token)
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API keys
    re.compile(r"\bA[KS]IA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),  # Slack
    # Slack webhooks (gitleaks slack-webhook-url): the path after the host is the credential
    re.compile(r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/]+"),
)
# A secret wrapped over two lines (a terminal's width, a logger's): a next line that starts with a token's rest (six or
# more token characters with a digit, then a space, quote or the line's end) is masked too; `NAME=value` and words
# (`Traceback (most recent ...`) are not a token's rest. JSON-escaped line breaks (\n) count too.
_WRAPPED = re.compile(
    re.escape("[masked]") + r"(\r?\n|\\n)(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{6,}={0,2}(?=[\s'\",;]|\\n|$)"
)


# Values of the document's own vocabulary are never rewritten, so a user called "rocm" cannot corrupt the facts.
PROTECTED_WORDS: frozenset[str] = frozenset(
    {"rocm", "cuda", "cpu", "amd", "nvidia", "aiter", "tilelang", "triton", "torch", "unavailable", "ok", "degraded"}
    | {"fail", "present", "absent", "unknown", "info", "warn", "missing", "error", "timeout", "crash", "skipped"}
    | {"pass", "skip", "fast", "full", "kfd", "nvml", "amdsmi", "proc", "sysfs", "metadata", "vllm"}
    | {"xpu", "intel"}
)

# Shared account names identify nobody, and as words they are everywhere ("/srv/root", "root node"): their home
# becomes ~ and the report's user field is hashed, but the word is left alone elsewhere.
GENERIC_USERS: frozenset[str] = frozenset({"root", "nobody", "user", "admin", "ubuntu", "jovyan", "runner", "ec2-user"})

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")

# Secret values shorter than this are not searched for in text: "1" or "true" would mask half the report.
_MIN_SECRET_VALUE = 6
# A HOME here is a service account's, not a person's: replacing it would blur ordinary paths and reveal nothing.
_SYSTEM_FOLDERS = frozenset({"/", "/tmp", "/var", "/usr", "/opt", "/srv", "/nonexistent", "/dev/null"})


def _is_secret_value(value: Any) -> bool:
    """Worth masking wherever it appears: long enough, and not a path (XAUTHORITY=/home/a/.Xauthority names a file)."""
    return isinstance(value, str) and len(value) >= _MIN_SECRET_VALUE and not value.startswith(("/", "~", "./"))


def _is_personal_home(path: str) -> bool:
    return len(path) > 1 and path.rstrip("/") not in _SYSTEM_FOLDERS


def is_secret_name(name: str) -> bool:
    return _SECRET_NAME.search(name) is not None


def new_salt() -> bytes:
    """A fresh random salt for one report's pseudonyms; it is never stored or shown."""
    return _secrets.token_bytes(16)


def pseudonym(kind: str, value: str, salt: bytes) -> str:
    """`user-1a2b3c4d5e6f`: within one report (one salt) a name always gives the same pseudonym; without the salt,
    which is never stored, hashing guessed names cannot find it."""
    digest = hashlib.sha256(salt + f"mhcdoctor:{kind}:{value.lower()}".encode()).hexdigest()[:12]
    return f"{kind}-{digest}"


# Evidence is shown cut to this many characters (its tail), after redaction: probes keep much more
# (childproc.EVIDENCE_CHARS) so that a secret is masked whole before any cut.
DISPLAY_CHARS = 4000

# GPU UUIDs are permanent hardware ids: always pseudonymised, even with --no-redact. NVIDIA's GPU-/MIG- plus a UUID
# (nvidia-smi -L, CUDA_VISIBLE_DEVICES); AMD's GPU- plus 16 hex digits, the unique id ROCR_VISIBLE_DEVICES and
# HIP_VISIBLE_DEVICES accept (ROCm docs, "GPU isolation techniques"; rocm-smi --showuniqueid prints the same id).
_GPU_UUID = re.compile(
    r"\b(?:(?:GPU|MIG)-[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}|GPU-[0-9A-Fa-f]{16})(?![0-9A-Za-z])"
)

# Names of GPUs and the doctor's other words that a host may be named after (a host called "mi300x").
_PRODUCT_WORDS = frozenset(
    {"mi300x", "mi300a", "mi308x", "mi325x", "mi350x", "mi355x", "h100", "h200", "h20", "h800", "b200", "gb200"}
    | {"a100", "l40s", "deepseek", "gfx942", "gfx950", "sm90", "sm100", "hip", "nvcc", "hipcc", "pip", "python"}
)


def is_doctor_word(name: str, vocabulary: Iterable[str] = ()) -> bool:
    """The name is one of the doctor's words (the document's own, product names, and `vocabulary`: the text of the
    findings and rule sets, which the caller passes in), alone or numbered the way pods are (`vllm-0`, `aiter_2`)."""
    words = PROTECTED_WORDS | _PRODUCT_WORDS | frozenset(vocabulary)
    return name.lower() in words or re.sub(r"[-_.]?\d+$", "", name.lower()) in words


@dataclass(frozen=True)
class Identity:
    """What identifies the user on this machine: every form of it is replaced wherever it appears."""

    homes: tuple[str, ...] = ()  # "/home/alice" and its real path, if different
    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()  # "node17.cluster.example.com", "node17"
    secret_values: tuple[str, ...] = ()  # values of secret-looking environment variables

    @classmethod
    def of_this_machine(cls, environ: Mapping[str, str] | None = None) -> Identity:
        """This machine's identity: its home folder, user and host names, and its secret-looking variables' values."""
        env = os.environ if environ is None else environ
        homes = {env.get("HOME", ""), os.path.expanduser("~")}
        homes |= {os.path.realpath(h) for h in homes if h}
        users = {env.get("USER", ""), env.get("LOGNAME", ""), _safe(getpass.getuser)}
        # /home/alice names alice even where USER is unset (containers, sudo -E).
        users |= {
            os.path.basename(h.rstrip("/")) for h in homes if os.path.dirname(h.rstrip("/")) in ("/home", "/Users")
        }
        hostname = _safe(socket.gethostname)
        hosts = {hostname, _safe(socket.getfqdn)}
        hosts |= {h.split(".")[0] for h in hosts if h}
        secrets = {value for name, value in env.items() if is_secret_name(name)}
        return cls(
            homes=_usable(homes, _is_personal_home),
            users=_usable(users, lambda u: u.lower() != "unknown"),
            hosts=_usable(hosts, lambda h: h.lower() not in ("", "unknown", "localhost", "localhost.localdomain")),
            secret_values=_usable(secrets, _is_secret_value),
        )

    def joined(
        self, users: set[str], hosts: set[str] | None = None, secret_values: set[str] | None = None, root: bool = False
    ) -> Identity:
        """This identity and the names a document or a log shows: each user's /home and /Users folders with them
        (and /root with `root`, where the user named is root)."""
        homes = {f"{folder}/{user}" for user in users for folder in ("/home", "/Users")}
        homes |= {"/root"} if root else set()
        return Identity(
            homes=tuple(sorted(set(self.homes) | homes)),
            users=tuple(sorted(set(self.users) | users)),
            hosts=tuple(sorted(set(self.hosts) | (hosts or set()))),
            secret_values=tuple(sorted(set(self.secret_values) | (secret_values or set()))),
        )


@dataclass
class Redactions:
    """What redaction replaced: written to the bundle as redactions.json and shown by `report --preview`."""

    env_kept: int = 0
    env_dropped: int = 0  # names not on the allowlist; their names are not recorded either
    env_masked: list[str] = field(default_factory=list)
    counts: dict[RedactionKind, int] = field(default_factory=dict)  # kind -> how many strings were changed
    replacements: dict[RedactionKind, str] = field(default_factory=dict)  # kind -> what it was replaced with

    def note(self, kind: RedactionKind, replacement: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.replacements.setdefault(kind, replacement)

    def to_dict(self) -> RedactionsDocument:
        return {
            "schema": REDACTIONS_SCHEMA,
            "redacted": True,
            "rules": describe_rules(),
            "env": {"kept": self.env_kept, "dropped": self.env_dropped, "masked": sorted(self.env_masked)},
            "replaced": [
                {"kind": kind, "with": self.replacements[kind], "strings": count}
                for kind, count in sorted(self.counts.items())
            ],
        }

    def summary(self) -> str:
        """One line for stderr: `check` collects only allowlisted variables, so most reports drop none here."""
        env = f"environment: {self.env_kept} allowlisted variable(s) kept, {len(self.env_masked)} masked"
        if self.env_dropped:
            env += f", {self.env_dropped} dropped"
        parts = [env] + [f"{kind} in {count} string(s)" for kind, count in sorted(self.counts.items())]
        return "redacted: " + "; ".join(parts)


def not_redacted() -> RedactionsDocument:
    """The redactions.json of a bundle made with --no-redact."""
    return {"schema": REDACTIONS_SCHEMA, "redacted": False, "rules": [], "env": None, "replaced": []}


def describe_rules() -> list[str]:
    return [
        "environment: only names starting with "
        + ", ".join(ENV_PREFIXES)
        + ", ending with "
        + ", ".join(ENV_SUFFIXES)
        + ", or one of "
        + ", ".join(sorted(ENV_NAMES)),
        "environment: values masked where the name contains " + ", ".join(SECRET_NAME_WORDS),
        "home folder shown as ~; user and host names replaced by hashes salted per report (user-xxxxxxxxxxxx)",
        "tokens, keys and passwords recognised in any text are masked, and so are the values of secret-looking "
        "environment variables wherever they appear (also with --no-redact)",
        "GPU UUIDs (NVIDIA's GPU-/MIG- UUIDs, AMD's GPU- and 16 hex digits) replaced by salted hashes (also with "
        "--no-redact)",
        f"strings longer than {DISPLAY_CHARS} characters cut to their tail, after masking",
    ]


# A document redact() takes and gives back in the same type: a CheckDocument in, a CheckDocument out.
_Doc = TypeVar("_Doc", bound=Mapping[str, object])
_T = TypeVar("_T")


def redact(
    document: _Doc,
    identity: Identity,
    *,
    identities: bool = True,
    salt: bytes | None = None,
    vocabulary: Iterable[str] = (),
) -> tuple[_Doc, Redactions]:
    """A redacted copy of a check/1 document and the record of what changed.

    The document's own host names and secret-looking env values are added to `identity`, so a report saved
    unredacted on another machine is redacted as well as one made here. `identities=False` (--no-redact) keeps
    home, user and host names; secrets and GPU UUIDs are masked either way. Strings are cut to DISPLAY_CHARS last.
    A user or host name among the `vocabulary` words (the doctor's own text: rules.vocabulary()) is replaced only
    where it stands as an identity.
    """
    record = Redactions()
    salt = new_salt() if salt is None else salt
    full = _with_document(identity, document)
    if not identities:
        full = Identity(secret_values=full.secret_values)
    scrubber = _Scrubber(full, record, salt, frozenset(vocabulary))
    out = scrubber.walk({key: value for key, value in document.items() if key != "env"})
    env = document.get("env")
    if isinstance(env, Mapping):
        out["env"] = _redact_env(env, scrubber, record)
    host = document.get("host")
    if identities and isinstance(host, Mapping):  # replaced outright, even when the name is a protected word
        identities_of: tuple[tuple[str, RedactionKind], ...] = (("hostname", "host"), ("user", "user"))
        for key, kind in identities_of:
            value = host.get(key)
            if isinstance(value, str) and value and value != "unknown":
                replacement = pseudonym(kind, value.split(".")[0] if kind == "host" else value, salt)
                if out["host"][key] != replacement:  # not yet counted: a generic name (root) the text rules leave
                    record.note(kind, replacement)
                out["host"][key] = replacement
    # Every walk above rebuilds each container as it found it (strings change, keys and shapes do not), so the copy
    # has the type of the document it was made from.
    redacted: _Doc = _cut(out, DISPLAY_CHARS)
    return redacted, record


def redact_text(
    text: str, identity: Identity, salt: bytes, *, identities: bool = True, vocabulary: Iterable[str] = ()
) -> str:
    """One string redacted as `redact` redacts each string of a document (an error line, a file name)."""
    full = identity if identities else Identity(secret_values=identity.secret_values)
    redacted: str = _cut(_Scrubber(full, Redactions(), salt, frozenset(vocabulary)).text(text), DISPLAY_CHARS)
    return redacted


def mask_secrets(document: _Doc, identity: Identity) -> _Doc:
    """`check`'s own view of this machine: every secret masked as `report` masks it (no triage step needs one), and
    nothing else changed: names, paths and GPU UUIDs stay, no string is cut."""
    secrets_only = Identity(secret_values=_with_document(identity, document).secret_values)
    masked: _Doc = _Scrubber(secrets_only, Redactions(), b"", frozenset(), gpus=False).walk(document)
    return masked


def cut_for_display(value: _T, limit: int = DISPLAY_CHARS) -> _T:
    """Every string longer than `limit` kept as its tail (where a traceback says what went wrong); the value keeps
    its shape (a tuple becomes a list, as JSON has it), so it keeps its type."""
    cut: _T = _cut(value, limit)
    return cut


def _cut(value: Any, limit: int) -> Any:  # any JSON value, walked
    if isinstance(value, str):
        return cut(value, limit, keep="tail")
    if isinstance(value, Mapping):
        return {k: _cut(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut(v, limit) for v in value]
    return value


def _with_document(identity: Identity, document: Mapping[str, object]) -> Identity:
    host, env = document.get("host"), document.get("env")
    host = host if isinstance(host, Mapping) else {}
    env = env if isinstance(env, Mapping) else {}
    names = {kind: host.get(key) for kind, key in (("user", "user"), ("host", "hostname"))}
    found = {kind: {v} if isinstance(v, str) and v not in ("", "unknown") else set() for kind, v in names.items()}
    found["host"] |= {h.split(".")[0] for h in found["host"]}
    secrets = {v for k, v in env.items() if is_secret_name(k) and _is_secret_value(v)}
    return identity.joined(found["user"], found["host"], secrets, root="root" in found["user"])


def _redact_env(env: Mapping[str, Any], scrubber: _Scrubber, record: Redactions) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for name in sorted(env):
        if not is_relevant_env(name):
            record.env_dropped += 1
            continue
        record.env_kept += 1
        if is_secret_name(name):
            record.env_masked.append(name)
            kept[name] = MASK
        else:
            kept[name] = scrubber.walk(env[name])
    return kept


class _Scrubber:
    def __init__(
        self, identity: Identity, record: Redactions, salt: bytes, vocabulary: frozenset[str], gpus: bool = True
    ) -> None:
        self.record, self.salt, self.gpus = record, salt, gpus
        # Longest first, so "/home/alice/x" is taken by the home rule before the user rule sees "alice"; a home
        # is a path's start, never a folder inside another path (/srv/root/x is not /root).
        self.literals = [(v, _literal_forms(v)) for v in sorted(identity.secret_values, key=len, reverse=True)]
        self.homes = [
            (re.compile(r"(?<![A-Za-z0-9._/~-])" + re.escape(h.rstrip("/")) + r"(?![A-Za-z0-9._-])"), "~")
            for h in sorted(identity.homes, key=len, reverse=True)
        ]
        self.names: list[tuple[re.Pattern[str], str, RedactionKind]] = []
        users = tuple(u for u in identity.users if u.lower() not in GENERIC_USERS)
        named: tuple[tuple[RedactionKind, Iterable[str]], ...] = (("host", identity.hosts), ("user", users))
        for kind, values in named:
            for value in sorted(values, key=len, reverse=True):
                short = value.split(".")[0] if kind == "host" else value
                # A host name takes its domain with it: node17.corp.example.com names the organisation too.
                domain = r"(?:\.[A-Za-z0-9-]+)*" if kind == "host" else ""
                name = re.escape(value) + domain
                if is_doctor_word(value, vocabulary):
                    # Only where it stands as an identity (its home is taken by the home rule above): a host after
                    # // or @ or in a host=/hostname: field; a user before @ or in a user= field.
                    if kind == "host":
                        before = r"(?:(?<=//)|(?<=@)|(?<=host=)|(?<=node=)|(?<=hostname: )|(?<=host: ))"
                        pattern = re.compile(before + name + r"(?=[:/\s'\",)\]]|$)", re.IGNORECASE)
                    else:
                        pattern = re.compile(
                            r"(?:(?<=user=)|(?<=user: )|(?<=logname=))" + name + r"(?![A-Za-z0-9])|"
                            r"(?<![A-Za-z0-9._-])" + name + r"(?=@[A-Za-z0-9])",
                            re.IGNORECASE,
                        )
                else:
                    pattern = re.compile(r"(?<![A-Za-z0-9])" + name + r"(?![A-Za-z0-9])", re.IGNORECASE)
                self.names.append((pattern, pseudonym(kind, short, salt), kind))

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self._key(k): self.walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.walk(v) for v in value]
        return value

    def _key(self, key: Any) -> Any:
        """Identifier-like keys ("user", "data") are the program's own names; paths and other text are scrubbed."""
        return key if not isinstance(key, str) or _IDENTIFIER.fullmatch(key) else self.text(key)

    def text(self, s: str) -> str:
        if s.lower() in PROTECTED_WORDS:
            return s
        for literal, wrapped in self.literals:
            if literal in s:
                s = s.replace(literal, MASK)
                self.record.note("secret", MASK)
            if wrapped is not None:  # also where the value is in the text both as it is and encoded
                s = self._sub(wrapped, lambda _m: MASK, s, "secret", MASK)
        for pattern in SECRET_TEXT_PATTERNS:
            s = self._sub(pattern, lambda m: (m.group(1) if m.re.groups else "") + MASK, s, "secret", MASK)
        if MASK in s:
            s = _WRAPPED.sub(lambda m: MASK + m.group(1) + MASK, s)
        if self.gpus:
            s = self._sub(_GPU_UUID, lambda m: pseudonym("gpu", m.group(0), self.salt), s, "gpu uuid", "gpu-…")
        for home_pattern, tilde in self.homes:
            s = self._sub(home_pattern, lambda _m, t=tilde: t, s, "home", tilde)
        for pattern, replacement, kind in self.names:
            s = self._sub(pattern, lambda _m, r=replacement: r, s, kind, replacement)
        return s

    def _sub(self, pattern: re.Pattern[str], repl: Any, s: str, kind: RedactionKind, shown: str) -> str:
        new, n = pattern.subn(repl, s)
        if n:
            self.record.note(kind, shown)
        return new


def _literal_forms(value: str) -> re.Pattern[str] | None:
    """A secret's value as it may also appear: JSON-escaped (a `"` or `\\` inside), percent-encoded, or wrapped over
    lines (a line break and indentation between any two of its characters); None when it is too long to look for so."""
    if len(value) > 512:
        return None
    between = r"(?:\r?\n[ \t]*|\\n)?"
    forms = [between.join(re.escape(c) for c in value)]
    # JSON-escaped, and percent-encoded as a URL or a form carries it (`p@ss/w` is `p%40ss%2Fw`, a space `+`)
    for encoded in {json.dumps(value)[1:-1], urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)}:
        if encoded != value:
            forms.append(re.escape(encoded) if "%" not in encoded else _any_case_hex(encoded))
    return re.compile("|".join(forms))


def _any_case_hex(encoded: str) -> str:
    """A percent-encoded value as a pattern that takes its escapes in either case (%2f and %2F)."""
    return "".join(
        f"%[{part[0].upper()}{part[0].lower()}][{part[1].upper()}{part[1].lower()}]" + re.escape(part[2:])
        if i
        else re.escape(part)
        for i, part in enumerate(encoded.split("%"))
    )


def _safe(fn: Any) -> str:
    try:
        return str(fn())
    except Exception:  # getpass.getuser() raises when no user name can be found (containers)
        return ""


def _usable(values: set[str], keep: Any) -> tuple[str, ...]:
    return tuple(sorted(v for v in values if v and keep(v)))
