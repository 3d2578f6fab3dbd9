# A user turn found by server VAD, answered with audio and its transcript;
# the user's words come back transcribed.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime","output_modalities":["audio"]}}
> {"type":"session.updated","event_id":"event_2","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime","output_modalities":["audio"]}}
< audio 9600
> {"type":"input_audio_buffer.speech_started","event_id":"event_3","audio_start_ms":20,"item_id":"item_u1"}
> {"type":"input_audio_buffer.speech_stopped","event_id":"event_4","audio_end_ms":180,"item_id":"item_u1"}
> {"type":"input_audio_buffer.committed","event_id":"event_5","previous_item_id":null,"item_id":"item_u1"}
> {"type":"conversation.item.added","event_id":"event_6","previous_item_id":null,"item":{"id":"item_u1","type":"message","status":"completed","role":"user","content":[{"type":"input_audio","transcript":null}]}}
> {"type":"response.created","event_id":"event_7","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","status_details":null,"output":[],"usage":null}}
> {"type":"response.output_item.added","event_id":"event_8","response_id":"resp_1","output_index":0,"item":{"id":"item_b1","type":"message","status":"in_progress","role":"assistant","content":[]}}
> {"type":"response.content_part.added","event_id":"event_9","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"part":{"type":"audio","transcript":""}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_10","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"Hel"}
> {"type":"response.output_audio.delta","event_id":"event_11","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio_transcript.delta","event_id":"event_12","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"lo there,"}
> {"type":"response.output_audio.delta","event_id":"event_13","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"conversation.item.input_audio_transcription.delta","event_id":"event_14","item_id":"item_u1","content_index":0,"delta":"Hi"}
> {"type":"conversation.item.input_audio_transcription.completed","event_id":"event_15","item_id":"item_u1","content_index":0,"transcript":"Hi!","usage":{"type":"duration","seconds":1}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_16","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":" friend."}
> {"type":"response.output_audio.done","event_id":"event_17","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0}
> {"type":"response.output_audio_transcript.done","event_id":"event_18","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"transcript":"Hello there, friend."}
> {"type":"response.content_part.done","event_id":"event_19","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"part":{"type":"audio","transcript":"Hello there, friend."}}
> {"type":"response.output_item.done","event_id":"event_20","response_id":"resp_1","output_index":0,"item":{"id":"item_b1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_audio","transcript":"Hello there, friend."}]}}
> {"type":"response.done","event_id":"event_21","response":{"object":"realtime.response","id":"resp_1","status":"completed","status_details":null,"output":[{"id":"item_b1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_audio","transcript":"Hello there, friend."}]}],"usage":{"total_tokens":120,"input_tokens":100,"output_tokens":20,"input_token_details":{"text_tokens":40,"audio_tokens":60,"cached_tokens":64},"output_token_details":{"text_tokens":5,"audio_tokens":15}}}}
> {"type":"rate_limits.updated","event_id":"event_22","rate_limits":[{"name":"requests","limit":1000,"remaining":999,"reset_seconds":0.06},{"name":"tokens","limit":50000,"remaining":49880,"reset_seconds":0.2}]}
