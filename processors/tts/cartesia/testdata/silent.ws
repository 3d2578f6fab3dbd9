# A server that takes the request and never answers it.
< request
