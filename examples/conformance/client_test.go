package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pion/ice/v4"
	"github.com/pion/rtp"
	pion "github.com/pion/webrtc/v4"
)

// client is a compact stand-in for the browser's SmallWebRTC transport:
// one peer connection with a sendrecv audio transceiver (mid 0) and the
// "chat" data channel, signalled with a complete (non-trickle) offer.
type client struct {
	t    *testing.T
	pc   *pion.PeerConnection
	dc   *pion.DataChannel
	pcID string
	// answer is the server's SDP answer.
	answer string

	open   chan struct{}
	closed chan struct{}
	msgs   chan string

	mu    sync.Mutex
	track *audioTrack // the bot's audio, once it arrived
	done  sync.WaitGroup
}

// audioTrack is what the client saw of the bot's audio.
type audioTrack struct {
	codec      pion.RTPCodecCapability
	mid        string
	packets    int
	timestamps []uint32 // of the first packets
}

// botCodec is the audio codec the build negotiates (opus_test.go or
// pcmu_test.go).
var clientCodec = pion.RTPCodecParameters{RTPCodecCapability: botCodec, PayloadType: botPayloadType}

// loopbackOnly restricts ICE to IPv4 loopback without mDNS, so the tests
// need no network but the host's own.
func loopbackOnly(se *pion.SettingEngine) {
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
}

// dial connects to the offer URL (…/api/offer) and returns once the
// answer is applied; the data channel opens shortly after (waitOpen). It
// fails the test from the test's goroutine only; see tryDial.
func dial(ctx context.Context, t *testing.T, offerURL string) *client {
	t.Helper()
	c, err := tryDial(ctx, t, offerURL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tryDial is dial for any goroutine: it returns what failed.
func tryDial(ctx context.Context, t *testing.T, offerURL string) (*client, error) {
	me := &pion.MediaEngine{}
	if err := me.RegisterCodec(clientCodec, pion.RTPCodecTypeAudio); err != nil {
		return nil, err
	}
	var se pion.SettingEngine
	loopbackOnly(&se)
	api := pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se))
	pc, err := api.NewPeerConnection(pion.Configuration{})
	if err != nil {
		return nil, err
	}
	c := &client{t: t, pc: pc, open: make(chan struct{}), closed: make(chan struct{}), msgs: make(chan string, 1024)}
	t.Cleanup(c.close)

	mic, err := pion.NewTrackLocalStaticSample(botCodec, "mic", "client")
	if err != nil {
		return nil, err
	}
	if _, err := pc.AddTransceiverFromTrack(mic, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionSendrecv}); err != nil {
		return nil, err
	}
	if c.dc, err = pc.CreateDataChannel("chat", nil); err != nil {
		return nil, err
	}
	var openOnce, closeOnce sync.Once
	c.dc.OnOpen(func() { openOnce.Do(func() { close(c.open) }) })
	c.dc.OnClose(func() { closeOnce.Do(func() { close(c.closed) }) })
	c.dc.OnMessage(func(m pion.DataChannelMessage) {
		if !m.IsString {
			t.Errorf("the bot sent a binary data-channel message (%d bytes)", len(m.Data))
		}
		select {
		case c.msgs <- string(m.Data):
		default:
			t.Errorf("the client's inbox is full")
		}
	})
	pc.OnTrack(c.readTrack)

	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return nil, err
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		return nil, err
	}
	select {
	case <-gathered:
	case <-ctx.Done():
		return nil, errors.New("ICE gathering did not complete")
	}
	var ans struct {
		SDP  string `json:"sdp"`
		Type string `json:"type"`
		PCID string `json:"pc_id"`
	}
	body := map[string]any{"sdp": pc.LocalDescription().SDP, "type": "offer", "pc_id": nil, "restart_pc": false}
	if code, err := request(ctx, http.MethodPost, offerURL, body, &ans); err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d, %v", offerURL, code, err)
	}
	if ans.Type != "answer" || ans.PCID == "" {
		return nil, fmt.Errorf("the answer has type %q and pc_id %q", ans.Type, ans.PCID)
	}
	if err := pc.SetRemoteDescription(pion.SessionDescription{Type: pion.SDPTypeAnswer, SDP: ans.SDP}); err != nil {
		return nil, err
	}
	c.pcID, c.answer = ans.PCID, ans.SDP
	return c, nil
}

