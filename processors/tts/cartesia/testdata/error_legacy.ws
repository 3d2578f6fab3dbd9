# The older error shape (API version 2024-11-13): one error string.
< request
> {"type":"error","done":true,"error":"Invalid voice: voice not found","status_code":400,"context_id":"$CTX"}
