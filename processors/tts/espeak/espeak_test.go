package espeak

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline"
	"github.com/framewire/framewire/pipeline/pipelinetest"
	"github.com/framewire/framewire/processors/tts"
)

func needEspeak(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(DefaultCommand); err != nil {
		t.Skip("espeak-ng is not installed (apt-get install -y espeak-ng); skipping the real-engine test")
	}
}

// collect runs one request and returns its audio, sample rate and error.
func collect(ctx context.Context, s tts.Synthesizer, text string) (pcm []byte, rate int, err error) {
	for c, e := range s.Synthesize(ctx, tts.Request{Text: text, SampleRate: 24000}) {
		if e != nil {
			return pcm, rate, e
		}
		pcm = append(pcm, c.Audio...)
		rate = c.SampleRate
	}
	return pcm, rate, nil
}

func TestSpeaksWithEspeakNG(t *testing.T) {
	needEspeak(t)
	pcm, rate, err := collect(context.Background(), New(Options{}), "Hello world, this is framewire speaking.")
	if err != nil {
		t.Fatal(err)
	}
	if rate != 22050 {
		t.Errorf("rate %d, want espeak-ng's 22050", rate)
	}
	d := dsp.Duration(pcm, rate, 1)
	if d < time.Second || d > 6*time.Second {
		t.Errorf("%v of audio for one sentence", d)
	}
	if db := dsp.DBFS(pcm); db < -40 {
		t.Errorf("speech at %.1f dBFS: too quiet to be speech", db)
	}
}

func TestTextIsNeverAnOption(t *testing.T) {
	needEspeak(t)
	// On the command line this would be an option; on stdin it is text.
	pcm, _, err := collect(context.Background(), New(Options{}), "--version -h")
	if err != nil {
		t.Fatal(err)
	}
	if len(pcm) == 0 {
		t.Error("no audio for text that looks like options")
	}
}

func TestThroughTheServiceAtTheOutputRate(t *testing.T) {
	needEspeak(t)
	res := pipelinetest.Run(t, tts.NewService(New(Options{Voice: "en-gb", Speed: 200}), tts.Options{}), pipelinetest.Options{
		Send: []frames.Frame{&frames.LLMText{Text: "One sentence. "}, &frames.LLMText{Text: "Two sentences."}},
		Task: pipeline.TaskOptions{AudioOutSampleRate: 48000},
	})
	var pcm []byte
	var texts []string
	for _, f := range res.Down() {
		switch f := f.(type) {
		case *frames.TTSAudioRaw:
			if f.SampleRate != 48000 {
				t.Fatalf("audio at %d Hz, want 48000", f.SampleRate)
			}
			pcm = append(pcm, f.PCM...)
		case *frames.TTSText:
			texts = append(texts, f.Text)
		}
	}
	if d := dsp.Duration(pcm, 48000, 1); d < 500*time.Millisecond {
		t.Errorf("only %v of audio", d)
	}
	if strings.Join(texts, "|") != "One sentence.|Two sentences." {
		t.Errorf("texts %q", texts)
	}
}

// fakeEspeak writes a script that prints a WAV header with some audio,
// then runs body (shell), and returns its path.
func fakeEspeak(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	head := dsp.AppendWAV(nil, dsp.Sine(440, 0.3, 22050, 100*time.Millisecond), 22050, 1)
	if err := os.WriteFile(filepath.Join(dir, "head.wav"), head, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncd " + dir + "\necho $$ > pid\n" + body + "\n"
	path := filepath.Join(dir, "espeak-ng")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func pidOf(t *testing.T, script string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(script), "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestInterruptionKillsTheProcess(t *testing.T) {
	// The fake sends its header and 100 ms of audio, then hangs, like a
	// long synthesis in progress.
	script := fakeEspeak(t, "cat head.wav\nexec sleep 30")
	s := New(Options{Command: script})
	ctx, cancel := context.WithCancel(context.Background())
	began := time.Now()
	var got int
	var err error
	for c, e := range s.Synthesize(ctx, tts.Request{Text: "a long text"}) {
		if e != nil {
			err = e
			break
		}
		got += len(c.Audio)
		if got >= 4410 { // all 100 ms arrived: interrupt mid-stream
			cancel()
		}
	}
	cancel()
	if err != nil {
		t.Fatalf("interruption reported as an error: %v", err)
	}
	if time.Since(began) > 10*time.Second {
		t.Fatal("Synthesize did not return promptly after the interruption")
	}
	if pid := pidOf(t, script); alive(pid) {
		t.Fatalf("process %d still alive after the interruption", pid)
	}
}

func TestStoppingEarlyKillsTheProcess(t *testing.T) {
	script := fakeEspeak(t, "cat head.wav\nexec sleep 30")
	for range New(Options{Command: script}).Synthesize(context.Background(), tts.Request{Text: "x"}) {
		break
	}
	if pid := pidOf(t, script); alive(pid) {
		t.Fatalf("process %d still alive after the consumer stopped", pid)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		want   string
		is     error
		pcmLen int
	}{
		{"exit status with stderr", "echo 'Error: voice does not exist' >&2\nexit 1", "voice does not exist", nil, 0},
		{"not a WAV", "echo this is not audio", "no RIFF/WAVE header", dsp.ErrNotWAV, 0},
		{"dies mid-stream", "cat head.wav\nexit 3", "exit status 3", nil, 4410},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pcm, _, err := collect(context.Background(), New(Options{Command: fakeEspeak(t, tc.body)}), "x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.is)
			}
			if len(pcm) != tc.pcmLen {
				t.Errorf("%d bytes of audio before the error, want %d", len(pcm), tc.pcmLen)
			}
		})
	}
}

func TestMissingCommandSaysHowToInstall(t *testing.T) {
	s := New(Options{Command: "espeak-ng-that-does-not-exist"})
	if err := s.Available(); err == nil || !strings.Contains(err.Error(), "apt-get install espeak-ng") {
		t.Fatalf("Available() = %v; want an install hint", err)
	}
	_, _, err := collect(context.Background(), s, "hello")
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("Synthesize error = %v", err)
	}
}

func TestRecoversAfterACrash(t *testing.T) {
	// The first run crashes; every later run works: each request is a new
	// process, so there is nothing to reconnect.
	script := fakeEspeak(t, "if [ ! -e crashed ]; then touch crashed; kill -9 $$; fi\ncat head.wav")
	s := New(Options{Command: script})
	if _, _, err := collect(context.Background(), s, "one"); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("first request: err = %v, want the crash", err)
	}
	pcm, _, err := collect(context.Background(), s, "two")
	if err != nil || len(pcm) != 4410 {
		t.Fatalf("second request: %d bytes, err %v", len(pcm), err)
	}
}

func TestTheTextArrivesOnStdin(t *testing.T) {
	script := fakeEspeak(t, "cat > text.txt\ncat head.wav")
	if _, _, err := collect(context.Background(), New(Options{Command: script, Voice: "fr", Speed: 150, Pitch: 40}), "Bonjour à tous"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(filepath.Dir(script), "text.txt"))
	if err != nil || string(got) != "Bonjour à tous" {
		t.Fatalf("stdin got %q (%v)", got, err)
	}
}

func BenchmarkEspeakSentence(b *testing.B) {
	needEspeak(b)
	s := New(Options{})
	for b.Loop() {
		if _, _, err := collect(context.Background(), s, "The quick brown fox jumps over the lazy dog."); err != nil {
			b.Fatal(err)
		}
	}
}
