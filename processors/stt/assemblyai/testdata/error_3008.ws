# The session reached its maximum duration.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< audio 3200
> {"type":"Error","error_code":3008,"error":"Session Expired: Maximum session duration exceeded"}
close 3008 See Error message for details
