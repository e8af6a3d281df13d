"""Public is not secret: a real certificate bundle (certifi's ``cacert.pem``) and public
keys reach the model as they are, and a finding that quotes a line the model was shown
redacted is kept, on real history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import certifi
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from bot.git.repo import range_change
from bot.review.pipeline import review
from bot.review.secrets.redaction import redact_text
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import client_for, config, submit
from tests.fakes.keys import new_rsa_pem
from tests.support.repos import commit, make_repo


def _finding(start: int, end: int, evidence: str, title: str) -> dict[str, Any]:
    return {
        "path": "deploy/keys.py",
        "start_line": start,
        "end_line": end,
        "side": "RIGHT",
        "severity": "major",
        "category": "security",
        "title": title,
        "body": "Load the deploy key from the secret store instead.",
        "evidence": evidence,
    }


def test_a_certificate_bundle_is_shown_and_a_quote_of_a_redacted_line_is_kept(
    tmp_path: Path,
) -> None:
    bundle = Path(certifi.where()).read_text(encoding="utf-8")
    pem = new_rsa_pem()
    keys = f'NAME = "deploy"\nKEY = """{pem}"""\n'
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"README.md": "certificates\n"}, "base")
    commit(repo, {"certs/cacert.pem": bundle, "deploy/keys.py": keys}, "Add the CA bundle")
    change = range_change(repo, "HEAD~1", "HEAD")
    findings = [
        # The model saw line 2 as `KEY = """[REDACTED:private key]`.
        _finding(2, 2, 'KEY = """[REDACTED:private key]', "key in the source"),
        # Lines 3-4 it saw as nothing but placeholders.
        _finding(3, 4, "[REDACTED:private key]\n[REDACTED:private key]", "key body"),
    ]
    with K3Stub([submit("A CA bundle and a key.", findings)]) as stub:
        result = review(change, config(), client_for(stub, "low"))
        requests = stub.chat_requests
    sent = "".join(json.loads(r.raw)["messages"][-1]["content"] for r in requests)

    certificates = [line for line in bundle.splitlines() if line and not line.startswith("#")]
    body_lines = [line for line in certificates if not line.startswith("-----")]
    assert len(body_lines) > 1000
    # Every line of every certificate reached the model as it is.
    assert [line for line in body_lines if line not in sent] == []
    assert sent.count("-----BEGIN CERTIFICATE-----") == bundle.count("-----BEGIN CERTIFICATE-----")
    assert "[REDACTED:key material]" not in sent
    # The private key did not.
    key_lines = [line for line in pem.splitlines() if not line.startswith("-----")]
    assert [line for line in key_lines if line in sent] == []
    assert "[REDACTED:private key]" in sent

    kept = {f.title for f in result.findings}
    assert {"key in the source", "key body"} <= kept, result.dropped
    assert "secret committed" in kept  # and the key is reported as ever


def test_public_keys_are_not_redacted() -> None:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    openssh = key.public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    ).decode()
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    rsa_pub = (
        serialization.load_pem_private_key(new_rsa_pem().encode(), None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    texts = [
        f"{openssh} deploy@ci\n",  # an id_ed25519.pub / authorized_keys line
        pem,
        rsa_pub,
        f'public_key: "{openssh.split()[1]}"\n',
        f'DEPLOY_PUBLIC_KEY = """{rsa_pub}"""\n',
    ]
    for text in texts:
        assert redact_text(text) == (text, [])
