package llmhttp

import (
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// MaxErrorBody bounds how much of an error answer's body is read.
const MaxErrorBody = 64 << 10

// ReadErrorBody reads at most [MaxErrorBody] bytes of resp's body and
// closes it.
func ReadErrorBody(resp *http.Response) []byte {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	return b
}

// Clip shortens s to at most limit bytes, cut on a rune boundary, with "…"
// appended when it cut, and replaces control characters (newlines
// included) with spaces so the text stays on one log line.
func Clip(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + "…"
}
