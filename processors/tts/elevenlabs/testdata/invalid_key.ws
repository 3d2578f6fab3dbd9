# A bad key reported on the websocket rather than at the handshake.
< init
> {"message":"Invalid API key","error":"invalid_api_key","code":1008}
close 1008 Invalid API key
