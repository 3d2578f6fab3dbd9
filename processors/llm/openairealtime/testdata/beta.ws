# The beta interface's event names for the same turn.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"id":"sess_1","object":"realtime.session","model":"gpt-4o-realtime-preview"}}
> {"type":"input_audio_buffer.speech_started","event_id":"event_3","audio_start_ms":20,"item_id":"item_u1"}
> {"type":"input_audio_buffer.speech_stopped","event_id":"event_4","audio_end_ms":180,"item_id":"item_u1"}
> {"type":"input_audio_buffer.committed","event_id":"event_5","previous_item_id":null,"item_id":"item_u1"}
> {"type":"conversation.item.created","event_id":"event_6","previous_item_id":null,"item":{"id":"item_u1","type":"message","status":"completed","role":"user","content":[{"type":"input_audio","transcript":null}]}}
> {"type":"response.created","event_id":"event_7","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.audio_transcript.delta","event_id":"event_10","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Hi."}
> {"type":"response.audio.delta","event_id":"event_11","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.audio.done","event_id":"event_17","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0}
> {"type":"response.done","event_id":"event_21","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_b1","type":"message","role":"assistant"}]}}
