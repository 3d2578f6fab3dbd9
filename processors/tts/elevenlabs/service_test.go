package elevenlabs

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/ttstest"
)

// spoken summarises what the service sent downstream: the audio, and each
// word with the audio pushed before it (in tenths of a second).
func spoken(t *testing.T, fs []frames.Frame, rate int) (audio []byte, words []string) {
	t.Helper()
	for _, fr := range fs {
		switch fr := fr.(type) {
		case *frames.TTSAudioRaw:
			audio = append(audio, fr.PCM...)
		case *frames.TTSText:
			if fr.AggregatedBy != tts.AggregatedByWord {
				t.Errorf("text %q aggregated by %q", fr.Text, fr.AggregatedBy)
			}
			words = append(words, fr.Text+"@"+strings.Repeat("|", len(audio)/(rate*2/10)))
		}
	}
	return audio, words
}

// Through the TTS service, each word is released once the audio up to its
// start has gone out, over either transport.
func TestWordsArriveWithTheirAudioThroughTheService(t *testing.T) {
	lines := helloLines(t)
	for _, transport := range []Transport{WebSocket, HTTP} {
		t.Run(transport.String(), func(t *testing.T) {
			var c *Client
			if transport == WebSocket {
				f := newFake(t, "hello.ws")
				defer f.close()
				c = newClient(f)
			} else {
				c = newHTTPClient(newFakeHTTP(t, func(_ int, w http.ResponseWriter, _ *http.Request) { streamLines(w, lines) }))
			}
			res := pipelinetest.Run(t, tts.NewService(c, tts.Options{}), pipelinetest.Options{
				Send: []frames.Frame{&frames.TTSSpeak{Text: "Hello world."}},
			})
			audio, words := spoken(t, res.Down(), 24000)
			if !bytes.Equal(audio, pcmFixture(t)) {
				t.Errorf("%d bytes of audio, want %d", len(audio), len(pcmFixture(t)))
			}
			// "Hello" starts at 20 ms, "world." at about 360 ms: released
			// after at least 0 and 3 tenths of a second of audio.
			if len(words) != 2 || !strings.HasPrefix(words[0], "Hello@") || !strings.HasPrefix(words[1], "world.@|||") {
				t.Errorf("word releases %q", words)
			}
			var segment *frames.AggregatedText
			for _, fr := range res.Down() {
				if s, ok := fr.(*frames.AggregatedText); ok {
					segment = s
				}
			}
			if segment == nil || segment.Text != "Hello world." {
				t.Errorf("the sentence was not announced before its words: %v", segment)
			}
		})
	}
}

// An interruption through the service closes the context on the server,
// and the next sentence is spoken on the same connection.
func TestInterruptionThroughTheServiceClosesTheContext(t *testing.T) {
	f := newFake(t, "interrupted_service.ws")
	defer f.close()
	c := newClient(f)
	svc := tts.NewService(c, tts.Options{})
	res := pipelinetest.Start(t, svc, pipelinetest.Options{NoEnd: true})
	var once sync.Once
	audio := make(chan struct{})
	pipeline.OnDownstream(res.Task, func(*frames.TTSAudioRaw) { once.Do(func() { close(audio) }) })
	stopped := make(chan struct{}, 4)
	pipeline.OnDownstream(res.Task, func(*frames.TTSStopped) { stopped <- struct{}{} })
	res.Task.QueueFrame(&frames.TTSSpeak{Text: "A long answer the user cuts short."})
	select {
	case <-audio:
	case <-time.After(10 * time.Second):
		t.Fatal("no audio")
	}
	res.Task.QueueFrame(&frames.Interruption{})
	deadline := time.Now().Add(10 * time.Second)
	for !hasClose(f.messages(t)) {
		if time.Now().After(deadline) {
			t.Fatal("the server never saw the context closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	res.Task.QueueFrame(&frames.TTSSpeak{Text: "Hello world."})
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the next sentence was not spoken")
	}
	res.Task.EndWhenDone()
	res.Wait()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var errs []string
	for _, fr := range res.Up() {
		if e, ok := fr.(*frames.Error); ok {
			errs = append(errs, e.Err.Error())
		}
	}
	if len(errs) > 0 {
		t.Errorf("errors upstream: %q", errs)
	}
	if f.connections() != 1 {
		t.Errorf("%d connections, want 1", f.connections())
	}
}

func hasClose(msgs []map[string]any) bool {
	for _, m := range msgs {
		if kind(m) == "close_context" {
			return true
		}
	}
	return false
}

// The connection a TTS service warmed up lives as long as its task: when
// the task is cancelled or ends, the service closes the client and the
// connection's reader has stopped by the time Run returns.
func TestConnectionEndsWithTheServicesTask(t *testing.T) {
	ttstest.CheckConnectionEndsWithTheTask(t, func(t *testing.T) (tts.Synthesizer, func() *conn) {
		f := newFake(t, "hello.ws")
		t.Cleanup(f.close)
		c := newClient(f)
		return c, func() *conn { return c.current(DefaultSampleRate) }
	})
}

// Over HTTP, an interruption through the service closes the request, which
// the server sees, and the next sentence is a new request.
func TestInterruptionThroughTheServiceClosesTheHTTPRequest(t *testing.T) {
	lines := helloLines(t)
	closed := make(chan struct{})
	f := newFakeHTTP(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n > 0 {
			streamLines(w, lines)
			return
		}
		streamLines(w, lines[:1])
		select {
		case <-r.Context().Done():
			close(closed)
		case <-time.After(10 * time.Second):
		}
	})
	res := pipelinetest.Start(t, tts.NewService(newHTTPClient(f), tts.Options{}), pipelinetest.Options{NoEnd: true})
	var once sync.Once
	audio := make(chan struct{})
	pipeline.OnDownstream(res.Task, func(*frames.TTSAudioRaw) { once.Do(func() { close(audio) }) })
	stopped := make(chan struct{}, 4)
	pipeline.OnDownstream(res.Task, func(*frames.TTSStopped) { stopped <- struct{}{} })
	res.Task.QueueFrame(&frames.TTSSpeak{Text: "A long answer the user cuts short."})
	select {
	case <-audio:
	case <-time.After(10 * time.Second):
		t.Fatal("no audio")
	}
	res.Task.QueueFrame(&frames.Interruption{})
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the request closed")
	}
	res.Task.QueueFrame(&frames.TTSSpeak{Text: "Hello world."})
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the next sentence was not spoken")
	}
	res.Task.EndWhenDone()
	res.Wait()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, fr := range res.Up() {
		if e, ok := fr.(*frames.Error); ok {
			t.Errorf("error upstream: %v", e.Err)
		}
	}
	if n := len(f.calls()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}
