package wsfake

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// Kind says what a Step does.
type Kind int

// The kinds of step a script holds.
const (
	// Expect waits until the client has sent what the step's Text asks for.
	Expect Kind = iota + 1
	// Send sends the step's Text as a text message.
	Send
	// Close closes the connection with the step's Code and Text as reason.
	Close
)

// String names the kind as a script line begins.
func (k Kind) String() string {
	switch k {
	case Expect:
		return "<"
	case Send:
		return ">"
	case Close:
		return "close"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Step is one line of a Script.
type Step struct {
	Kind Kind
	// Text is what an Expect step waits for, in the script's own words
	// (Options.Expect reads it), the message a Send step sends, or the
	// reason a Close step gives.
	Text string
	// Code is the close status of a Close step.
	Code websocket.StatusCode
	// Line is where the step stands in its script, for messages.
	Line int
}

// String writes the step back as its script line.
func (s Step) String() string {
	switch s.Kind {
	case Close:
		return strings.TrimSpace(fmt.Sprintf("close %d %s", int(s.Code), s.Text))
	default:
		return s.Kind.String() + " " + s.Text
	}
}

// Script is the server's side of one recorded session.
type Script struct {
	// Name is the file the script came from, for messages.
	Name  string
	Steps []Step
}

// maxLine bounds one script line: recorded audio messages are long.
const maxLine = 1 << 20

// Parse reads a script: blank lines and lines starting with "#" are skipped;
// "< what" is an Expect step, "> message" a Send step and
// "close CODE [reason]" a Close step. Anything else is an error naming the
// line.
func Parse(name string, r io.Reader) (Script, error) {
	s := Script{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "< "):
			s.Steps = append(s.Steps, Step{Kind: Expect, Text: line[2:], Line: n})
		case strings.HasPrefix(line, "> "):
			s.Steps = append(s.Steps, Step{Kind: Send, Text: line[2:], Line: n})
		case strings.HasPrefix(line, "close "):
			fields := strings.SplitN(line, " ", 3)
			code, err := strconv.Atoi(fields[1])
			if err != nil {
				return Script{}, fmt.Errorf("%s:%d: bad close line %q", name, n, line)
			}
			st := Step{Kind: Close, Code: websocket.StatusCode(code), Line: n}
			if len(fields) == 3 {
				st.Text = fields[2]
			}
			s.Steps = append(s.Steps, st)
		default:
			return Script{}, fmt.Errorf("%s:%d: unknown script line %q", name, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return Script{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// Load reads and parses the script at path, failing t if it cannot.
func Load(t testing.TB, path string) Script {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(filepath.Base(path), f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
