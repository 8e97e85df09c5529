"""Passwords as argon2id hashes (pwdlib), never kept or logged in clear.

Guarantees: ``hash_password`` gives a fresh argon2id hash (its own salt; pwdlib's recommended cost);
``password_matches`` checks a password against a hash in the same time whether or not the hash exists (an unknown
account is checked against a throwaway hash), so timing does not say which names exist; a hash that is not one
(empty, damaged) never matches.
"""

from __future__ import annotations

from functools import cache

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

MIN_CHARS = 8
MAX_CHARS = 1024  # argon2 takes any length; a megabyte "password" is a way to spend the server's time


@cache
def _hasher() -> PasswordHash:
    return PasswordHash((Argon2Hasher(),))


@cache
def _throwaway() -> str:
    return _hasher().hash("a password nobody has")


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def password_matches(password: str, password_hash: str) -> bool:
    if len(password) > MAX_CHARS:
        return False
    try:
        ok = _hasher().verify(password, password_hash or _throwaway())
    except Exception:  # noqa: BLE001 - pwdlib raises its own errors for a hash it cannot read: no match
        _hasher().verify(password, _throwaway())
        return False
    return ok and bool(password_hash)


def password_problem(password: str) -> str | None:
    """Why ``password`` cannot be an account's, in a sentence; None when it can."""
    if len(password) < MIN_CHARS:
        return f"A password needs at least {MIN_CHARS} characters."
    if len(password) > MAX_CHARS:
        return f"A password may have at most {MAX_CHARS} characters."
    return None
