"""Secret redaction and the "secret committed" findings, on real repositories.

Every token below is an obviously fake value assembled at run time, so this file does
not itself look like it holds a secret.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pip
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from bot.domain.diff import Diff
from bot.domain.results import Severity
from bot.git.repo import range_change
from bot.review.secrets.redaction import SecretHit, redact_diff, redact_text, secret_findings
from tests.support.repos import commit, make_repo

ALNUM = "Fk3qZ8wN2xR7vB1mL5tY9pD4hJ6sC0gA"  # 32 mixed characters, fake


def fake(prefix: str, length: int, alphabet: str = ALNUM) -> str:
    return prefix + (alphabet * (length // len(alphabet) + 1))[:length]


TOKENS = {
    "ghp": ("GitHub token", fake("ghp_", 36)),
    "gho": ("GitHub token", fake("gh" + "o_", 36)),
    "ghu": ("GitHub token", fake("gh" + "u_", 36)),
    "ghs": ("GitHub token", fake("gh" + "s_", 36)),
    "ghr": ("GitHub token", fake("gh" + "r_", 36)),
    "ghp-constant": ("GitHub token", "ghp_" + "A" * 36),
    "github_pat": ("GitHub token", fake("github_" + "pat_", 22) + "_" + fake("", 59)),
    "aws-akia": ("AWS access key", fake("AK" + "IA", 16, "QWERTYUIOPLKJHGF2345")),
    "aws-asia": ("AWS access key", fake("AS" + "IA", 16, "ZXCVBNMASDFGHJKL6789")),
    "slack-bot": ("Slack token", "xo" + "xb-" + "1234567890-0987654321-" + fake("", 24)),
    "slack-user": ("Slack token", "xo" + "xp-" + "1234567890-" + fake("", 30)),
    "openai": ("API key", fake("s" + "k-", 48)),
    "openai-proj": ("API key", fake("s" + "k-proj-", 64)),
    "gitlab": ("GitLab token", fake("gl" + "pat-", 20)),
    "stripe": ("Stripe key", fake("s" + "k_live_", 24)),
}


def _body_chunks(pem: str) -> list[str]:
    """20-character pieces of the key's base64 body: none may survive redaction."""
    body = "".join(line for line in pem.splitlines() if not line.startswith("-----"))
    return [body[i : i + 20] for i in range(0, len(body) - 20, 20)]


def _leaks(text: str, pem: str) -> list[str]:
    flat = text.replace("\n", "").replace("\\n", "").replace('"', "").replace(" ", "")
    return [chunk for chunk in _body_chunks(pem) if chunk in flat]


# -- redact_text: each format --------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_each_token_format_is_redacted(name: str) -> None:
    kind, token = TOKENS[name]
    text = f"import os\n\nCONFIG = {{\n    'credential': '{token}',\n}}\n"
    out, hits = redact_text(text)
    assert token not in out
    assert token[-12:] not in out
    assert f"[REDACTED:{kind}]" in out
    assert hits == [SecretHit(kind, 4, True)]
    assert out.count("\n") == text.count("\n")


def test_token_inside_a_longer_run_is_redacted_whole() -> None:
    token = "ghp_" + "B" * 40  # longer than the 36 characters GitHub issues today
    out, _ = redact_text(f"x = {token}")
    assert out == "x = [REDACTED:GitHub token]"


def test_aws_secret_key_and_slack_webhook_in_assignments() -> None:
    secret = fake("", 40, "wJalrXUtnFEMIK7MDENGbPxRfiCYzQ3x9mA2Lk8d/+")
    hook = "https://hooks.slack.com/services/" + "T0123ABCD/B0456EFGH/" + fake("", 24)
    text = f'aws_secret_access_key = {secret}\nWEBHOOK = "{hook}"\n'
    out, hits = redact_text(text)
    assert secret not in out and hook not in out
    assert [(h.kind, h.line) for h in hits] == [("AWS secret key", 1), ("Slack webhook", 2)]


def test_generic_assignment_of_a_random_value_is_redacted_and_reported() -> None:
    value = "Zq8Xk29fjQ8sLmZp4Rt7vBnW3y"
    out, hits = redact_text(f'API_KEY = "{value}"\nclient_secret: {value}\n')
    assert value not in out
    assert [h.kind for h in hits] == ["hard-coded secret", "hard-coded secret"]
    assert all(h.report for h in hits)


def test_password_in_url_is_redacted_but_reported_only_when_it_looks_real() -> None:
    real = "postgres://admin:Xk29fjQ8sLmZp4Rt7vBn@db.internal/prod"
    local = "postgres://app:s3cr3tpw@localhost:5432/test"
    out, hits = redact_text(f"{real}\n{local}\n")
    assert "Xk29fjQ8sLmZp4Rt7vBn" not in out and "s3cr3tpw" not in out
    assert [(h.kind, h.report) for h in hits] == [
        ("password in URL", True),
        ("password in URL", False),
    ]


