# format_turns=false on the multilingual model with language detection:
# the turn ends once, by the server's own turn detection, with the
# detected language.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< audio 3200
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":false,"transcript":"","end_of_turn_confidence":0.01,"words":[{"start":100,"end":300,"text":"hola","confidence":0.9,"word_is_final":false}],"utterance":"","type":"Turn"}
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":true,"transcript":"hola como estas","end_of_turn_confidence":0.91,"words":[{"start":100,"end":300,"text":"hola","confidence":0.9,"word_is_final":true},{"start":340,"end":600,"text":"como","confidence":0.88,"word_is_final":true},{"start":640,"end":900,"text":"estas","confidence":0.86,"word_is_final":true}],"utterance":"hola como estas","language_code":"es","language_confidence":0.97,"type":"Turn"}
