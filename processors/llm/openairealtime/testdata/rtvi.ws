# The UI agent's session through the Realtime API, as the RTVI client sees
# it: the greeting said verbatim at client-ready, a typed question and a
# spoken one, each answered by one reply call whose answer is said
# verbatim. The transcripts come in pieces, as the service streams them.
# The user speaks once the typed answer has been heard (a barge-in cuts
# what has not been played).
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
< has \n\nHi! I can see this page.
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_g","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_3","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":"Hi! I can"}
> {"type":"response.output_audio.delta","event_id":"event_4","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio_transcript.delta","event_id":"event_5","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":" see this page."}
> {"type":"response.output_audio.delta","event_id":"event_6","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio_transcript.done","event_id":"event_7","response_id":"resp_g","item_id":"item_g","output_index":0,"content_index":0,"transcript":"Hi! I can see this page."}
> {"type":"response.done","event_id":"event_8","response":{"object":"realtime.response","id":"resp_g","status":"completed","output":[{"id":"item_g","type":"message","role":"assistant"}]}}
< has What is this form for?
< response.create
> {"type":"response.created","event_id":"event_9","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.function_call_arguments.done","event_id":"event_10","response_id":"resp_1","item_id":"item_f1","output_index":0,"call_id":"call_r1","name":"reply","arguments":"{\"answer\":\"It is a job application.\"}"}
> {"type":"response.done","event_id":"event_11","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"reply","call_id":"call_r1","arguments":"{\"answer\":\"It is a job application.\"}"}]}}
< has \n\nIt is a job application.
> {"type":"response.created","event_id":"event_12","response":{"object":"realtime.response","id":"resp_2","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_13","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"It is a job"}
> {"type":"response.output_audio.delta","event_id":"event_14","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio_transcript.delta","event_id":"event_15","response_id":"resp_2","item_id":"item_a2","output_index":0,"content_index":0,"delta":" application."}
> {"type":"response.done","event_id":"event_16","response":{"object":"realtime.response","id":"resp_2","status":"completed","output":[{"id":"item_a2","type":"message","role":"assistant"}]}}
< has "call_id":"call_r1"
< until the typed answer was heard
> {"type":"input_audio_buffer.speech_started","event_id":"event_17","audio_start_ms":4000,"item_id":"item_u2"}
> {"type":"input_audio_buffer.speech_stopped","event_id":"event_18","audio_end_ms":5200,"item_id":"item_u2"}
> {"type":"input_audio_buffer.committed","event_id":"event_19","previous_item_id":"item_a2","item_id":"item_u2"}
< response.create
> {"type":"response.created","event_id":"event_20","response":{"object":"realtime.response","id":"resp_3","status":"in_progress","output":[]}}
> {"type":"conversation.item.input_audio_transcription.completed","event_id":"event_21","item_id":"item_u2","content_index":0,"transcript":"Where do I submit it?"}
> {"type":"response.done","event_id":"event_22","response":{"object":"realtime.response","id":"resp_3","status":"completed","output":[{"id":"item_f3","type":"function_call","status":"completed","name":"reply","call_id":"call_r2","arguments":"{\"answer\":\"With the button at the bottom.\",\"scroll_to\":\"e6\"}"}]}}
< has \n\nWith the button at the bottom.
> {"type":"response.created","event_id":"event_23","response":{"object":"realtime.response","id":"resp_4","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_24","response_id":"resp_4","item_id":"item_a4","output_index":0,"content_index":0,"delta":"With the button at the bottom."}
> {"type":"response.output_audio.delta","event_id":"event_25","response_id":"resp_4","item_id":"item_a4","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_26","response":{"object":"realtime.response","id":"resp_4","status":"completed","output":[{"id":"item_a4","type":"message","role":"assistant"}]}}
