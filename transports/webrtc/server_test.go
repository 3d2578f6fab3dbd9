package webrtc

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestNewServerValidatesItsOptions(t *testing.T) {
	if _, err := NewServer(Options{}); err == nil || !strings.Contains(err.Error(), "NewPipeline") {
		t.Errorf("no factory: %v", err)
	}
	h := newHarness(t, Options{})
	opts := h.srv.opts
	opts.PortMin, opts.PortMax = 50000, 40000
	if _, err := NewServer(opts); err == nil {
		t.Error("an inverted port range was accepted")
	}
	opts.PortMin, opts.PortMax = 40000, 40100
	opts.PublicIPs = []string{"203.0.113.7"}
	if _, err := NewServer(opts); err != nil {
		t.Errorf("a port range and public IP: %v", err)
	}
}

func TestUDPPortRangeBoundsTheAnswersCandidates(t *testing.T) {
	body, err := os.ReadFile("testdata/offer-chrome.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{PortMin: 41000, PortMax: 41099})
	status, _, resp := do(t, "POST", h.url("/api/offer"), string(body))
	if status != 200 {
		t.Fatalf("status %d: %s", status, resp)
	}
	var ans struct{ SDP string }
	_ = json.Unmarshal([]byte(resp), &ans)
	n := 0
	for _, line := range strings.Split(ans.SDP, "\r\n") {
		if !strings.HasPrefix(line, "a=candidate:") {
			continue
		}
		n++
		f := strings.Fields(line)
		port, _ := strconv.Atoi(f[5])
		if port < 41000 || port > 41099 {
			t.Errorf("candidate port %d outside 41000-41099: %s", port, line)
		}
	}
	if n == 0 {
		t.Error("no candidates in the answer")
	}
}
