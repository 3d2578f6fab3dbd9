#!/usr/bin/env python3
"""Writes signature_vectors.json: Telnyx webhook signatures made by openssl
(Ed25519, `openssl pkeyutl -sign -rawin`), never by the Go code under test.
Python only assembles the JSON. Run from this directory:

    python3 signature_gen.py > signature_vectors.json

The keys are test keys made with `openssl genpkey -algorithm ed25519`.
"""
import base64, json, subprocess, tempfile


def openssl(*args, data=None):
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def public_key(pem):
    der = openssl("pkey", "-in", pem, "-pubout", "-outform", "DER")
    return base64.b64encode(der[-32:]).decode()  # SPKI ends with the raw 32-byte key


def sign(pem, message):
    with tempfile.NamedTemporaryFile() as f:
        f.write(message)
        f.flush()
        sig = openssl("pkeyutl", "-sign", "-inkey", pem, "-rawin", "-in", f.name)
    return base64.b64encode(sig).decode()


KEY = "signature_test_key.pem"
call_initiated = json.dumps({"data": {
    "event_type": "call.initiated", "id": "0ccc7b54-4df3-4bca-a65a-3da1ecc777f0",
    "occurred_at": "2026-12-02T14:00:00.000000Z", "record_type": "event",
    "payload": {"call_control_id": "v3:abc", "call_leg_id": "428c31b6-7af4-4bcb-b7f5-5013ef9657c1",
                "connection_id": "1234567890", "direction": "incoming",
                "from": "+35319605860", "to": "+13125550100", "state": "parked"}},
    "meta": {"attempt": 1, "delivered_to": "https://bot.example.com/telnyx/voice"}},
    separators=(",", ":"))
texml = "CallSid=v3%3Aabc&AccountSid=7e5a&From=%2B35319605860&To=%2B13125550100&Direction=inbound"

cases = []
for name, ts, body in [
    ("call control JSON webhook", "1796220000", call_initiated),
    ("TeXML form webhook", "1796220001", texml),
    ("empty body", "1796220002", ""),
    ("body with a pipe and newline", "1796220003", "a|b\n{\"x\":\"|\"}\n"),
]:
    msg = (ts + "|" + body).encode()
    cases.append(dict(name=name, public_key=public_key(KEY), timestamp=ts,
                      body=body, signature=sign(KEY, msg)))

print(json.dumps({"public_key": public_key(KEY),
                  "other_public_key": public_key("signature_other_key.pem"),
                  "vectors": cases}, indent=2))
