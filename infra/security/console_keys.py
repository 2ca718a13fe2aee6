"""The web console's cookie keys, derived (HKDF-SHA256) from the token signing key that every API
process shares, so a session made by one process is read by any other, and rotating the signing
key (which revokes every token) ends every console session with it."""

import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from infra.settings import AuthSettings


def _derive(auth: AuthSettings, purpose: bytes) -> bytes:
    if not auth.signing_key:
        # No signing key: no sign-in can succeed, so no session needs to outlive the process.
        return os.urandom(32)
    kdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose)
    return kdf.derive(auth.signing_key.encode())


def session_key(auth: AuthSettings) -> bytes:
    """The AES-256-GCM key that seals the session cookie (its content is unreadable and
    unforgeable in the browser)."""
    return _derive(auth, b"trainplate console session")


def csrf_secret(auth: AuthSettings) -> str:
    """The key the CSRF tokens are signed with."""
    return _derive(auth, b"trainplate console csrf").hex()
