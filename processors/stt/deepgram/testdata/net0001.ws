# The server stops hearing audio and closes with NET-0001, as it does
# after 10 s without audio or KeepAlive.
< audio 3200
> {"type":"Results","channel_index":[0,1],"duration":0.2,"start":0.0,"is_final":false,"speech_final":false,"channel":{"alternatives":[{"transcript":"hel","confidence":0.98,"words":[{"word":"hel","start":0.0,"end":0.3,"confidence":0.99,"punctuated_word":"hel"}]}]},"metadata":{"request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654-e622-47c4-a111-63a61b23bfe4"}}
close 1011 NET-0001
