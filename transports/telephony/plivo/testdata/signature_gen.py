#!/usr/bin/env python3
"""Writes signature_vectors.json: Plivo V3 signatures computed with the
Python standard library only (hmac, hashlib, base64, urllib.parse), never by
the Go code under test. Run from this directory:

    python3 signature_gen.py > signature_vectors.json

String: scheme://host/path; GET: "?" + sorted name=value joined by "&" (when
any); POST: "?" if the query or body has parameters, the sorted query
name=value list, "." if both have, the sorted body name+value list. Then
"." + nonce; HMAC-SHA256 keyed with the auth token; base64.
"""
import base64, hashlib, hmac, json
from urllib.parse import parse_qs, urlencode, urlsplit

TOKEN = "MTIzNDU2Nzg5MGFiY2RlZjEyMzQ1Njc4OTBhYmNk"       # subaccount, made up
MAIN_TOKEN = "ZmVkY2JhMDk4NzY1NDMyMWZlZGNiYTA5ODc2NTQzMjE"  # main account, made up


def pairs(d):
    return [(k, v) for k in sorted(d) for v in sorted(d[k])]


def signed_string(method, url, body_params):
    u = urlsplit(url)
    base = u.scheme + "://" + u.netloc + u.path
    query = parse_qs(u.query, keep_blank_values=True)
    if method == "GET":
        for k, vs in body_params.items():
            query.setdefault(k, []).extend(vs)
        q = "&".join(k + "=" + v for k, v in pairs(query))
        return base + ("?" + q if q else "")
    q = "&".join(k + "=" + v for k, v in pairs(query))
    s = base
    if q or body_params:
        s += "?" + q
    if q and body_params:
        s += "."
    return s + "".join(k + v for k, v in pairs(body_params))


def sign(token, s, nonce):
    mac = hmac.new(token.encode(), (s + "." + nonce).encode(), hashlib.sha256)
    return base64.b64encode(mac.digest()).decode()


cases = []


def add(name, method, url, body="", nonce="05429567804466091622"):
    ct = "application/x-www-form-urlencoded" if method != "GET" else ""
    params = parse_qs(body, keep_blank_values=True) if method != "GET" else {}
    s = signed_string(method, url, params)
    cases.append(dict(name=name, auth_token=TOKEN, main_auth_token=MAIN_TOKEN,
                      method=method, url=url, content_type=ct, body=body,
                      nonce=nonce, signed_string=s,
                      signature=sign(TOKEN, s, nonce),
                      main_signature=sign(MAIN_TOKEN, s, nonce)))


answer = urlencode([
    ("CallUUID", "3e82ae9d-2c78-4d85-b1a4-6eae7dbafb36"),
    ("Direction", "inbound"),
    ("From", "14155551212"),
    ("To", "14155550100"),
    ("CallStatus", "ringing"),
    ("Event", "StartApp"),
    ("CallerName", "Ada Lovelace & Co"),
    ("SessionStart", "2026-12-02 14:00:00.000000"),
])
add("answer POST", "POST", "https://bot.example.com/plivo/answer", answer)
add("answer POST with a query", "POST", "https://bot.example.com/plivo/answer?bot=support&lang=en", answer, nonce="31627761595286130198")
add("answer GET", "GET", "https://bot.example.com/plivo/answer?CallUUID=3e82&From=14155551212&To=14155550100&Event=StartApp&CallerName=Ada%20Lovelace")
add("POST, no parameters at all", "POST", "https://bot.example.com/plivo/hangup", "")
add("POST with a query, empty body", "POST", "https://bot.example.com/plivo/hangup?call=1", "")
add("repeated names", "POST", "https://bot.example.com/plivo/answer?z=2&z=1", urlencode([("b", "2"), ("a", "y"), ("a", "x")]))
add("explicit port", "POST", "http://127.0.0.1:8080/plivo/answer", answer)

print(json.dumps(cases, indent=2))
