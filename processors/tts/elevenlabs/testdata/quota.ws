# The quota runs out: ElevenLabs closes with a policy violation and says why.
< init
< text
close 1008 This request exceeds your quota. You have 5 credits remaining, while 12 credits are required for this request.
