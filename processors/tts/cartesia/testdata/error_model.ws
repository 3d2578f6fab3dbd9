# The current error shape (API version 2026-03-01): title, message, error_code.
< request
> {"type":"error","done":true,"title":"Invalid model","message":"The model is not valid, make sure it is a valid model ID.","error_code":"model_not_found","status_code":400,"context_id":"$CTX"}
