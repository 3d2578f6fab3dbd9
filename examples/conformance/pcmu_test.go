//go:build !opus

package main

import pion "github.com/pion/webrtc/v4"

// botCodec is the codec of the bot's audio in builds without libopus: the
// transport falls back to PCMU.
var botCodec = pion.RTPCodecCapability{MimeType: pion.MimeTypePCMU, ClockRate: 8000, Channels: 1}

const botPayloadType = 0
