# The model calls two functions in one response; their outputs go back as
# function_call_output items and one response.create follows.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"input_audio_buffer.speech_started","event_id":"event_2","audio_start_ms":0,"item_id":"item_u1"}
> {"type":"input_audio_buffer.speech_stopped","event_id":"event_3","audio_end_ms":900,"item_id":"item_u1"}
> {"type":"input_audio_buffer.committed","event_id":"event_4","previous_item_id":null,"item_id":"item_u1"}
> {"type":"response.created","event_id":"event_5","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_item.added","event_id":"event_6","response_id":"resp_1","output_index":0,"item":{"id":"item_f1","type":"function_call","status":"in_progress","name":"get_weather","call_id":"call_w1","arguments":""}}
> {"type":"response.function_call_arguments.delta","event_id":"event_7","response_id":"resp_1","item_id":"item_f1","output_index":0,"call_id":"call_w1","delta":"{\"city\":"}
> {"type":"response.function_call_arguments.delta","event_id":"event_8","response_id":"resp_1","item_id":"item_f1","output_index":0,"call_id":"call_w1","delta":"\"Paris\"}"}
> {"type":"response.function_call_arguments.done","event_id":"event_9","response_id":"resp_1","item_id":"item_f1","output_index":0,"call_id":"call_w1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}
> {"type":"response.output_item.added","event_id":"event_10","response_id":"resp_1","output_index":1,"item":{"id":"item_f2","type":"function_call","status":"in_progress","name":"get_time","call_id":"call_t1","arguments":""}}
> {"type":"response.function_call_arguments.done","event_id":"event_11","response_id":"resp_1","item_id":"item_f2","output_index":1,"call_id":"call_t1","name":"get_time","arguments":"{\"zone\":\"Europe/Paris\"}"}
> {"type":"response.done","event_id":"event_12","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"get_weather","call_id":"call_w1","arguments":"{\"city\":\"Paris\"}"},{"id":"item_f2","type":"function_call","status":"completed","name":"get_time","call_id":"call_t1","arguments":"{\"zone\":\"Europe/Paris\"}"}],"usage":{"total_tokens":50,"input_tokens":40,"output_tokens":10}}}
< response.create
> {"type":"response.created","event_id":"event_13","response":{"object":"realtime.response","id":"resp_2","status":"in_progress","output":[]}}
> {"type":"response.output_audio_transcript.delta","event_id":"event_14","response_id":"resp_2","item_id":"item_b2","output_index":0,"content_index":0,"delta":"Sunny, and it is noon."}
> {"type":"response.output_audio.delta","event_id":"event_15","response_id":"resp_2","item_id":"item_b2","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.done","event_id":"event_16","response":{"object":"realtime.response","id":"resp_2","status":"completed","output":[{"id":"item_b2","type":"message","role":"assistant"}]}}
