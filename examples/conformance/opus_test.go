//go:build opus

package main

import pion "github.com/pion/webrtc/v4"

// botCodec is the codec of the bot's audio in builds with libopus:
// docs/protocol.md §10 row 12's {audio/opus, 48000, 2}.
var botCodec = pion.RTPCodecCapability{MimeType: pion.MimeTypeOpus, ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}

const botPayloadType = 111
