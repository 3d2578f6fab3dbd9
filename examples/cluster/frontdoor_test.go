package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsWithPassword starts a NATS server on a free loopback port that
// takes user alice with password pw only.
func natsWithPassword(t *testing.T, pw string) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true, Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return ns
}

// The front door authenticates to NATS with -nats-user and the password
// in $NATS_PASSWORD (never a flag: the process list shows flags), serves
// the signalling and /healthz on -addr, and the cluster's state on the
// operators' -status-addr only.
func TestFrontDoorAuthenticatesToNATSAndServesClusterOnTheStatusListener(t *testing.T) {
	const pw = "s3cret-pw"
	ns := natsWithPassword(t, pw)
	t.Setenv(envNATSPassword, pw)
	a := runCommand(t, frontdoorCommand, []string{"-nats", ns.ClientURL(), "-nats-user", "alice",
		"-addr", "127.0.0.1:0", "-status-addr", "127.0.0.1:0"}, "listening on ", "status on ")
	base, status := a[0], a[1]
	client := &http.Client{Timeout: 10 * time.Second}
	for _, tc := range []struct {
		url  string
		want int
	}{
		{base + "/cluster", http.StatusNotFound},
		{base + "/healthz", http.StatusServiceUnavailable}, // no worker
		{status + "/cluster", http.StatusOK},
		{status + "/healthz", http.StatusServiceUnavailable},
	} {
		res, err := client.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("GET %s: %d %s, want %d", tc.url, res.StatusCode, body, tc.want)
		}
		if strings.HasSuffix(tc.url, "/healthz") && strings.Contains(string(body), "NATS is not connected") {
			t.Errorf("GET %s: %s", tc.url, body)
		}
	}
}

// Without the password the connection is refused, and the error names
// the server without the password of a nats://user:password@ URL.
func TestFrontDoorWithoutNATSCredentialsFailsWithoutShowingThem(t *testing.T) {
	ns := natsWithPassword(t, "right")
	u := strings.Replace(ns.ClientURL(), "nats://", "nats://alice:wrong-pw@", 1)
	var stderr strings.Builder
	err := frontdoorCommand(context.Background(), []string{"-nats", u, "-addr", "127.0.0.1:0", "-status-addr", ""}, io.Discard, &stderr)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("frontdoor with a wrong password: %v, want an authorization error", err)
	}
	if strings.Contains(err.Error(), "wrong-pw") || strings.Contains(stderr.String(), "wrong-pw") {
		t.Errorf("the error shows the password: %v", err)
	}
	if got := redactURLs("nats://a:b@h1:4222, tls://h2:4222"); got != "nats://a@h1:4222,tls://h2:4222" {
		t.Errorf("redactURLs = %q", got)
	}
}
