# The server rejects a message it cannot read: no new session helps.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< audio 3200
> {"type":"Error","error_code":3006,"error":"Invalid Message Type: Foo"}
close 3006 Invalid Message Type: Foo
