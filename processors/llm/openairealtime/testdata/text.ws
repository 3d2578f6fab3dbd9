# A text response (output_modalities ["text"]): response.output_text.delta
# events, no audio.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime","output_modalities":["text"]}}
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_text.delta","event_id":"event_3","response_id":"resp_1","item_id":"item_t1","output_index":0,"content_index":0,"delta":"Two sentences. And"}
> {"type":"response.output_text.delta","event_id":"event_4","response_id":"resp_1","item_id":"item_t1","output_index":0,"content_index":0,"delta":" the second."}
> {"type":"response.output_text.done","event_id":"event_5","response_id":"resp_1","item_id":"item_t1","output_index":0,"content_index":0,"text":"Two sentences. And the second."}
> {"type":"response.done","event_id":"event_6","response":{"object":"realtime.response","id":"resp_1","status":"completed","output":[{"id":"item_t1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Two sentences. And the second."}]}]}}
