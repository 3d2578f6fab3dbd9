# The user speaks while a function call runs: the call is cancelled, its
# output says so, and no response is asked for.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.done","event_id":"event_3","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_f1","type":"function_call","status":"completed","name":"book_table","call_id":"call_b1","arguments":"{\"people\":4}"}]}}
< until started
> {"type":"input_audio_buffer.speech_started","event_id":"event_4","audio_start_ms":3000,"item_id":"item_u2"}
< conversation.item.create
