package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/pion/ice/v4"
	pion "github.com/pion/webrtc/v4"

	"github.com/framewire/framewire/cluster"
	"github.com/framewire/framewire/transports/websocket/websockettest"
)

// TestLocalRunsAFrontDoorAndItsWorkers runs "cluster local" as a child
// process: the front door announces its address, both workers show up in
// /cluster with both transports, a /start flow's offer is answered by a
// worker, a /connect's socket by another (or the same), and SIGTERM stops
// everything with exit status 0.
func TestLocalRunsAFrontDoorAndItsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	cmd := exec.Command(os.Args[0], "local", "-addr", "127.0.0.1:0", "-status-addr", "127.0.0.1:0", "-workers", "2", "-capacity", "5", "-loopback-only",
		"-ws-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addrs := make(chan []string, 1)
	go func() {
		prefixes := []string{"listening on ", "status on ", "nats on "}
		got := make([]string, len(prefixes))
		sc := bufio.NewScanner(stdout)
		for left := len(prefixes); sc.Scan(); {
			for i, p := range prefixes {
				if v, ok := strings.CutPrefix(sc.Text(), p); ok && got[i] == "" {
					got[i] = v
					if left--; left == 0 {
						addrs <- got
					}
				}
			}
		}
		exited <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	var base, status, natsURL string
	select {
	case a := <-addrs:
		base, status, natsURL = a[0], a[1], a[2]
	case <-time.After(30 * time.Second):
		t.Fatalf("the front door did not announce its addresses; stderr:\n%s", stderr.String())
	}

	// The embedded NATS takes only the local run's own processes.
	if nc, err := nats.Connect(natsURL, nats.MaxReconnects(0)); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Errorf("a connection without credentials to the local NATS: %v, want an authorization error", err)
	}

	client := &http.Client{Timeout: 20 * time.Second}
	if code := getJSON(t, client, base+"/cluster", &struct{}{}); code != http.StatusNotFound {
		t.Errorf("/cluster on the browsers' port: %d, want 404 (it is on the status listener)", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st cluster.Status
		// Each worker takes 5 sessions of each transport.
		if getJSON(t, client, status+"/cluster", &st) == http.StatusOK && len(st.Workers) == 2 && st.Capacity == 20 &&
			st.Workers[0].WebSocket != nil && st.Workers[0].WebSocket.Capacity == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/cluster did not show the two workers: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}

	var start struct {
		SessionID string `json:"sessionId"`
	}
	if status := postJSON(t, client, base+"/start", map[string]any{}, &start); status != http.StatusOK || start.SessionID == "" {
		t.Fatalf("POST /start: %d %+v", status, start)
	}
	pc := offerer(t)
	var ans struct {
		Type string `json:"type"`
		PCID string `json:"pc_id"`
	}
	offer := map[string]any{"sdp": pc.LocalDescription().SDP, "type": "offer", "pc_id": nil, "restart_pc": false}
	if status := postJSON(t, client, base+"/sessions/"+start.SessionID+"/api/offer", offer, &ans); status != http.StatusOK || ans.Type != "answer" || ans.PCID == "" {
		t.Fatalf("the /start flow's offer: %d %+v", status, ans)
	}

	var connect struct {
		WSURL string `json:"wsUrl"`
	}
	if status := postJSON(t, client, base+"/connect", map[string]any{}, &connect); status != http.StatusOK || !strings.HasPrefix(connect.WSURL, "ws://127.0.0.1:") {
		t.Fatalf("POST /connect: %d %+v", status, connect)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := websockettest.Dial(ctx, websockettest.Options{URL: connect.WSURL})
	if err != nil {
		t.Fatalf("the /connect's socket: %v", err)
	}
	ws.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("local after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("local did not stop after SIGTERM")
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	var out bytes.Buffer
	if code := realMain([]string{"nope"}, &out, &out); code != 2 || !strings.Contains(out.String(), "usage") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	if code := realMain([]string{"worker", "-capacity", "x"}, io.Discard, &out); code != 2 {
		t.Errorf("a bad flag: exit %d, want 2", code)
	}
}

// offerer returns a peer connection whose gathered offer is ready.
func offerer(t *testing.T) *pion.PeerConnection {
	t.Helper()
	pc, _ := offererWithChat(t)
	return pc
}

// offererWithChat is offerer that also returns the offer's chat data
// channel.
func offererWithChat(t *testing.T) (*pion.PeerConnection, *pion.DataChannel) {
	t.Helper()
	var se pion.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]pion.NetworkType{pion.NetworkTypeUDP4})
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	me := &pion.MediaEngine{}
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	pc, err := pion.NewAPI(pion.WithMediaEngine(me), pion.WithSettingEngine(se)).NewPeerConnection(pion.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.AddTransceiverFromKind(pion.RTPCodecTypeAudio, pion.RTPTransceiverInit{Direction: pion.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	chat, err := pc.CreateDataChannel("chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := pion.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(10 * time.Second):
		t.Fatal("ICE gathering did not complete")
	}
	return pc, chat
}

func getJSON(t *testing.T, c *http.Client, url string, out any) int {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
	return resp.StatusCode
}

func postJSON(t *testing.T, c *http.Client, url string, body, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
	return resp.StatusCode
}
