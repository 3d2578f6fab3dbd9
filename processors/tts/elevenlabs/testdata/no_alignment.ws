# Audio without alignment: the client closes the context after a quiet
# second, and the server ends it.
< init
< text
> {"audio":"$A0","isFinal":null,"contextId":"$CTX"}
> {"audio":"$A1","isFinal":null,"contextId":"$CTX"}
> {"audio":"$A2","isFinal":null,"contextId":"$CTX"}
< close_context
> {"isFinal":true,"contextId":"$CTX"}