def test_secret_hit_never_holds_the_secret() -> None:
    token = TOKENS["ghp"][1]
    _, hits = redact_text(f"t = '{token}'")
    assert token not in repr(hits) and token not in str(hits)
    assert set(SecretHit.__dataclass_fields__) == {"kind", "line", "report"}


# -- private keys ---------------------------------------------------------------------------


def test_rsa_private_key_block_is_replaced_whole_keeping_line_count(rsa_pem: str) -> None:
    text = f'def load():\n    KEY = """{rsa_pem}"""\n    return KEY\n'
    out, hits = redact_text(text)
    assert "BEGIN RSA PRIVATE KEY" not in out and "END RSA PRIVATE KEY" not in out
    assert _leaks(out, rsa_pem) == []
    assert out.count("\n") == text.count("\n")
    assert out.splitlines()[1] == '    KEY = """[REDACTED:private key]'
    assert out.splitlines()[-1] == "    return KEY"
    assert hits == [SecretHit("private key", 2, True)]


@pytest.mark.parametrize("fmt", ["pkcs8", "openssh"])
def test_other_private_key_formats(fmt: str) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    private_format = (
        serialization.PrivateFormat.PKCS8 if fmt == "pkcs8" else serialization.PrivateFormat.OpenSSH
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, private_format, serialization.NoEncryption()
    ).decode()
    out, hits = redact_text(pem)
    assert [h.kind for h in hits] == ["private key"]
    assert _leaks(out, pem) == []
    assert "PRIVATE KEY" not in out


def test_private_key_as_one_json_string_with_escaped_newlines(rsa_pem: str) -> None:
    text = json.dumps({"type": "service_account", "private_key": rsa_pem}) + "\n"
    out, hits = redact_text(text)
    assert _leaks(out, rsa_pem) == []
    assert [h.kind for h in hits] == ["private key"]
    assert '"type": "service_account"' in out


def test_truncated_key_head_and_tail_are_both_redacted(rsa_pem: str) -> None:
    lines = rsa_pem.splitlines()
    head = "\n".join(lines[:10])  # a window that ends inside the key, no END
    tail = "\n".join(lines[15:]) + "\nnext = 1\n"  # a window that starts inside it
    for part in (head, tail):
        out, hits = redact_text(part)
        assert _leaks(out, rsa_pem) == []
        assert [h.kind for h in hits] == ["private key"]
    assert redact_text(tail)[0].endswith("next = 1\n")


def test_bare_key_lines_without_markers_are_redacted_not_reported(rsa_pem: str) -> None:
    middle = "\n".join(rsa_pem.splitlines()[5:12])
    out, hits = redact_text(f"before\n{middle}\nafter")
    assert _leaks(out, rsa_pem) == []
    assert [(h.kind, h.report) for h in hits] == [("key material", False)]
    assert out.startswith("before\n") and out.endswith("\nafter")


def test_code_that_parses_pem_is_not_a_key() -> None:
    code = (
        'BEGIN = "-----BEGIN RSA PRIVATE KEY-----"\n'
        "def is_key(line):\n"
        '    return line.startswith("-----BEGIN PRIVATE KEY-----") or line.endswith(\n'
        '        "-----END PRIVATE KEY-----")\n'
    )
    assert redact_text(code) == (code, [])


# -- no false positives ---------------------------------------------------------------------

