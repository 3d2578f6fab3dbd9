package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes bounds one SSE line when Options.MaxLineBytes is zero.
const DefaultMaxLineBytes = 1 << 20

// sseReader reads server-sent events. It keeps one line and one event's
// data in buffers it reuses, so reading an event does not allocate once the
// buffers have grown; no line may exceed max bytes.
type sseReader struct {
	r     *bufio.Reader
	max   int
	long  []byte // a line longer than the bufio buffer, assembled
	data  []byte // the current event's data lines, joined by "\n"
	lines int    // data lines in the current event
	event []byte // the current event's type
}

func newSSEReader(r io.Reader, max int) *sseReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	size := 16 << 10
	if size > max {
		size = max
	}
	if size < 16 {
		size = 16
	}
	return &sseReader{r: bufio.NewReaderSize(r, size), max: max}
}

// errLineTooLong is wrapped by the error for an over-long line.
var errLineTooLong = errors.New("SSE line too long")

// readLine returns the next line without its end of line, valid until the
// next call. At the end of input it returns the last unterminated line (if
// any) and then io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > s.max {
				return nil, fmt.Errorf("openai: %w: more than %d bytes", errLineTooLong, s.max)
			}
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) > s.max {
		return nil, fmt.Errorf("openai: %w: more than %d bytes", errLineTooLong, s.max)
	}
	return line, nil
}

// next returns the data and type of the next event that has data, valid
// until the next call, or io.EOF after the last one. Comments and id/retry
// fields are skipped.
func (s *sseReader) next() (data, event []byte, err error) {
	s.data, s.lines, s.event = s.data[:0], 0, s.event[:0]
	for {
		line, err := s.readLine()
		if err == io.EOF {
			if s.lines > 0 {
				return s.data, s.event, nil
			}
			return nil, nil, io.EOF
		}
		if err != nil {
			return nil, nil, err
		}
		if len(line) == 0 {
			if s.lines > 0 {
				return s.data, s.event, nil
			}
			s.event = s.event[:0]
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if s.lines > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			s.lines++
			if len(s.data) > s.max {
				return nil, nil, fmt.Errorf("openai: %w: event data over %d bytes", errLineTooLong, s.max)
			}
		case "event":
			s.event = append(s.event[:0], value...)
		}
	}
}
