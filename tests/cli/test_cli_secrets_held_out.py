"""``gitneural review`` keeps the held-out corpus' secrets from the model (issue 31, 12).

A value given to a secret's name with fewer than two digits, one inside a string, an
Android string resource and a PyPI token of 60 characters once reached the prompt. The
values are built here, never written as literals.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_review import run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub
from tests.support.repos import commit, make_repo, stage

FEW_DIGITS = "kQzv" + "RmTnWpLsYdHbXcFgJ"
IN_STRING = "Zq" + "PwLmNvBx8RtYkHs"
ANDROID = "hG7" + "fTqzLwpXmRvN"
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + "Ab1" * 20
SECRETS = [FEW_DIGITS, IN_STRING, ANDROID, PYPI]
PLACEHOLDERS = ["changeme", "${API_KEY}", "<your-password>", "your-api-key-here", "xxxxxxxx"]


def test_the_prompt_holds_none_of_the_held_out_secrets_and_every_placeholder(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"README.md": "app\n"}, "initial")
    stage(
        repo,
        {
            ".env.production": f"APP_SECRET={FEW_DIGITS}\nDEBUG=false\n",
            "settings.py": (
                f'HEADER = "api_key = \\"{IN_STRING}\\""\n'
                f"UPLOAD = {PYPI!r}\n"
                'DEFAULTS = "api_key = \\"${API_KEY}\\""\n'
            ),
            "app/src/main/res/values/strings.xml": (
                "<resources>\n"
                f'    <string name="api_secret">{ANDROID}</string>\n'
                '    <string name="app_name">People</string>\n'
                "</resources>\n"
            ),
            ".env.example": (
                "APP_SECRET=changeme\nDB_PASSWORD=<your-password>\n"
                "API_KEY=your-api-key-here\nSIGNING_TOKEN=xxxxxxxx\n"
            ),
        },
    )
    reply = {"summary": "Settings only.", "findings": []}
    with K3Stub([submit(reply)]) as stub:
        result = run_cli(
            ["review", "--staged", "--effort", "low"], tmp_path / "repo", stub_env(stub)
        )
        [chat] = stub.chat_requests
    assert result.returncode in (0, 1), result.stderr
    prompt = json.dumps(chat.body)
    assert "People" in prompt and "DEBUG=false" in prompt  # the files were shown
    for secret in SECRETS:
        assert secret not in prompt and secret[-12:] not in prompt
    for placeholder in PLACEHOLDERS:
        assert json.dumps(placeholder)[1:-1] in prompt
