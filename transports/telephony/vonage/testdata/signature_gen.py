#!/usr/bin/env python3
"""Writes signature_vectors.json: Vonage webhook JWTs made with the Python
standard library only (hmac, hashlib, base64, json), never by the Go code
under test. Run from this directory:

    python3 signature_gen.py > signature_vectors.json

A token is base64url(header) "." base64url(claims) "." base64url(HMAC-SHA256(
signature secret, the first two parts)), unpadded; payload_hash is the hex
SHA-256 of the payload: a POST's raw body, or for a GET its query
parameters as a compact JSON object in their order.
"""
import base64, hashlib, hmac, json
from urllib.parse import parse_qsl

SECRET = "5ig-secret-for-tests-0123456789abcdef"  # made up
OTHER = "another-accounts-signature-secret"
IAT = 1796220000
API_KEY = "a1b2c3d4"
APP = "aaaaaaaa-bbbb-cccc-dddd-0123456789ab"


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def token(claims, secret=SECRET, alg="HS256"):
    head = b64(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64(json.dumps(claims, separators=(",", ":")).encode())
    signing = (head + "." + body).encode()
    digest = {"HS256": hashlib.sha256, "HS512": hashlib.sha512, "RS256": hashlib.sha256}.get(alg)
    sig = b64(hmac.new(secret.encode(), signing, digest).digest()) if digest else ""
    return head + "." + body + "." + sig


def sha(b):
    return hashlib.sha256(b).hexdigest()


def claims(payload, **extra):
    c = {"iat": IAT, "jti": "c5ba8f24-1a14-4c10-bfdf-3fbe8ce511b5", "iss": "Vonage",
         "payload_hash": sha(payload), "api_key": API_KEY, "application_id": APP}
    c.update(extra)
    return {k: v for k, v in c.items() if v is not None}


def query_payload(q):
    # JSON.stringify of the parsed query: keys in order, first value, compact,
    # no escaping beyond JSON's own.
    d = {}
    for k, v in parse_qsl(q, keep_blank_values=True):
        d.setdefault(k, v)
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()


answer = json.dumps({"to": "447700900000", "from": "447700900001", "uuid": "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
                     "conversation_uuid": "CON-aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
                     "region_url": "https://api-eu-3.vonage.com", "custom_data": {}}, separators=(",", ":"))
get_query = "to=447700900000&from=447700900001&conversation_uuid=CON-aaaa&uuid=aaaa&region_url=https%3A%2F%2Fapi-eu-3.vonage.com&name=Zo%C3%AB+%22Z%22+%3Cz%3E"

valid = [
    dict(name="answer POST", method="POST", url="https://bot.example.com/vonage/answer", body=answer,
         token=token(claims(answer.encode()))),
    dict(name="answer GET", method="GET", url="https://bot.example.com/vonage/answer?" + get_query, body="",
         query_payload=query_payload(get_query).decode(),
         token=token(claims(query_payload(get_query)))),
    dict(name="event POST, empty body", method="POST", url="https://bot.example.com/vonage/event", body="",
         token=token(claims(b""))),
]
post = answer.encode()
invalid = [
    dict(name="signed with another secret", token=token(claims(post), secret=OTHER), want="token"),
    dict(name="alg none", token=token(claims(post), alg="none"), want="token"),
    dict(name="alg HS512", token=token(claims(post), alg="HS512"), want="token"),
    dict(name="alg RS256 header, HMAC signature", token=token(claims(post), alg="RS256"), want="token"),
    dict(name="no iat", token=token(claims(post, iat=None)), want="timestamp"),
    dict(name="no payload_hash", token=token(claims(post, payload_hash=None)), want="payload_hash"),
    dict(name="payload_hash of another body", token=token(claims(b"{}")), want="payload_hash"),
    dict(name="expired", token=token(claims(post, exp=IAT - 3600)), want="timestamp"),
    dict(name="another api_key", token=token(claims(post, api_key="zzzz9999")), want="api_key"),
]
print(json.dumps({"secret": SECRET, "iat": IAT, "api_key": API_KEY, "valid": valid,
                  "invalid_for_answer_post": invalid}, indent=2, ensure_ascii=False))
