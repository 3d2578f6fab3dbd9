# A function call's follow-up and a spoken answer asked for while the
# server runs another response wait for its response.done, then go one at
# a time (the fake refuses a response.create during a response, as the
# service does).
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.done","event_id":"event_3","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"get_weather","call_id":"call_w1","arguments":"{\"city\":\"Paris\"}"}]}}
> {"type":"response.created","event_id":"event_4","response":{"object":"realtime.response","id":"resp_2","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_5","response_id":"resp_2","item_id":"item_b2","output_index":0,"content_index":0,"delta":"One moment."}
> {"type":"response.output_audio.delta","event_id":"event_6","response_id":"resp_2","item_id":"item_b2","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
< has "call_id":"call_w1"
< until both wait
> {"type":"response.done","event_id":"event_7","response":{"object":"realtime.response","id":"resp_2","status":"completed","output":[{"id":"item_b2","type":"message","role":"assistant"}]}}
< response.create
> {"type":"response.created","event_id":"event_8","response":{"object":"realtime.response","id":"resp_3","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_9","response_id":"resp_3","item_id":"item_b3","output_index":0,"content_index":0,"delta":"First answer."}
> {"type":"response.output_audio.delta","event_id":"event_10","response_id":"resp_3","item_id":"item_b3","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_11","response":{"object":"realtime.response","id":"resp_3","status":"completed","output":[{"id":"item_b3","type":"message","role":"assistant"}]}}
< response.create
> {"type":"response.created","event_id":"event_12","response":{"object":"realtime.response","id":"resp_4","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_13","response_id":"resp_4","item_id":"item_b4","output_index":0,"content_index":0,"delta":"Second answer."}
> {"type":"response.output_audio.delta","event_id":"event_14","response_id":"resp_4","item_id":"item_b4","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_15","response":{"object":"realtime.response","id":"resp_4","status":"completed","output":[{"id":"item_b4","type":"message","role":"assistant"}]}}
