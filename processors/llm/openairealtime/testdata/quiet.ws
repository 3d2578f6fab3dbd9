# A session quiet for longer than the idle bound; then the client asks for
# a response, which the server starts after a while (the test's "slow":
# longer than a quarter of the idle bound, shorter than the first-byte
# bound).
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< response.create
< until slow
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_3","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Still here."}
> {"type":"response.done","event_id":"event_4","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_b1","type":"message","role":"assistant"}]}}
