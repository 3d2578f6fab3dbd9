# The server sends one event larger than the client's 8 MiB bound.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< send bytes 8388700
