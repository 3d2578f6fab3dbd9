# The connection drops in the middle of a turn, without a close frame.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< audio 3200
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":false,"transcript":"","end_of_turn_confidence":0.01,"words":[{"start":100,"end":300,"text":"hel","confidence":0.7,"word_is_final":false}],"utterance":"","type":"Turn"}
< cut
