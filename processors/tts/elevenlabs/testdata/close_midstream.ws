# The server fails in the middle of a generation.
< init
< text
> {"audio":"$A0","isFinal":null,"normalizedAlignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"alignment":{"charStartTimesMs":[20,70,120,160,200,250],"charsDurationsMs":[50,50,40,40,50,13],"chars":["H","e","l","l","o"," "]},"contextId":"$CTX"}
close 1011 internal error
