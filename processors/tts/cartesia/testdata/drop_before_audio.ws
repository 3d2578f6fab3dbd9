# The server restarts right after taking the request, before any audio.
< request
close 1012 service restart