ORDINARY = [
    'sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"',
    '"integrity": "sha512-9T0n2bM6q8kYbQmY9ZC3fJnS7o3p1v4Kx5PZk8mK0wYzqLJYf7f5dXb2aU1e'
    'S1o3q9Y7yQ8M1P1x6bGv5cQ3Q=="',
    'name = "requests"\nversion = "2.31.0"\nfiles = [\n    {file = "requests-2.31.0.tar.gz", '
    'hash = "sha256:942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1"},\n]',
    "request_id = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'",
    'PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAA'
    'BJRU5ErkJggg=="',
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    'AWS_ACCESS_KEY_ID = "AKIA' + 'IOSFODNN7EXAMPLE"',
    'password = "changeme"\nPASSWORD = os.environ["DB_PASSWORD"]',
    "api_key = os.environ.get('API_KEY')\ntoken = get_token(user)",
    "secret_key = settings.SECRET_KEY\nauth_token: str = Field(default='')",
    "url = 'https://user:${DB_PASSWORD}@db/prod'\nurl2 = 'https://example.com/a:b@c'",
    'client_secret = "your-client-secret-here"\napi_key = "<YOUR_API_KEY>"',
    "def test_sk():\n    assert parse('sk-short') is None\n    klass = 'sk-ant-button'",
    "const apiKeyHeader = 'X-Api-Key';\nconst tokenUrl = 'https://auth.example.com/token';",
    "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_code_is_left_alone(text: str) -> None:
    out, hits = redact_text(text)
    assert [h for h in hits if h.report] == []
    assert out == text or all(h.kind == "password in URL" for h in hits)


def test_false_positives_on_the_installed_pip_sources() -> None:
    """pip's own code and vendored libraries (certifi's CA bundle included): nothing
    reported. The CA bundle's certificate bodies are redacted as key material."""
    root = Path(pip.__file__).parent
    reported: list[tuple[str, int, str]] = []
    lines = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix in (".pyc", ".exe"):
            continue
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        lines += text.count("\n")
        for hit in redact_text(text)[1]:
            if hit.report:
                reported.append((str(path.relative_to(root)), hit.line, hit.kind))
    assert lines > 100_000
    assert reported == []


# -- diffs: redact_diff and secret_findings on a real repository ---------------------------


@pytest.fixture
def secret_diff(tmp_path: Path, rsa_pem: str) -> Diff:
    repo = make_repo(tmp_path)
    old_token = TOKENS["gho"][1]
    commit(
        repo,
        {
            "app.py": "import os\n\nOLD = '" + old_token + "'\n\ndef main():\n    return 1\n",
            "README.md": "# demo\n",
        },
    )
    commit(
        repo,
        {
            "app.py": "import os\n\nTOKEN = '"
            + TOKENS["ghp"][1]
            + "'\n\ndef main():\n    return 2\n",
            "deploy/id_rsa": rsa_pem,
            "README.md": "# demo\n\nRun it.\n",
        },
    )
    return range_change(repo, "HEAD~1", "HEAD").diff


def test_secret_findings_report_each_added_secret_without_echoing_it(
    secret_diff: Diff, rsa_pem: str
) -> None:
    findings = secret_findings(secret_diff)
    assert [(f.path, f.start_line) for f in findings] == [("app.py", 3), ("deploy/id_rsa", 1)]
    for finding in findings:
        assert finding.severity is Severity.CRITICAL
        assert (finding.category, finding.title, finding.source, finding.side) == (
            "security",
            "secret committed",
            "secret-scan",
            "RIGHT",
        )
        assert "revoke" in finding.body and "rotate" in finding.body
        assert finding.fingerprint
        dumped = json.dumps(finding.as_dict()) + repr(finding)
        for _, token in TOKENS.values():
            assert token not in dumped and token[4:20] not in dumped
        assert _leaks(dumped, rsa_pem) == []
    assert "GitHub token" in findings[0].body and "private key" in findings[1].body


def test_a_deleted_secret_is_redacted_but_not_reported(secret_diff: Diff) -> None:
    old_token = TOKENS["gho"][1]
    redacted = redact_diff(secret_diff)
    texts = [ln.text for f in redacted for h in f.hunks for ln in h.lines]
    assert not any(old_token in t for t in texts)
    deleted = [ln for f in secret_diff for h in f.hunks for ln in h.lines if ln.kind == "-"]
    assert any(old_token in ln.text for ln in deleted)
    assert all(f.start_line != 3 or "GitHub" in f.body for f in secret_findings(secret_diff))
    assert len(secret_findings(secret_diff)) == 2


def test_redact_diff_keeps_every_line_number(secret_diff: Diff, rsa_pem: str) -> None:
    redacted = redact_diff(secret_diff)
    assert [f.path for f in redacted] == [f.path for f in secret_diff]
    for old, new in zip(secret_diff, redacted, strict=True):
        assert len(old.hunks) == len(new.hunks)
        for old_hunk, new_hunk in zip(old.hunks, new.hunks, strict=True):
            assert [(ln.kind, ln.old_no, ln.new_no) for ln in old_hunk.lines] == [
                (ln.kind, ln.old_no, ln.new_no) for ln in new_hunk.lines
            ]
    everything = "\n".join(ln.text for f in redacted for h in f.hunks for ln in h.lines)
    assert _leaks(everything, rsa_pem) == []
    assert TOKENS["ghp"][1] not in everything
    assert "TOKEN = '[REDACTED:GitHub token]'" in everything
    # A file without secrets is passed through as it was.
    readme = next(f for f in redacted if f.path == "README.md")
    assert readme is secret_diff.get("README.md")


def test_key_changed_in_the_middle_is_redacted_in_the_hunk(tmp_path: Path, rsa_pem: str) -> None:
    repo = make_repo(tmp_path)
    lines = rsa_pem.splitlines(keepends=True)
    commit(repo, {"key.pem": "".join(lines)})
    lines[13] = lines[13].rstrip("\n")[::-1] + "\n"  # one body line changed
    commit(repo, {"key.pem": "".join(lines)})
    diff = range_change(repo, "HEAD~1", "HEAD").diff
    hunk_text = "\n".join(ln.text for f in redact_diff(diff) for h in f.hunks for ln in h.lines)
    assert _leaks(hunk_text, rsa_pem) == []
    assert lines[13].strip()[:20] not in hunk_text
    # git names the hunk after the nearest column-0 line above it: here a key line.
    [raw] = [h.section for f in diff for h in f.hunks]
    assert _leaks(raw, rsa_pem), "the test needs a key line as the hunk's section"
    [section] = [h.section for f in redact_diff(diff) for h in f.hunks]
    assert _leaks(section, rsa_pem) == [] and "REDACTED" in section
    assert [ln.kind for f in diff for h in f.hunks for ln in h.lines].count("+") == 1


# -- speed and pathological input -----------------------------------------------------------


def _corpus_lines() -> list[str]:
    root = Path(pip.__file__).parent / "_internal"
    lines: list[str] = []
    for path in sorted(root.rglob("*.py")):
        lines.extend(path.read_text(encoding="utf-8").splitlines())
    return lines


def test_a_3000_file_diff_is_scanned_quickly(tmp_path: Path) -> None:
    corpus = _corpus_lines()
    files, added = [], 0
    for i in range(3000):
        chunk = corpus[(i * 60) % (len(corpus) - 60) : (i * 60) % (len(corpus) - 60) + 60]
        body = "".join(f"+{line}\n" for line in chunk)
        files.append(
            f"diff --git a/f{i}.py b/f{i}.py\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/f{i}.py\n@@ -0,0 +1,{len(chunk)} @@\n{body}"
        )
        added += len(chunk)
    from bot.domain.diff import parse_diff

    diff = parse_diff("".join(files))
    started = time.perf_counter()
    redact_diff(diff)
    findings = secret_findings(diff)
    elapsed = time.perf_counter() - started
    print(f"redact_diff + secret_findings: {added:,} lines in {elapsed:.2f} s")
    assert findings == []
    # A hang detector, not a speed test (bench_secrets measures the throughput): a scan
    # that grew with the square of the 180,000 lines would take hours, not a minute.
    assert elapsed < 60


@pytest.mark.parametrize(
    "text",
    [
        "a" * 1_000_000,
        "=" * 200_000 + "x",
        ("-----BEGIN RSA PRIVATE KEY-----\n" * 20_000),
        ("A" * 64 + "\n") * 20_000,
        "password = '" + "a1" * 100_000,
        ("://" + "u" * 50 + ":") * 20_000,
        "x = " + "sk-" * 100_000,
    ],
    ids=["long-line", "equals", "begin-markers", "base64-run", "open-quote", "url-like", "sk"],
)
def test_pathological_input_is_linear(text: str) -> None:
    started = time.perf_counter()
    out, _ = redact_text(text)
    # Backtracking on these inputs takes hours; a linear scan well under a second on an
    # idle machine. The bound leaves room for a loaded one and still catches the first.
    assert time.perf_counter() - started < 30
    assert out.count("\n") == text.count("\n")


# Lines of the standard library the secret-named rule redacted (77 of them in bench_secrets'
# run, against at most 5): code naming a key, a token or credentials, never holding one.
CODE_NOT_SECRETS = [
    "self.skipkeys = skipkeys",
    "self.credentials = credentials",
    "self.keywords = keywords",
    "self.token = nextchar",
    "items = sorted(object.items(), key=_safe_tuple)",
    "key = filename, lineno",
    "PseudoToken = Whitespace + group(PseudoExtras, Number, Funny)",
    "TOKEN_ENDS = TSPECIALS | WSP",
    "Key = KeyPress",
    "_cache[cache_key] = selector",
    "key0 = 305419896",
    "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",
    "key = 'PYTHONCASEOK'",
    '_key = "python.xml.sax.parser"',
    "self.key = '_threading_local._localimpl.' + str(id(self))",
    "# Author: Christian Heimes",
    "KEYWORD_ONLY = 'keyword-only'",
    "auth_header = 'Authorization'",
    "context.keylog_filename = keylogfile",
    'raise TypeError("pwd: expected bytes, got %s" % type(pwd).__name__)',
]


@pytest.mark.parametrize("line", CODE_NOT_SECRETS)
def test_code_that_names_a_secret_without_holding_one_is_left_alone(line: str) -> None:
    shown, hits = redact_text(line + "\n")
    assert hits == [] and shown == line + "\n"


@pytest.mark.parametrize(
    "line",
    [
        "APP_SECRET=kqvplmnrtz",  # a settings file's bare value: a secret of no digit
        "api_token: wbnqzrtpkl",
        'client_secret = "Tzq-Pwlmnr"',
    ],
)
def test_a_value_given_to_a_secrets_name_in_settings_stays_redacted(line: str) -> None:
    shown, hits = redact_text(line + "\n")
    assert hits and "[REDACTED" in shown
