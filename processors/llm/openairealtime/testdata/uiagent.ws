# The UI agent through the Realtime API: a typed form-fill turn, then a
# spoken pointing turn. Each answer comes as one reply call; the spoken
# answer is asked for as a verbatim response.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< response.create
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.function_call_arguments.done","event_id":"event_3","response_id":"resp_1","item_id":"item_f1","output_index":0,"call_id":"call_r1","name":"reply","arguments":"{\"answer\":\"Done: I filled in your name and email and agreed to the terms.\",\"scroll_to\":\"e3\",\"highlight\":[\"e2\"],\"fills\":[{\"ref\":\"e3\",\"value\":\"Mark\"},{\"ref\":\"e4\",\"value\":\"mark@daily.co\"}],\"click\":[\"e5\"]}"}
> {"type":"response.done","event_id":"event_4","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"reply","call_id":"call_r1","arguments":"{\"answer\":\"Done: I filled in your name and email and agreed to the terms.\",\"scroll_to\":\"e3\",\"highlight\":[\"e2\"],\"fills\":[{\"ref\":\"e3\",\"value\":\"Mark\"},{\"ref\":\"e4\",\"value\":\"mark@daily.co\"}],\"click\":[\"e5\"]}"}]}}
< response.create
> {"type":"response.created","event_id":"event_5","response":{"object":"realtime.response","id":"resp_2","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_6","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"Done: I filled in your name and email and agreed to the terms."}
> {"type":"response.output_audio.delta","event_id":"event_7","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_8","response":{"object":"realtime.response","id":"resp_2","status":"completed","output":[{"id":"item_a2","type":"message","role":"assistant"}]}}
< has "call_id":"call_r1"
> {"type":"input_audio_buffer.speech_started","event_id":"event_9","audio_start_ms":4000,"item_id":"item_u2"}
> {"type":"input_audio_buffer.speech_stopped","event_id":"event_10","audio_end_ms":5200,"item_id":"item_u2"}
> {"type":"input_audio_buffer.committed","event_id":"event_11","previous_item_id":"item_a2","item_id":"item_u2"}
< response.create
> {"type":"response.created","event_id":"event_12","response":{"object":"realtime.response","id":"resp_3","status":"in_progress","output":[]}}
> {"type":"conversation.item.input_audio_transcription.completed","event_id":"event_13","item_id":"item_u2","content_index":0,"transcript":"Where do I submit it?"}
> {"type":"response.done","event_id":"event_14","response":{"object":"realtime.response","id":"resp_3","status":"completed","output":[{"id":"item_f3","type":"function_call","status":"completed","name":"reply","call_id":"call_r2","arguments":"{\"answer\":\"With this button.\",\"scroll_to\":\"e6\",\"highlight\":[\"e6\"]}"}]}}
< response.create
> {"type":"response.created","event_id":"event_15","response":{"object":"realtime.response","id":"resp_4","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_16","response_id":"resp_4","item_id":"item_a4","output_index":0,"content_index":0,"delta":"With this button."}
> {"type":"response.output_audio.delta","event_id":"event_17","response_id":"resp_4","item_id":"item_a4","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_18","response":{"object":"realtime.response","id":"resp_4","status":"completed","output":[{"id":"item_a4","type":"message","role":"assistant"}]}}
