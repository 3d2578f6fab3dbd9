# The server stops reading (so it answers no ping) until the test has seen
# the connection end.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< until the client gave up
