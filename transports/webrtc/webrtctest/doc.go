// Package webrtctest is an in-process stand-in for the browser's
// @pipecat-ai/small-webrtc-transport: a pion peer connection that offers an
// audio and a video transceiver and a "chat" data channel, posts its offer
// without waiting for ICE gathering, trickles its candidates by PATCH every
// 200 ms, sends trackStatus and "ping: <ms>" keepalives, streams a tone and
// decodes the bot's audio. The transport's integration tests, the e2e
// server's tests and the load benchmark (cmd/loadbench) drive the server
// with it; so can the tests of a program that serves the transport.
package webrtctest
