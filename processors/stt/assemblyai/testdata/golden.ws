# Everything the client sends in one session, for the golden record.
> {"type":"Begin","id":"9b1c2f04-5e1a-4c7e-8f43-2d0a6b7e1c55","expires_at":1759796682}
< audio 3200
< force_endpoint
< update
< keepalive
< terminate
> {"type":"Termination","audio_duration_seconds":0,"session_duration_seconds":1}
close 1000
