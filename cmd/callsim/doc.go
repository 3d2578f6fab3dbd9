// Command callsim calls a telephony bot the way the provider would, on one
// machine and without a phone number: it plays the provider's side of a
// call (transports/telephony/telephonytest does the work) and says what
// the caller heard.
//
//	callsim -provider twilio -answer http://127.0.0.1:8080/twilio/answer \
//	    -wav caller.wav -dtmf 1 -record bot.wav
//
// For Twilio it posts the incoming-call webhook (signed with
// X-Twilio-Signature when -auth-token or TWILIO_AUTH_TOKEN gives the
// token), reads the TwiML's <Connect><Stream>, dials the stream and sends
// connected and start (the TwiML's parameters as the start's
// customParameters). It waits out the bot's greeting, says the WAV (any
// rate and channels: mixed to mono, resampled to 8 kHz with the project's
// resampler, μ-law) in real time, 20 ms per media message, plays the
// bot's media in real time on a jitter-free clock (a mark is echoed once
// the audio before it has played; a clear drops what is queued and echoes
// its marks; -barge-in speaks over the greeting), presses each -dtmf key after the bot's answer, then sends
// stop and closes. -record writes what the caller heard, 8 kHz mono.
//
// It prints a summary: the seconds of the bot's audio heard, the
// voice-to-voice latency (from the end of the caller's speech, found by
// energy in the WAV, to the bot's first audio after it), how soon each key
// was answered, the marks and clears seen (and how soon the bot cleared
// after the caller started speaking), and, when callsim is built with
// -tags pocketsphinx, what PocketSphinx hears the bot say, utterance by
// utterance (a rough transcript: its general model on 8 kHz audio; listen
// to the recording for the truth).
//
// Exit status: 0 for a call that went by the protocol, 3 for a protocol
// error of the bot (an unknown or malformed message, another stream's id,
// an abnormal close), 2 for bad flags, 1 for anything else (the bot not
// reachable, a refused webhook).
//
// Only Twilio's Media Streams are wired to framewire's telephony
// transport so far; -provider takes only twilio.
package main
