"""A corpus of planted secrets: formats and placements GitNeural must redact and report.

Every secret is made at run time from seeded random pieces (keys by ``cryptography``), so
no file of this repository holds anything that looks like a real credential. Each
:class:`Planted` says where the secret goes (a file's content, a file's name, the change's
title or its description) and the ``needles``: the text that must never reach the model.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from tests.fakes.keys import new_rsa_pem

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
#: Words that make a value read as a placeholder; a generated value never holds one.
_WORDS = ("test", "example", "sample", "dummy", "fake", "your", "secret", "token", "pass")


@dataclass(frozen=True)
class Planted:
    name: str
    #: "file" (in ``path``'s content), "name" (in ``path`` itself), "title", "description".
    where: str
    path: str
    content: str
    needles: tuple[str, ...]


def fake(seed: str, length: int, alphabet: str = ALNUM) -> str:
    """``length`` seeded random characters of ``alphabet``, mixed and word-free."""
    rng = random.Random(seed)
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        lowered = value.lower()
        mixed = (
            alphabet != ALNUM
            or length < 12
            or (
                any(c.isupper() for c in value)
                and any(c.islower() for c in value)
                and sum(c.isdigit() for c in value) >= 3
            )
        )
        digits = (
            sum(c.isdigit() for c in value) >= 2
            or length < 12
            or not any(c.isdigit() for c in alphabet)
        )
        if mixed and digits and not any(w in lowered for w in _WORDS):
            return value


def _password(seed: str) -> str:
    return (
        fake(seed, 6, string.ascii_uppercase)
        + fake(seed + "d", 4, "23456789")
        + "!k"
        + fake(seed + "l", 4, string.ascii_lowercase)
    )


def _pem_body(pem: str) -> tuple[str, ...]:
    """The base64 lines of a key: none may reach the model."""
    return tuple(line for line in pem.splitlines() if line and not line.startswith("-----"))


def _keys() -> dict[str, str]:
    ed = ed25519.Ed25519PrivateKey.generate()
    ecc = ec.generate_private_key(ec.SECP256R1())
    none = serialization.NoEncryption()
    pem, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    return {
        "rsa-pem": new_rsa_pem(),
        "pkcs8-ed25519": ed.private_bytes(pem, pkcs8, none).decode(),
        "openssh-ed25519": ed.private_bytes(
            pem, serialization.PrivateFormat.OpenSSH, none
        ).decode(),
        "ec-sec1": ecc.private_bytes(
            pem, serialization.PrivateFormat.TraditionalOpenSSL, none
        ).decode(),
    }


#: How an assignment of ``name`` to ``value`` is written, by format (and file suffix).
FORMATS = {
    "py": lambda n, v: f'import os\n\n{n} = "{v}"\nDEBUG = False\n',
    "js": lambda n, v: f'const {n} = "{v}";\nmodule.exports = {{ {n} }};\n',
    "go": lambda n, v: f'package main\n\nfunc conf() {{\n\t{n} := "{v}"\n\t_ = {n}\n}}\n',
    "yaml": lambda n, v: f"service:\n  name: api\n  {n}: {v}\n",
    "toml": lambda n, v: f'[service]\nname = "api"\n{n} = "{v}"\n',
    "ini": lambda n, v: f"[database]\nhost = db\n{n} = {v}\n",
    "env": lambda n, v: f"APP_ENV=production\n{n}={v}\n",
    "json": lambda n, v: json.dumps({"name": "api", n: v}, indent=2) + "\n",
    "php": lambda n, v: f"<?php\nreturn [\n    '{n}' => '{v}',\n];\n",
    "sh": lambda n, v: f'#!/bin/sh\nexport {n}="{v}"\nexec app\n',
    "Dockerfile": lambda n, v: f"FROM python:3.12\nENV {n}={v}\n",
    "escaped": lambda n, v: f'CMD = "{n} = \\"{v}\\""\n',
    "notebook": lambda n, v: (
        json.dumps(
            {"cells": [{"cell_type": "code", "source": ["import os\n", f'{n} = "{v}"\n']}]},
            indent=1,
        )
        + "\n"
    ),
    "string-in-string": lambda n, v: "CONFIG = '" + json.dumps({n: v}) + "'\n",
    "double-escaped": lambda n, v: "BLOB = " + json.dumps(json.dumps({n: v})) + "\n",
}
_SUFFIX = {"escaped": "py", "notebook": "ipynb", "string-in-string": "py", "double-escaped": "py"}


def _file(name: str, fmt: str, var: str, value: str, *needles: str) -> Planted:
    suffix = _SUFFIX.get(fmt, fmt)
    path = f"planted/{name}/Dockerfile" if fmt == "Dockerfile" else f"planted/{name}.{suffix}"
    return Planted(name, "file", path, FORMATS[fmt](var, value), needles or (value,))


def _vendor_tokens() -> dict[str, str]:
    f = fake
    digits = "0123456789"
    return {
        "github-ghp": "ghp_" + f("ghp", 36),
        "github-gho": "gho_" + f("gho", 36),
        "github-ghu": "ghu_" + f("ghu", 36),
        "github-ghs": "ghs_" + f("ghs", 36),
        "github-ghr": "ghr_" + f("ghr", 36),
        "github-pat": "github_pat_" + f("pat1", 22) + "_" + f("pat2", 59),
        "gitlab-pat": "glpat-" + f("glpat", 20),
        "gitlab-deploy": "gldt-" + f("gldt", 20),
        "gitlab-runner": "glrt-" + f("glrt", 20),
        "slack-bot": "xoxb-" + f("sb1", 11, digits) + "-" + f("sb2", 12, digits) + "-" + f("s", 24),
        "slack-user": "xoxp-" + f("su1", 11, digits) + "-" + f("su2", 9, digits) + "-" + f("u", 32),
        "slack-app": "xapp-1-A" + f("sa1", 10, "ABCDEFGH0123456789") + "-" + f("sa2", 64, HEX),
        "slack-webhook": "https://hooks.slack.com/services/T"
        + f("sw1", 10, "ABCDEFGH0123456789")
        + "/B"
        + f("sw2", 10, "ABCDEFGH0123456789")
        + "/"
        + f("sw3", 24),
        "stripe-live": "sk_live_" + f("stl", 24),
        "stripe-restricted": "rk_live_" + f("srl", 24),
        "stripe-test": "sk_test_" + f("stt", 24),
        "twilio-account": "AC" + f("twa", 32, HEX),
        "twilio-key": "SK" + f("twk", 32, HEX),
        "sendgrid": "SG." + f("sg1", 22) + "." + f("sg2", 43),
        "npm": "npm_" + f("npm", 36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + f("pypi", 70),
        "huggingface": "hf_" + f("hf", 34),
        "huggingface-org": "api_org_" + f("hforg", 34),
        "openai-project": "sk-proj-" + f("oap", 48) + "T3BlbkFJ" + f("oap2", 48),
        "openai-legacy": "sk-" + f("oal", 20) + "T3BlbkFJ" + f("oal2", 20),
        "anthropic": "sk-ant-api03-" + f("ant", 93) + "AA",
        "moonshot": "sk-" + f("moon", 48),
        "google-api-key": "AIza" + f("gapi", 35),
        "google-oauth-secret": "GOCSPX-" + f("gocspx", 28),
        "aws-access-key": "AKIA" + f("akia", 16, string.ascii_uppercase + "234567"),
        "aws-session-key": "ASIA" + f("asia", 16, string.ascii_uppercase + "234567"),
        "azure-client-secret": f("azc1", 3) + "8Q~" + f("azc2", 34),
        "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + base64.urlsafe_b64encode(json.dumps({"sub": f("jwt", 12)}).encode()).decode().rstrip("=")
        + "."
        + f("jwtsig", 43),
        "shopify": "shpat_" + f("shop", 32, HEX),
        "digitalocean": "dop_v1_" + f("do", 64, HEX),
        "postman": "PMAK-" + f("pm1", 24, HEX) + "-" + f("pm2", 34, HEX),
        "grafana": "glsa_" + f("gr1", 32) + "_" + f("gr2", 8, HEX),
        "databricks": "dapi" + f("dbx", 32, HEX),
    }


def _vendor_cases() -> list[Planted]:
    formats = list(FORMATS)
    names = ["CREDENTIAL", "settings_value", "client_config", "value", "conn"]
    out = []
    for i, (name, token) in enumerate(sorted(_vendor_tokens().items())):
        out.append(_file(name, formats[i % len(formats)], names[i % len(names)], token))
    return out


def _generic_cases() -> list[Planted]:
    rand, hex64 = fake("generic", 28), fake("hexkey", 64, HEX)
    pw = _password("generic-pw")
    cases = [
        ("db-pass", "env", "DB_PASS", pw),
        ("session-key", "py", "SESSION_KEY", rand),
        ("bare-token", "yaml", "TOKEN", rand),
        ("signing-key-hex", "py", "SIGNING_KEY", hex64),
        ("yaml-pass", "yaml", "pass", pw),
        ("ini-passwd", "ini", "passwd", pw),
        ("toml-password", "toml", "password", pw),
        ("json-secret", "json", "secret", rand),
        ("yaml-client-secret", "yaml", "client_secret", rand),
        ("php-api-key", "php", "api_key", rand),
        ("js-camel-api-key", "js", "apiKey", rand),
        ("go-credentials", "go", "credentials", rand),
        ("json-auth", "json", "auth", rand),
        ("sh-auth-token", "sh", "AUTH_TOKEN", rand),
        ("json-webhook-secret-hex", "json", "webhook_secret", fake("whs", 40, HEX)),
        ("docker-access-key", "Dockerfile", "ACCESS_KEY", rand),
        ("yaml-secret-key-base", "yaml", "secret_key_base", fake("skb", 96, HEX)),
        ("env-master-key", "env", "MASTER_KEY", rand),
        ("env-encryption-key-hex", "env", "ENCRYPTION_KEY", fake("enc", 32, HEX)),
        ("toml-db-password", "toml", "db_password", pw),
        ("escaped-quotes-api-key", "escaped", "api_key", rand),
        ("notebook-api-key", "notebook", "api_key", rand),
        ("string-in-string-token", "string-in-string", "token", rand),
        ("double-escaped-password", "double-escaped", "password", pw),
        ("escaped-quotes-db-pass", "escaped", "DB_PASS", pw),
        ("aws-secret-key", "ini", "aws_secret_access_key", fake("awss", 40, B64)),
    ]
    return [_file(n, fmt, var, value) for n, fmt, var, value in cases]


def _url_cases() -> list[Planted]:
    pw = _password("url-pw")
    rand = fake("url-rand", 24)
    urls = {
        "postgres-url": f"postgresql://app:{pw}@db.internal.corp:5432/prod",
        "mysql-url": f"mysql://root:{rand}@mysql.internal.corp/app",
        "redis-url": f"redis://:{rand}@cache.internal.corp:6379/0",
        "mongodb-url": f"mongodb+srv://svc:{pw}@cluster0.internal.corp/db",
        "amqp-url": f"amqp://worker:{rand}@mq.internal.corp:5672/vhost",
        "https-basic-auth": f"https://deploy:{rand}@git.internal.corp/org/repo.git",
    }
    needle = {"postgres-url": pw, "mongodb-url": pw}
    out = [
        _file(n, "py" if i % 2 else "yaml", "DATABASE_URL", u, needle.get(n, rand))
        for i, (n, u) in enumerate(urls.items())
    ]
    out.append(
        Planted(
            "adonet-dsn",
            "file",
            "planted/adonet-dsn.config",
            f'<add name="db" connectionString="Server=sql01;User Id=app;Password={pw};" />\n',
            (pw,),
        )
    )
    out.append(
        _file("jdbc-url", "ini", "url", f"jdbc:mysql://sql01/app?user=app&password={pw}", pw)
    )
    return out


def _key_cases() -> list[Planted]:
    out = []
    for name, pem in _keys().items():
        out.append(Planted(name, "file", f"planted/{name}.key", pem, _pem_body(pem)))
    rsa = new_rsa_pem()
    account = {
        "type": "service_account",
        "project_id": "planted",
        "private_key_id": fake("gcp-kid", 40, HEX),
        "private_key": rsa,
        "client_email": "svc@planted.iam.gserviceaccount.com",
    }
    # The private_key_id names the key (Google lists it in the console): not secret.
    needles = _pem_body(rsa)
    text = json.dumps(account, indent=2) + "\n"
    out.append(Planted("gcp-service-account", "file", "planted/gcp-sa.json", text, needles))
    return out


def _placement_cases() -> list[Planted]:
    tokens = _vendor_tokens()
    ghp, hf, gl = tokens["github-ghp"], tokens["huggingface"], tokens["gitlab-pat"]
    aiza, tw = tokens["google-api-key"], tokens["twilio-account"]
    b64 = base64.b64encode(ghp.encode()).decode()
    b64_auth = base64.b64encode(f"deploy:{gl}".encode()).decode()
    split_at = len(ghp) // 2
    return [
        Planted("file-name", "name", f"planted/names/{fake('n', 4)}-{hf}.txt", "notes\n", (hf,)),
        Planted("title", "title", "", f"Add deploy config with {aiza}", (aiza,)),
        Planted("description", "description", "", f"Deploy with key {tw}\n", (tw,)),
        Planted("base64-token", "file", "planted/b64.py", f'BLOB = "{b64}"\n', (b64, ghp)),
        Planted(
            "base64-docker-auth",
            "file",
            "planted/docker.yaml",
            f"registry: r.internal.corp\ndata: {b64_auth}\n",
            (b64_auth,),
        ),
        Planted(
            "split-python-concat",
            "file",
            "planted/split.py",
            f'HEADER = (\n    "{ghp[:split_at]}"\n    "{ghp[split_at:]}"\n)\n',
            (ghp[:split_at], ghp[split_at:]),
        ),
        Planted(
            "split-js-plus",
            "file",
            "planted/split.js",
            f'const h = "{hf[:15]}" +\n  "{hf[15:]}";\n',
            (hf[:15], hf[15:]),
        ),
        Planted(
            "split-backslash",
            "file",
            "planted/split.sh",
            f'H="{gl[:14]}\\\n{gl[14:]}"\n',
            (gl[:14], gl[14:]),
        ),
        Planted("comment", "file", "planted/comment.py", f"# use {ghp} for now\nx = 1\n", (ghp,)),
        Planted("markdown", "file", "planted/NOTES.md", f"Run with `{aiza}`.\n", (aiza,)),
        Planted("log-line", "file", "planted/run.log", f"INFO client key={tw} ok\n", (tw,)),
    ]


#: The formats issue 19 found sent to the model on main: each must be in the corpus.
SLIPPED = (
    "escaped-quotes-api-key",
    "notebook-api-key",
    "string-in-string-token",
    "file-name",
    "google-api-key",
    "huggingface",
    "db-pass",
    "session-key",
    "bare-token",
    "signing-key-hex",
    "yaml-pass",
    "base64-token",
    "split-python-concat",
    "twilio-account",
)


def corpus() -> list[Planted]:
    return _vendor_cases() + _generic_cases() + _url_cases() + _key_cases() + _placement_cases()
