package llmhttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes bounds one SSE line, and one event's data, when the
// caller gives no bound.
const DefaultMaxLineBytes = 1 << 20

// ErrLineTooLong is wrapped by the error for an over-long SSE line or event.
var ErrLineTooLong = errors.New("SSE line too long")

// Reader reads server-sent events. It keeps one line and one event's data
// in buffers it reuses, so reading an event allocates nothing once the
// buffers have grown. No line, and no event's data, may exceed its bound.
type Reader struct {
	r     *bufio.Reader
	max   int
	long  []byte // a line longer than the bufio buffer, assembled
	data  []byte // the current event's data lines, joined by "\n"
	lines int    // data lines in the current event
	event []byte // the current event's type
}

// NewReader returns a Reader of r whose lines and events hold at most limit
// bytes (DefaultMaxLineBytes when limit <= 0).
func NewReader(r io.Reader, limit int) *Reader {
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	size := max(min(16<<10, limit), 16)
	return &Reader{r: bufio.NewReaderSize(r, size), max: limit}
}

// readLine returns the next line without its end of line, valid until the
// next call. At the end of input it returns the last unterminated line (if
// any) and then io.EOF.
func (s *Reader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > s.max {
				return nil, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, s.max)
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
		return nil, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, s.max)
	}
	return line, nil
}

// Next returns the data and type of the next event that has data, both
// valid until the next call, or io.EOF after the last one. Comments and the
// id and retry fields are skipped. An event cut off by the end of input
// (no blank line after it) is returned as complete: whether the stream was
// complete is for the caller's protocol to say.
func (s *Reader) Next() (data, event []byte, err error) {
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
				return nil, nil, fmt.Errorf("%w: event data over %d bytes", ErrLineTooLong, s.max)
			}
		case "event":
			s.event = append(s.event[:0], value...)
		}
	}
}
