package natstest

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAnEmbeddedServerCarriesMessages(t *testing.T) {
	url := Embedded(t)
	a, b := Connect(t, url), Connect(t, url)
	sub, err := b.SubscribeSync("x")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish("x", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "hi" {
		t.Fatalf("%v, %v", m, err)
	}
}

func TestAProcessRestartsOnItsURLAndAReconnectingClientComesBack(t *testing.T) {
	p := StartProcess(t)
	nc := ConnectReconnecting(t, p.URL(), -1)
	p.Stop()
	p.Start()
	deadline := time.Now().Add(Wait)
	for !nc.IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("the client did not reconnect after the restart")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestChildProcess is the child of TestAChildGetsTheURLAndSaysWhenReady.
func TestChildProcess(t *testing.T) {
	if ChildURL() == "" {
		t.Skip("the child process of TestAChildGetsTheURLAndSaysWhenReady")
	}
	fmt.Println("ready " + ChildURL())
	select {} // until killed
}

func TestAChildGetsTheURLAndSaysWhenReady(t *testing.T) {
	c := StartChild(t, "TestChildProcess", "nats://127.0.0.1:1", "ready nats://127.0.0.1:1")
	c.Kill9(t)
}
