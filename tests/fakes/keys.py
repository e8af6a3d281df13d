"""Private keys made at run time, so that no file of this repository holds one."""

from __future__ import annotations

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def new_rsa_pem() -> str:
    """A new 2048-bit RSA private key in PEM, "BEGIN RSA PRIVATE KEY" (GitHub's App keys
    have this form, and so do the keys people commit by mistake)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