// readTrack records the bot's audio track: its codec, mid and packets.
func (c *client) readTrack(tr *pion.TrackRemote, rx *pion.RTPReceiver) {
	c.done.Add(1)
	defer c.done.Done()
	at := &audioTrack{codec: tr.Codec().RTPCodecCapability}
	for _, tc := range c.pc.GetTransceivers() {
		if tc.Receiver() == rx {
			at.mid = tc.Mid()
		}
	}
	c.mu.Lock()
	c.track = at
	c.mu.Unlock()
	buf := make([]byte, 1500)
	var pkt rtp.Packet
	for {
		n, _, err := tr.Read(buf)
		if err != nil {
			return
		}
		if pkt.Unmarshal(buf[:n]) != nil {
			continue
		}
		c.mu.Lock()
		at.packets++
		if len(at.timestamps) < 50 {
			at.timestamps = append(at.timestamps, pkt.Timestamp)
		}
		c.mu.Unlock()
	}
}

// call sends a JSON request and decodes a JSON reply into out (if not
// nil); it returns the status code.
func call(ctx context.Context, t *testing.T, method, url string, body, out any) int {
	t.Helper()
	code, err := request(ctx, method, url, body, out)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// request is call for any goroutine.
func request(ctx context.Context, method, url string, body, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := testHTTP.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: reply %q: %w", method, url, data, err)
		}
	}
	return resp.StatusCode, nil
}

// testHTTP keeps no idle connections, so nothing lingers after a test.
var testHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// waitOpen waits for the data channel to open.
func (c *client) waitOpen(ctx context.Context) {
	c.t.Helper()
	select {
	case <-c.open:
	case <-ctx.Done():
		c.t.Fatal("the data channel did not open")
	}
}

// send sends one text message.
func (c *client) send(text string) {
	c.t.Helper()
	if err := c.dc.SendText(text); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// rtvi sends an RTVI message.
func (c *client) rtvi(typ, id string, data any) {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"label": "rtvi-ai", "type": typ, "id": id, "data": data})
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
}

// next returns the next message that satisfies match (nil: any), skipping
// the others.
func (c *client) next(ctx context.Context, match func(msg) bool) msg {
	c.t.Helper()
	for {
		select {
		case raw := <-c.msgs:
			m := decodeMsg(c.t, raw)
			if match == nil || match(m) {
				return m
			}
		case <-ctx.Done():
			c.t.Fatal("no matching message from the bot")
		}
	}
}

// audio returns a copy of what the client saw of the bot's audio (nil
// before the track arrived).
func (c *client) audio() *audioTrack {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.track == nil {
		return nil
	}
	cp := *c.track
	cp.timestamps = append([]uint32(nil), c.track.timestamps...)
	return &cp
}

// close closes the peer connection, as client.disconnect() does, and
// waits for the track reader.
func (c *client) close() {
	_ = c.pc.GracefulClose()
	c.done.Wait()
}

// hasLine reports whether the SDP has the line, for answer checks.
func hasLine(sdp, line string) bool {
	for l := range strings.Lines(sdp) {
		if strings.TrimRight(l, "\r\n") == line {
			return true
		}
	}
	return false
}

// mediaSection returns the lines of the SDP's i-th m= section.
func mediaSection(sdp string, i int) string {
	parts := strings.Split(sdp, "\nm=")
	if i+1 >= len(parts) {
		return ""
	}
	return "m=" + parts[i+1]
}

func (a *audioTrack) String() string {
	return fmt.Sprintf("%s/%d/%d on mid %q, %d packets", a.codec.MimeType, a.codec.ClockRate, a.codec.Channels, a.mid, a.packets)
}
