# The server starts a response by itself (server VAD) just as the client
# asks for one: it refuses the client's response.create with the error the
# service sends (testdata/active_response_refusal.golden.json), once naming
# the client event, once without (error.event_id null, as the service also
# answers); each time the request waits for that response's end and goes
# again.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< response.create
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_v1","status":"in_progress","output":[]}}
> {"type":"error","event_id":"event_3","error":{"type":"invalid_request_error","code":"conversation_already_has_active_response","message":"Conversation already has an active response in progress: resp_v1. Wait until the response is finished before creating a new one.","param":null,"event_id":"fw_resp_1"}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_4","response_id":"resp_v1","item_id":"item_v1","output_index":0,"content_index":0,"delta":"Yes?"}
> {"type":"response.done","event_id":"event_5","response":{"object":"realtime.response","id":"resp_v1","status":"completed","output":[{"id":"item_v1","type":"message","role":"assistant"}]}}
< response.create
> {"type":"response.created","event_id":"event_6","response":{"object":"realtime.response","id":"resp_v2","status":"in_progress","output":[]}}
> {"type":"error","event_id":"event_7","error":{"type":"invalid_request_error","code":"conversation_already_has_active_response","message":"Conversation already has an active response in progress: resp_v2. Wait until the response is finished before creating a new one.","param":null,"event_id":null}}
> {"type":"response.done","event_id":"event_8","response":{"object":"realtime.response","id":"resp_v2","status":"completed","output":[]}}
< response.create
> {"type":"response.created","event_id":"event_9","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_10","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Hello there."}
> {"type":"response.output_audio.delta","event_id":"event_11","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_12","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_b1","type":"message","role":"assistant"}]}}
