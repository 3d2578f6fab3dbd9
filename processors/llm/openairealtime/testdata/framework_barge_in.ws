# Framework-side turns: the pipeline's own turn start interrupts the bot.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"response.created","event_id":"event_2","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.output_audio.delta","event_id":"event_3","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
> {"type":"response.output_audio.delta","event_id":"event_4","response_id":"resp_1","item_id":"item_b1","output_index":0,"content_index":0,"delta":"$AUDIO_100MS"}
< conversation.item.truncate
< response.cancel
> {"type":"response.done","event_id":"event_5","response":{"object":"realtime.response","id":"resp_1","status":"cancelled","status_details":{"type":"cancelled","reason":"client_cancelled"},"output":[]}}
