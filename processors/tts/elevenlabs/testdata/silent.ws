# The server takes the request and never answers (timeouts).
< init
< text
