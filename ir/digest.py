"""SHA-256 without hashlib: hashlib loads OpenSSL's libcrypto (~2-5 ms), CPython's own
implementation (`_sha256` in 3.11, `_sha2` from 3.12) is a small extension module. Cache keys and
integrity checks hash a few kilobytes to megabytes, where the two are as fast.

Plain Python, no dependencies: every package of aot may import it.
"""
from __future__ import annotations

try:
    from _sha256 import sha256
except ImportError:  # pragma: no cover - other Pythons
    try:
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
