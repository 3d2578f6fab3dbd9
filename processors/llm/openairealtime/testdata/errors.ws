# Each class of error the server reports inside a session: a bad request,
# a rate limit, a server error, and a response that failed.
< session.update
> {"type":"session.created","event_id":"event_1","session":{"object":"realtime.session","type":"realtime","id":"sess_1","model":"gpt-realtime"}}
> {"type":"error","event_id":"event_2","error":{"type":"invalid_request_error","code":"invalid_value","message":"Invalid value: 'robot'. Supported values are: 'alloy', 'ash', 'ballad', 'coral', 'echo', 'sage', 'shimmer', 'verse', 'marin', and 'cedar'.","param":"session.audio.output.voice","event_id":"evt_client_1"}}
> {"type":"error","event_id":"event_3","error":{"type":"invalid_request_error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-realtime on tokens per min (TPM): Limit 40000, Used 40000, Requested 500. Please try again in 750ms.","param":null,"event_id":null}}
> {"type":"error","event_id":"event_4","error":{"type":"server_error","code":null,"message":"The server had an error while processing your request. Sorry about that!","param":null,"event_id":null}}
> {"type":"error","event_id":"event_5","error":{"type":"invalid_request_error","code":"response_cancel_not_active","message":"Cancellation failed: no active response found","param":null,"event_id":"evt_client_2"}}
> {"type":"response.created","event_id":"event_6","response":{"object":"realtime.response","id":"resp_1","status":"in_progress","output":[]}}
> {"type":"response.done","event_id":"event_7","response":{"object":"realtime.response","id":"resp_1","status":"failed","status_details":{"type":"failed","error":{"type":"server_error","code":"internal_error","message":"The model failed to produce a response."}},"output":[]}}
