#!/usr/bin/env python3
"""Writes signature_vectors.json: Twilio webhook signatures computed with the
Python standard library only (hmac, hashlib, base64, urllib.parse), never by
the Go code under test. Run from this directory:

    python3 signature_gen.py > signature_vectors.json

The signed string is the URL followed by the form parameters, names sorted,
each name then value, no separators; HMAC-SHA1 keyed with the auth token;
base64. A JSON body is not in the string: the URL's bodySHA256 is its hex
SHA-256.
"""
import base64, hashlib, hmac, json
from urllib.parse import parse_qs, urlencode

TOKEN = "f3b1c0ffee5e1ec7ab1e5ca1ab1ed00d"


def sign(token, url, params):
    s = url
    for k in sorted(params):
        for v in sorted(set(params[k])):
            s += k + v
    mac = hmac.new(token.encode(), s.encode(), hashlib.sha1)
    return base64.b64encode(mac.digest()).decode(), s


def form(pairs):
    return urlencode(pairs)


cases = []


def add(name, method, url, body="", content_type="", token=TOKEN, signed_url=None):
    params = {}
    if content_type == "application/x-www-form-urlencoded":
        params = parse_qs(body, keep_blank_values=True)
    sig, s = sign(token, signed_url or url, params)
    cases.append(dict(name=name, auth_token=token, method=method, url=url,
                      content_type=content_type, body=body,
                      signed_string=s, signature=sig))


voice = form([
    ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
    ("ApiVersion", "2010-04-01"),
    ("CallSid", "CA0123456789abcdef0123456789abcdef"),
    ("CallStatus", "ringing"),
    ("Called", "+15005550006"),
    ("Caller", "+14155551212"),
    ("Direction", "inbound"),
    ("From", "+14155551212"),
    ("To", "+15005550006"),
    ("CallerName", "Ada Lovelace & Co"),
])
add("voice webhook POST", "POST", "https://bot.example.com/twilio/voice",
    voice, "application/x-www-form-urlencoded")
add("voice webhook POST with a query", "POST",
    "https://bot.example.com/twilio/voice?bot=support&lang=en-GB",
    voice, "application/x-www-form-urlencoded")
add("repeated parameter names, sorted values", "POST",
    "https://bot.example.com/twilio/status",
    form([("StatusCallbackEvent", "ringing"), ("CallSid", "CA1"),
          ("StatusCallbackEvent", "answered"), ("caller", "lower-case name sorts after upper")]),
    "application/x-www-form-urlencoded")
add("GET with parameters in the query", "GET",
    "https://bot.example.com/twilio/voice?CallSid=CA1&From=%2B14155551212&To=%2B15005550006")
add("signed with the default port, requested without", "POST",
    "https://bot.example.com/twilio/voice", voice,
    "application/x-www-form-urlencoded",
    signed_url="https://bot.example.com:443/twilio/voice")
add("non-default port", "POST", "http://127.0.0.1:8080/twilio/voice", voice,
    "application/x-www-form-urlencoded")
add("empty form body", "POST", "https://bot.example.com/twilio/voice", "",
    "application/x-www-form-urlencoded")
add("unicode parameter", "POST", "https://bot.example.com/twilio/voice",
    form([("CallerName", "Zoë Ångström"), ("CallSid", "CA2")]),
    "application/x-www-form-urlencoded")

# Twilio signs the media stream's WebSocket upgrade too (twilio.com/docs/
# global-infrastructure/firewall-configurations/media-streams-configuration):
# a GET of the wss URL, no parameters.
add("media stream upgrade", "GET", "wss://bot.example.com/twilio/media?token=one-time-abc")

jbody = '{"CallSid":"CA3","event":"answered"}'
h = hashlib.sha256(jbody.encode()).hexdigest()
add("JSON body with bodySHA256", "POST",
    "https://bot.example.com/twilio/events?bodySHA256=" + h, jbody,
    "application/json")

print(json.dumps(cases, indent=2, ensure_ascii=False))
