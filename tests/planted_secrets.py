"""Secrets in shapes no deny-list names (issue 41.1), planted by tests/cli/test_secrets.py and tests/test_harmless.py:
random key names (``apitoken``, ``clientsecret``, ``creds``, ``pass``, ``deploy_key`` and a random one) holding
lower-case-only and hex tokens, a PEM private key, a JWT split across lines, an Azure SAS signature
percent-encoded inside a harmless-looking query name, base64 basic credentials, a URL password holding / # ?.
Drawn from a seeded generator: the same on every run, of no shape a rule was written for."""

from __future__ import annotations

import base64
import random

_RNG = random.Random(41)


def _token(n: int, alphabet: str = "abcdefghijkmnopqrstuvwxyz") -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


PLAIN_LOWER = _token(14)  # lower-case letters only: no "random token" shape
HEXISH = _token(24, "0123456789abcdef")
RANDOM_KEY_NAME = "zq" + _token(6)  # a key name no list holds
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + _token(8)
PEM = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"
JWT_HEAD, JWT_BODY, JWT_SIG = "eyJhbGciOiJSUzI1NiJ9", "eyJzdWIiOiJzcGxpdCJ9", "splitsig" + _token(10)
SPLIT_JWT = f"{JWT_HEAD}\n.{JWT_BODY}\n.{JWT_SIG}"
SAS_SIG = "sv2022" + _token(10)
SAS_URL_ENCODED = ("https%3A%2F%2Facct.blob.core.windows.net%2Fc%2Fb%3Fsv%3D2022-11-02%26sig%3D" + SAS_SIG)
BASIC = base64.b64encode(f"deploy:{PLAIN_LOWER}".encode()).decode()
SLASH_PASSWORD = "pw/" + _token(6) + "#q?" + _token(4)
NEW_SECRETS = (PLAIN_LOWER, HEXISH, PEM_BODY, JWT_HEAD, JWT_BODY, JWT_SIG, SAS_SIG, BASIC, SLASH_PASSWORD)
NEW_ARGS = {"apitoken": PLAIN_LOWER, "clientsecret": HEXISH, "creds": BASIC, "pass": PLAIN_LOWER,
            "deploy_key": PEM, RANDOM_KEY_NAME: SPLIT_JWT, "blob": f"https://h.example/get?path={SAS_URL_ENCODED}",
            "mirror": f"http://mirror:{SLASH_PASSWORD}@h.example/"}
NEW_ERROR = (f"AuthenticationError: Error code: 401 - key {PEM} jwt {SPLIT_JWT} for "
             f"https://h.example/x?path={SAS_URL_ENCODED} creds={BASIC} via http://mirror:{SLASH_PASSWORD}@h.example/")
