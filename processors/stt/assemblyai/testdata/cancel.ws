# A turn the pipeline cancels: the client drops the socket; Terminate never comes.
> {"type":"Begin","id":"9b1c2f04-5e1a-4c7e-8f43-2d0a6b7e1c55","expires_at":1759796682}
< audio 3200
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":false,"transcript":"","end_of_turn_confidence":0.01,"words":[{"start":100,"end":300,"text":"wait","confidence":0.8,"word_is_final":false}],"utterance":"","type":"Turn"}
< terminate
