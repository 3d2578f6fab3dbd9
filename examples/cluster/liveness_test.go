package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A worker's -ping-timeout and -restart-grace reach its transport: a
// session whose client pinged once and then went quiet ends after the
// ping timeout, outlives the default one (3 s) when the flag raises it,
// and outlives its ping timeout within the restart grace.
func TestWorkerEndsQuietSessionsByItsPingFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("runs NATS servers and WebRTC sessions")
	}
	for _, c := range []struct {
		name string
		args []string
		ends bool // whether the session ends (within 20 s) or is still on 4 s after its ping
	}{
		{"a short ping timeout ends it", []string{"-ping-timeout", "300ms"}, true},
		{"a long ping timeout keeps it past the default", []string{"-ping-timeout", "1m"}, false},
		{"the restart grace keeps it past the ping timeout", []string{"-ping-timeout", "300ms", "-restart-grace", "1m"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			metricsURL, base := runWorker(t, "p1", c.args...)
			client := &http.Client{Timeout: 20 * time.Second}
			_, chat := connect(t, client, base)
			if err := chat.SendText("ping"); err != nil {
				t.Fatal(err)
			}
			pinged := time.Now()
			active := func() float64 { return scrape(t, client, metricsURL)["framewire_sessions_active"] }
			if c.ends {
				for active() != 0 {
					if time.Since(pinged) > 20*time.Second {
						t.Fatal("the quiet session was still on 20 s after its only ping")
					}
					time.Sleep(50 * time.Millisecond)
				}
				return
			}
			time.Sleep(4*time.Second - time.Since(pinged))
			if n := active(); n != 1 {
				t.Errorf("framewire_sessions_active = %v 4 s after the only ping, want 1", n)
			}
		})
	}
}

func TestWorkerRefusesPingFlagsThatMeanNothing(t *testing.T) {
	for _, args := range [][]string{{"-ping-timeout", "0s"}, {"-restart-grace", "-1s"}} {
		err := workerCommand(context.Background(), args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("worker %q: %v, want an error naming %s", args, err, args[0])
		}
	}
}
