# A request the client interrupts after the first chunk: it closes the
# context at once. Audio already in flight for it is dropped by the client.
< init
< text
> {"audio":"$A0","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"alignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"contextId":"long"}
< close_context
> {"audio":"$A1","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"alignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"contextId":"long"}
> {"isFinal":true,"contextId":"long"}
# The next request on the same connection.
< init
< text
> {"audio":"$A0","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"alignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"contextId":"$CTX"}
> {"audio":"$A1","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"alignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"contextId":"$CTX"}
> {"audio":"$A2","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[10,60,110],"charsDurationsMs":[50,50,100],"chars":["l","d","."]},"alignment":{"charStartTimesMs":[10,60,110],"charsDurationsMs":[50,50,100],"chars":["l","d","."]},"contextId":"$CTX"}
< close_context
> {"isFinal":true,"contextId":"$CTX"}
