# A server that sends the first audio chunk and then nothing more.
< request
> {"type":"chunk","data":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","done":false,"status_code":206,"context_id":"$CTX"}
