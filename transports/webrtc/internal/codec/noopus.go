//go:build !opus

package codec

func opusCodec() (Codec, bool) { return Codec{}, false }
