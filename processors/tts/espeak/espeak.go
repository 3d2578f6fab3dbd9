package espeak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framewire/framewire/dsp"
	"github.com/framewire/framewire/processors/tts"
	"github.com/framewire/framewire/processors/tts/internal/wavstream"
)

// DefaultCommand is the program run when Options.Command is empty.
const DefaultCommand = "espeak-ng"

// Options configure a [Synthesizer]. The zero value speaks American
// English at espeak-ng's default speed and pitch.
type Options struct {
	// Command is the espeak-ng executable, a name looked up in PATH or a
	// path. Default: DefaultCommand.
	Command string
	// Voice is passed as -v, for example "en-us", "en-gb", "fr" or
	// "en-us+f3". Default: "en-us".
	Voice string
	// Speed is the speaking rate in words per minute (-s); 0 leaves
	// espeak-ng's default of 175.
	Speed int
	// Pitch is 0 to 99 (-p); 0 leaves espeak-ng's default of 50.
	Pitch int
	// Args are extra arguments placed before the voice options.
	Args []string
	// KillWait bounds how long a killed process may keep its output open
	// before its pipes are closed anyway. Default: 1s.
	KillWait time.Duration
}

// Synthesizer speaks with espeak-ng. It implements tts.Synthesizer and is
// safe for concurrent use: every request runs its own process.
type Synthesizer struct {
	opts Options
	args []string

	lookOnce sync.Once
	path     string
	lookErr  error
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// New returns a synthesizer for o.
func New(o Options) *Synthesizer {
	if o.Command == "" {
		o.Command = DefaultCommand
	}
	if o.Voice == "" {
		o.Voice = "en-us"
	}
	if o.KillWait <= 0 {
		o.KillWait = time.Second
	}
	args := append([]string{}, o.Args...)
	args = append(args, "--stdout", "-b", "1", "-v", o.Voice)
	if o.Speed > 0 {
		args = append(args, "-s", strconv.Itoa(o.Speed))
	}
	if o.Pitch > 0 {
		args = append(args, "-p", strconv.Itoa(o.Pitch))
	}
	return &Synthesizer{opts: o, args: args}
}

// Model implements [frames.Modeler]: the engine and voice, for metrics.
func (s *Synthesizer) Model() string { return "espeak-ng/" + s.opts.Voice }

// Available reports whether the command can be found, with an error that
// says how to install it when it cannot.
func (s *Synthesizer) Available() error {
	s.lookOnce.Do(func() {
		s.path, s.lookErr = exec.LookPath(s.opts.Command)
		if s.lookErr != nil {
			s.lookErr = fmt.Errorf("espeak: %q not found (install it with: apt-get install espeak-ng): %w", s.opts.Command, s.lookErr)
		}
	})
	return s.lookErr
}

// maxStderr bounds the error output kept for messages.
const maxStderr = 2 << 10

// readSize is the most audio read (and yielded) at once: 8 KiB is about
// 190 ms at espeak-ng's 22050 Hz.
const readSize = 8 << 10

// Synthesize implements tts.Synthesizer: it runs the command with the text
// on stdin and yields the PCM of the WAV it writes as it arrives. The
// process is killed when ctx ends or the caller stops iterating.
func (s *Synthesizer) Synthesize(ctx context.Context, req tts.Request) iter.Seq2[tts.Chunk, error] {
	return func(yield func(tts.Chunk, error) bool) {
		if err := s.Available(); err != nil {
			yield(tts.Chunk{}, err)
			return
		}
		parent := ctx
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cmd := exec.CommandContext(ctx, s.path, s.args...)
		cmd.Stdin = strings.NewReader(req.Text)
		stderr := &limitedBuffer{max: maxStderr}
		cmd.Stderr = stderr
		cmd.WaitDelay = s.opts.KillWait
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			yield(tts.Chunk{}, fmt.Errorf("espeak: %w", err))
			return
		}
		if err := cmd.Start(); err != nil {
			yield(tts.Chunk{}, fmt.Errorf("espeak: starting %s: %w", s.opts.Command, err))
			return
		}
		done, err := s.stream(ctx, stdout, yield)
		if !done && err == nil {
			// Interrupted, or the consumer stopped: kill the process, which
			// nobody listens to any more. Not a failure, and yield must not
			// be called again.
			cancel()
			_ = cmd.Wait()
			return
		}
		// The audio is complete, or broken because the process ended or
		// misbehaved: give it KillWait to exit on its own, so its exit
		// status explains what happened; being killed after that is not a
		// failure in itself.
		var late atomic.Bool
		t := time.AfterFunc(s.opts.KillWait, func() { late.Store(true); cancel() })
		waitErr := cmd.Wait()
		t.Stop()
		if late.Load() {
			waitErr = nil
		}
		if parent.Err() != nil {
			return
		}
		if err != nil || waitErr != nil {
			yield(tts.Chunk{}, s.failure(waitErr, err, stderr))
		}
	}
}

// stream reads the WAV from stdout and yields its samples. done is true
// when the audio ended; false with a nil error when the consumer stopped
// or ctx ended.
func (s *Synthesizer) stream(ctx context.Context, stdout io.Reader, yield func(tts.Chunk, error) bool) (done bool, err error) {
	br := bufio.NewReaderSize(stdout, readSize)
	h, err := wavstream.ReadHeader(br)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		return false, err
	}
	var r io.Reader = br
	if h.DataBytes >= 0 {
		r = io.LimitReader(br, h.DataBytes)
	}
	buf := make([]byte, readSize)
	var mono []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pcm := buf[:n]
			if h.Channels > 1 {
				mono = dsp.AppendMono(mono[:0], pcm, h.Channels)
				pcm = mono
			}
			if !yield(tts.Chunk{Audio: pcm, SampleRate: h.SampleRate}, nil) {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, nil
			}
			return false, fmt.Errorf("reading audio: %w", err)
		}
	}
}

// failure describes a failed run from the process's exit error and the
// error reading its output (either may be nil) and its stderr.
func (s *Synthesizer) failure(exit, read error, stderr *limitedBuffer) error {
	var err error
	switch {
	case exit != nil && read != nil:
		err = fmt.Errorf("%w, after %w", exit, read)
	case exit != nil:
		err = exit
	default:
		err = read
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return fmt.Errorf("espeak: %s failed: %w (stderr: %s)", s.opts.Command, err, msg)
	}
	return fmt.Errorf("espeak: %s failed: %w", s.opts.Command, err)
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
