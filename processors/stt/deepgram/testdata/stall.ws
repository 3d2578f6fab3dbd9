# A server that answers the first audio and then goes silent while more
# audio comes.
< audio 640
> {"type":"Results","channel_index":[0,1],"duration":0.02,"start":0.0,"is_final":false,"speech_final":false,"channel":{"alternatives":[{"transcript":"hel","confidence":0.5,"words":[]}]}}
