// Package espeak is framewire's offline text-to-speech: a tts.Synthesizer
// that runs Debian's espeak-ng (apt-get install espeak-ng) as a subprocess,
// one per request, and streams the WAV it writes to stdout. It needs no
// network, no account and no cgo, so a voice pipeline talks out of the box;
// the voice is robotic, so swap in tts/openai or tts/cartesia for a
// product.
//
// Text goes to the process on stdin (never on the command line), and an
// interruption kills the process.
package espeak
