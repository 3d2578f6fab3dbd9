# The user barges in after hearing 300 ms of a 500 ms answer: the client
# truncates the item at 300 ms and cancels the response; a late delta of
# the cancelled response is not played.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_3","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Once upon a time there was"}
> {"type":"response.output_audio.delta","event_id":"event_4","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio.delta","event_id":"event_5","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio.delta","event_id":"event_6","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio.delta","event_id":"event_7","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio.delta","event_id":"event_8","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
< played 300
> {"type":"input_audio_buffer.speech_started","event_id":"event_9","audio_start_ms":1200,"item_id":"item_u2"}
< conversation.item.truncate
< response.cancel
> {"type":"response.output_audio.delta","event_id":"event_10","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"conversation.item.truncated","event_id":"event_11","item_id":"item_b1","content_index":0,"audio_end_ms":300}
> {"type":"response.done","event_id":"event_12","response":{"object":"realtime.response","id":"resp_1","status":"cancelled","status_details":{"type":"cancelled","reason":"client_cancelled"},"output":[{"id":"item_b1","type":"message","status":"incomplete","role":"assistant"}]}}
