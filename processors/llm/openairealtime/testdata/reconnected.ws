# The session after a reconnection: configured again, then quiet.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_2","model":"gpt-realtime"}}
