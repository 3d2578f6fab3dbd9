# A turn with formatted finals: Begin, speech starts, the partials grow
# (transcript holds only the words that will not change, words all of
# them), the client forces the endpoint when its VAD hears the user stop,
# the turn ends unformatted, then formatted; Terminate gets the
# Termination message and a normal close.
> {"type":"Begin","id":"de5d9927-73a6-4be8-b52d-b4c07be37e6b","expires_at":1759796682}
< audio 6400
> {"type":"SpeechStarted","timestamp":1920}
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":false,"transcript":"","end_of_turn_confidence":0.017454,"words":[{"start":1920,"end":2000,"text":"hi","confidence":0.874618,"word_is_final":false}],"utterance":"","type":"Turn"}
< audio 6400
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":false,"transcript":"hi","end_of_turn_confidence":0.000014,"words":[{"start":1920,"end":2000,"text":"hi","confidence":0.874618,"word_is_final":true},{"start":2800,"end":2880,"text":"my","confidence":0.812831,"word_is_final":false}],"utterance":"","type":"Turn"}
< force_endpoint
> {"turn_order":0,"turn_is_formatted":false,"end_of_turn":true,"transcript":"hi my name is sonny","end_of_turn_confidence":0.5005,"words":[{"start":1920,"end":2000,"text":"hi","confidence":0.874618,"word_is_final":true},{"start":2800,"end":2880,"text":"my","confidence":0.812831,"word_is_final":true},{"start":3040,"end":3120,"text":"name","confidence":0.901,"word_is_final":true},{"start":3280,"end":3360,"text":"is","confidence":0.922,"word_is_final":true},{"start":3520,"end":3840,"text":"sonny","confidence":0.631,"word_is_final":true}],"utterance":"hi my name is sonny","type":"Turn"}
> {"turn_order":0,"turn_is_formatted":true,"end_of_turn":true,"transcript":"Hi, my name is Sonny.","end_of_turn_confidence":0.5005,"words":[{"start":1920,"end":2000,"text":"Hi,","confidence":0.874618,"word_is_final":true},{"start":2800,"end":2880,"text":"my","confidence":0.812831,"word_is_final":true},{"start":3040,"end":3120,"text":"name","confidence":0.901,"word_is_final":true},{"start":3280,"end":3360,"text":"is","confidence":0.922,"word_is_final":true},{"start":3520,"end":3840,"text":"Sonny.","confidence":0.631,"word_is_final":true}],"utterance":"","type":"Turn"}
< terminate
> {"type":"Termination","audio_duration_seconds":1,"session_duration_seconds":2}
close 1000
