# A key the server refuses: an Error message, then a close with the same
# code; no Begin.
> {"type":"Error","error_code":1008,"error":"Unauthorized Connection: Invalid API key"}
close 1008 Unauthorized Connection: Invalid API key
