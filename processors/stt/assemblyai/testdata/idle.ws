# A quiet session: the client sends KeepAlive (and pings) while no audio goes up.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< keepalive
