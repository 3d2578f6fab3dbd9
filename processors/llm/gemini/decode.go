package gemini

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/internal/jsontext"
)

// functionCall is one call Gemini made.
type functionCall struct {
	id, name, signature string
	args                []byte
}

// decoder turns the data of stream chunks into text, function calls and
// usage. It reuses its buffers: decoding a text chunk allocates nothing;
// the caller turns the text into a string once.
type decoder struct {
	sc     jsontext.Scanner
	text   []byte
	fcalls []functionCall

	prompt, answer, thoughts, cached, total int
	gotUsage                                bool
	finish                                  string

	// textSig is the thought signature of the answer's text: Gemini puts it
	// on the last text part (in a stream, often an empty one).
	textSig string

	// Scratch for one part.
	thought bool
	partTxt []byte
}

// maxCallArgs bounds the arguments of one function call.
const maxCallArgs = 4 << 20

// decode parses one chunk. The returned text is valid until the next call.
func (d *decoder) decode(data []byte) ([]byte, error) {
	s := &d.sc
	s.Prefix = "gemini"
	s.Reset(data)
	d.text = d.text[:0]
	if !s.Open('{') {
		if s.Err() == nil {
			s.Fail("expected an object")
		}
		return nil, s.Err()
	}
	var stop error
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "candidates":
			if err := d.candidates(); err != nil && stop == nil {
				stop = err
			}
		case "usageMetadata":
			d.usageObject()
		case "promptFeedback":
			if r := d.blockReason(); r != "" {
				stop = &StopError{Reason: r, Prompt: true}
			}
		case "error":
			stop = d.errorObject()
		default:
			s.Skip()
		}
	}
	s.End()
	if err := s.Err(); err != nil {
		return nil, err
	}
	if stop != nil {
		return nil, stop
	}
	return d.text, nil
}

func (d *decoder) candidates() error {
	s := &d.sc
	var stop error
	if !s.Open('[') {
		return nil
	}
	for first, i := true, 0; s.More(']', &first); i++ {
		if !s.Open('{') {
			continue
		}
		for first := true; s.More('}', &first); {
			key := s.Key()
			if i > 0 { // one candidate is asked for; others are ignored
				s.Skip()
				continue
			}
			switch string(key) {
			case "content":
				if err := d.content(); err != nil {
					stop = err
				}
			case "finishReason":
				if r := s.String(); r != "" {
					d.finish = r
					switch r {
					case "STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED":
					default:
						stop = &StopError{Reason: r}
					}
				}
			default:
				s.Skip()
			}
		}
	}
	return stop
}

func (d *decoder) content() error {
	s := &d.sc
	if !s.Open('{') {
		return nil
	}
	for first := true; s.More('}', &first); {
		if string(s.Key()) != "parts" {
			s.Skip()
			continue
		}
		if !s.Open('[') {
			continue
		}
		for first := true; s.More(']', &first); {
			if err := d.part(); err != nil {
				return err
			}
		}
	}
	return nil
}

// part reads one part: text (thoughts skipped) or a functionCall, with the
// thoughtSignature that may come beside either.
func (d *decoder) part() error {
	s := &d.sc
	if !s.Open('{') {
		return nil
	}
	d.thought, d.partTxt = false, d.partTxt[:0]
	var fc *functionCall
	sig := ""
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "text":
			d.partTxt = s.AppendString(d.partTxt)
		case "thought":
			d.thought = s.Peek() == 't'
			s.Skip()
		case "thoughtSignature":
			sig = s.String()
		case "functionCall":
			d.fcalls = append(d.fcalls, functionCall{})
			fc = &d.fcalls[len(d.fcalls)-1]
			d.functionCall(fc)
		default:
			s.Skip()
		}
	}
	if fc != nil {
		fc.signature = sig
		if len(fc.args) > maxCallArgs {
			return fmt.Errorf("gemini: the arguments of function call %q are over %d bytes", fc.name, maxCallArgs)
		}
	}
	if !d.thought {
		d.text = append(d.text, d.partTxt...)
		if fc == nil && sig != "" {
			d.textSig = sig
		}
	}
	return nil
}

func (d *decoder) functionCall(fc *functionCall) {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "name":
			fc.name = s.String()
		case "id":
			fc.id = s.String()
		case "args":
			switch s.Peek() {
			case '{':
				fc.args = append(fc.args[:0], s.Raw()...)
			case 'n':
				s.Null()
			default:
				s.Fail("functionCall args is not an object")
			}
		default:
			s.Skip()
		}
	}
}

// usageObject reads usageMetadata; every chunk may carry it, the last one
// counts.
func (d *decoder) usageObject() {
	s := &d.sc
	if !s.Open('{') {
		return
	}
	d.gotUsage = true
	d.prompt, d.answer, d.thoughts, d.cached, d.total = 0, 0, 0, 0, 0
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "promptTokenCount":
			d.prompt = s.Int()
		case "candidatesTokenCount":
			d.answer = s.Int()
		case "thoughtsTokenCount":
			d.thoughts = s.Int()
		case "cachedContentTokenCount":
			d.cached = s.Int()
		case "totalTokenCount":
			d.total = s.Int()
		default:
			s.Skip()
		}
	}
}

func (d *decoder) blockReason() string {
	s := &d.sc
	reason := ""
	if !s.Open('{') {
		return ""
	}
	for first := true; s.More('}', &first); {
		if string(s.Key()) == "blockReason" {
			reason = s.String()
		} else {
			s.Skip()
		}
	}
	if reason == "BLOCK_REASON_UNSPECIFIED" {
		return ""
	}
	return reason
}

// errorObject reads an error sent inside the stream.
func (d *decoder) errorObject() error {
	s := &d.sc
	e := &APIError{StatusCode: http.StatusOK}
	if !s.Open('{') {
		return nil
	}
	for first := true; s.More('}', &first); {
		switch string(s.Key()) {
		case "code":
			e.Code = s.Int()
		case "message":
			e.Message = s.String()
		case "status":
			e.Status = s.String()
		default:
			s.Skip()
		}
	}
	return e
}

// usage returns the answer's usage in framewire's terms: completion
// tokens include the thinking ones (as OpenAI counts reasoning tokens).
func (d *decoder) usage() frames.LLMTokenUsage {
	completion := d.answer + d.thoughts
	total := d.total
	if total == 0 {
		total = d.prompt + completion
	}
	return frames.LLMTokenUsage{
		PromptTokens:     d.prompt,
		CompletionTokens: completion,
		TotalTokens:      total,
		CacheReadTokens:  d.cached,
		ReasoningTokens:  d.thoughts,
	}
}

// calls returns the function calls in the order Gemini made them. A call
// without an id gets prefix and its position; a call without arguments
// gets {}.
func (d *decoder) calls(prefix string) []frames.LLMToolCall {
	out := make([]frames.LLMToolCall, 0, len(d.fcalls))
	for i, fc := range d.fcalls {
		id := fc.id
		if id == "" {
			id = prefix + strconv.Itoa(i)
		}
		args := string(fc.args)
		if args == "" || args == "null" {
			args = "{}"
		}
		out = append(out, frames.LLMToolCall{ID: id, Name: fc.name, Arguments: args})
	}
	return out
}
