package openaiapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Error holds what an error answer said. Each client converts it to its own
// exported APIError, which has the same fields in the same order.
type Error struct {
	// StatusCode is the HTTP status (200 for an error inside a stream or an
	// answer).
	StatusCode int
	// Message, Type, Code and Param come from OpenAI's error object (or a
	// FastAPI server's detail).
	Message, Type, Code, Param string
	// Body is the start of the body when it was not an error object.
	Body string
}

// Parse says how to read an error body beyond OpenAI's {"error": ...}
// envelope.
type Parse struct {
	// Detail, when set, renders a FastAPI {"detail": ...} member into the
	// message; nil ignores it. See [DetailText] and [DetailRaw].
	Detail func(json.RawMessage) string
	// BodyLimit is how many bytes of an unrecognised body are kept in
	// Error.Body (cut on a rune boundary). Default: 300.
	BodyLimit int
}

// MaxErrorBody bounds how much of an error body is read.
const MaxErrorBody = 64 << 10

// Read reads at most [MaxErrorBody] bytes of resp's body, closes it and
// parses the result.
func (p Parse) Read(resp *http.Response) Error {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	return p.Parse(resp.StatusCode, raw)
}

// Parse reads an error body of any shape: OpenAI's {"error": {...}} or
// {"error": "text"}, a FastAPI {"detail": ...} when p.Detail is set, and
// anything else as the clipped body text.
func (p Parse) Parse(status int, raw []byte) Error {
	e := Error{StatusCode: status}
	var env struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &env) == nil {
		if len(env.Error) > 0 {
			var obj struct {
				Message string          `json:"message"`
				Type    string          `json:"type"`
				Code    json.RawMessage `json:"code"`
				Param   json.RawMessage `json:"param"`
			}
			if json.Unmarshal(env.Error, &obj) == nil {
				e.Message, e.Type, e.Code, e.Param = obj.Message, obj.Type, Scalar(obj.Code), Scalar(obj.Param)
				return e
			}
			var msg string
			if json.Unmarshal(env.Error, &msg) == nil {
				e.Message = msg
				return e
			}
		}
		if p.Detail != nil && len(env.Detail) > 0 {
			e.Message = p.Detail(env.Detail)
			return e
		}
	}
	limit := p.BodyLimit
	if limit <= 0 {
		limit = 300
	}
	e.Body = Clip(strings.TrimSpace(string(raw)), limit)
	return e
}

// Describe renders e as an error text: prefix, "HTTP <status> <text>" (or
// what, when the status is 200 and what is set), the message or body, then
// type, code and param when known.
func (e Error) Describe(prefix, what string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(": ")
	if e.StatusCode == http.StatusOK && what != "" {
		b.WriteString(what)
	} else {
		fmt.Fprintf(&b, "HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	switch {
	case e.Message != "":
		b.WriteString(": " + e.Message)
	case e.Body != "":
		b.WriteString(": " + e.Body)
	}
	var details []string
	for _, d := range [][2]string{{"type", e.Type}, {"code", e.Code}, {"param", e.Param}} {
		if d[1] != "" {
			details = append(details, d[0]+" "+d[1])
		}
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	}
	return b.String()
}

// DetailText renders FastAPI's detail: a string or number, a list of
// validation errors as "loc.path: msg; ...", else the clipped raw JSON.
func DetailText(raw json.RawMessage) string {
	if s := Scalar(raw); s != "" {
		return s
	}
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &items) == nil && len(items) > 0 {
		var parts []string
		for _, it := range items {
			var loc []string
			for _, l := range it.Loc {
				loc = append(loc, fmt.Sprint(l))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
		}
		return strings.Join(parts, "; ")
	}
	return Clip(string(raw), 300)
}

// DetailRaw renders FastAPI's detail: a string or number, else the raw JSON.
func DetailRaw(raw json.RawMessage) string {
	if s := Scalar(raw); s != "" {
		return s
	}
	return string(raw)
}

// Scalar renders a JSON string or number as text; null and others as "".
func Scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// Clip shortens s to at most limit bytes, cut on a rune boundary, with "…"
// appended when it cut.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + "…"
}
