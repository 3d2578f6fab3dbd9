// Package silero is Silero VAD v5 in pure Go: the model's forward pass
// (reflect padding, an STFT as a convolution, four Conv1d+ReLU encoder
// layers, an LSTM cell and a sigmoid head) written out by hand, with the
// weights read at start-up from the real silero_vad_v5.onnx. No cgo and no
// ONNX runtime are involved; the results match the ONNX runtime's to within
// 1e-6.
//
// The model file is not part of the repository: fetch-model.sh copies it
// from the npm package @ricky0123/vad-web into the user's cache folder, and
// [LoadModel] checks its SHA-256. A [Model] is loaded once and shared; each
// stream gets a [Scorer], an audio.VoiceScorer that the audio.VAD state
// machine drives with 32 ms windows (512 samples at 16 kHz, 256 at 8 kHz).
// [NewVAD] builds that pair, ready for an audio.VADProcessor in place of the
// default energy detector (docs/decisions/audio-silero.md compares the two).
package silero
