# The audio comes, but the context never ends (idle timeout).
< init
< text
> {"audio":"$A0","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"alignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"contextId":"$CTX"}
> {"audio":"$A1","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"alignment":{"charStartTimesMs":[97,150,200],"charsDurationsMs":[53,50,63],"chars":["w","o","r"]},"contextId":"$CTX"}
> {"audio":"$A2","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[10,60,110],"charsDurationsMs":[50,50,100],"chars":["l","d","."]},"alignment":{"charStartTimesMs":[10,60,110],"charsDurationsMs":[50,50,100],"chars":["l","d","."]},"contextId":"$CTX"}
< close_context
