# Over the account's concurrency limit: refused before Begin; a later try can succeed.
> {"type":"Error","error_code":3009,"error":"Unauthorized Connection: Too many concurrent sessions"}
close 3009 Unauthorized Connection: Too many concurrent sessions
