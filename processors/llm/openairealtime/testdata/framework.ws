# Framework-side turns: the pipeline says the user stopped; the client
# commits the buffer and asks for the response.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< input_audio_buffer.commit
> {"type":"input_audio_buffer.committed","event_id":"event_2","previous_item_id":"item_prev","item_id":"item_u1"}
< response.create
> {"type":"response.created","event_id":"event_3","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_4","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Yes."}
> {"type":"response.output_audio.delta","event_id":"event_5","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_6","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_b1","type":"message","role":"assistant"}]}}
