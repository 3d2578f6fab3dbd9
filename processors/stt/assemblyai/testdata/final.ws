# A short turn that the server's own turn detection ends, formatted.
> {"type":"Begin","id":"9b1c2f04-5e1a-4c7e-8f43-2d0a6b7e1c55","expires_at":1759796682}
< audio 3200
> {"turn_order":0,"turn_is_formatted":true,"end_of_turn":true,"transcript":"Hello.","end_of_turn_confidence":0.93,"words":[{"start":100,"end":400,"text":"Hello.","confidence":0.95,"word_is_final":true}],"utterance":"","type":"Turn"}
