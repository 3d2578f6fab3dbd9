# A greeting said verbatim, then a typed question answered by one reply
# call whose answer is said verbatim (Realtime API GA events).
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< has \n\nHello from the page.
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_g","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_3","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":"Hello from the page."}
> {"type":"response.output_audio.delta","event_id":"event_4","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
> {"type":"response.done","event_id":"event_5","response":{"object":"realtime.response","id":"resp_g","status":"completed","output":[{"id":"item_g","type":"message","role":"assistant"}]}}
< has Where is the form?
< has "type":"response.create"
> {"type":"response.created","event_id":"event_6","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.done","event_id":"event_7","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"reply","call_id":"call_r1","arguments":"{\"answer\":\"Below the essay.\",\"highlight\":[\"e2\"]}"}]}}
< has \n\nBelow the essay.
> {"type":"response.created","event_id":"event_8","response":{"object":"realtime.response","id":"resp_2","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_9","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"Below the essay."}
> {"type":"response.output_audio.delta","event_id":"event_10","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}
> {"type":"response.done","event_id":"event_11","response":{"object":"realtime.response","id":"resp_2","status":"completed","output":[{"id":"item_a2","type":"message","role":"assistant"}]}}
