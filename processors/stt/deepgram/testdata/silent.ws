# A server that takes the audio and never answers it.
< audio 640
