# The server fails before any audio: the client tries again.
< init
< text
close 1011 internal error
