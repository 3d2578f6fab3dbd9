# A turn: speech starts, interim results grow, the client finalizes when
# its VAD hears the user stop, the final result answers the finalize,
# the utterance ends; CloseStream gets the summary metadata and a normal close.
< audio 6400
> {"type":"SpeechStarted","channel":[0,1],"timestamp":0.12}
> {"type":"Results","channel_index":[0,1],"duration":0.4,"start":0.0,"is_final":false,"speech_final":false,"channel":{"alternatives":[{"transcript":"hello","confidence":0.98,"words":[{"word":"hello","start":0.0,"end":0.3,"confidence":0.99,"punctuated_word":"hello"}]}]},"metadata":{"request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654-e622-47c4-a111-63a61b23bfe4"}}
< audio 6400
> {"type":"Results","channel_index":[0,1],"duration":0.8,"start":0.0,"is_final":false,"speech_final":false,"channel":{"alternatives":[{"transcript":"hello there","confidence":0.98,"words":[{"word":"hello","start":0.0,"end":0.3,"confidence":0.99,"punctuated_word":"hello"},{"word":"there","start":0.32,"end":0.62,"confidence":0.99,"punctuated_word":"there"}]}]},"metadata":{"request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654-e622-47c4-a111-63a61b23bfe4"}}
< finalize
> {"type":"Results","channel_index":[0,1],"duration":1.28,"start":0.0,"is_final":true,"speech_final":false,"channel":{"alternatives":[{"transcript":"Hello there.","confidence":0.98,"words":[{"word":"hello","start":0.0,"end":0.3,"confidence":0.99,"punctuated_word":"Hello"},{"word":"there","start":0.32,"end":0.62,"confidence":0.99,"punctuated_word":"there."}]}]},"metadata":{"request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654-e622-47c4-a111-63a61b23bfe4"},"from_finalize":true}
> {"type":"Results","channel_index":[0,1],"duration":0.0,"start":1.28,"is_final":true,"speech_final":false,"channel":{"alternatives":[{"transcript":"","confidence":0.0,"words":[]}]},"metadata":{"request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","model_info":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"},"model_uuid":"40bd3654-e622-47c4-a111-63a61b23bfe4"}}
> {"type":"UtteranceEnd","channel":[0,1],"last_word_end":0.94}
< close
> {"type":"Metadata","transaction_key":"deprecated","request_id":"5f8a1d52-2c4b-4f1e-9a43-0b2b7c1e6a10","sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","created":"2025-06-12T09:41:27.315Z","duration":1.28,"channels":1,"models":["40bd3654-e622-47c4-a111-63a61b23bfe4"],"model_info":{"40bd3654-e622-47c4-a111-63a61b23bfe4":{"name":"general-nova-3","version":"2025-04-17.21547","arch":"nova-3"}}}
close 1000
