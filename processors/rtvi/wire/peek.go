package wire

import "bytes"

// PeekID returns the id of an RTVI client message without decoding it: the
// top-level "id" string of a JSON object whose "label" is "rtvi-ai". ok is
// false for anything else (not JSON, not RTVI, no id or one that is not a
// string). As [Decode], it takes the last of repeated keys. It copies
// nothing but the id, skips string values without checking their
// contents (a search for their closing quote), and stops at the first
// syntax error, so it is cheap enough to run on a message about to be
// refused, to answer it by its id. On a message Decode accepts it finds
// the id Decode finds.
func PeekID(b []byte) (id string, ok bool) {
	r := reader{b: b}
	if r.peek() != kindObject {
		return "", false
	}
	var label, haveID bool
	err := r.object(func(key []byte) error {
		switch string(key) {
		case "label":
			label = false
			if r.peek() != kindString {
				return r.skipLoosely()
			}
			s, err := r.stringBytes(&r.scratch)
			label = err == nil && string(s) == Label
			return err
		case "id":
			haveID = false
			if r.peek() != kindString {
				return r.skipLoosely() // Decode refuses it too
			}
			s, err := r.str()
			id, haveID = s, err == nil
			return err
		}
		return r.skipLoosely()
	})
	if err != nil || !label || !haveID {
		return "", false
	}
	return id, true
}

// skipLoosely consumes one value as skip does, except that a string's
// contents are not checked: it ends at the first quote not escaped.
func (r *reader) skipLoosely() error {
	switch r.peek() {
	case kindString:
		for j := r.i + 1; ; {
			k := bytes.IndexByte(r.b[j:], '"')
			if k < 0 {
				r.i = len(r.b)
				return r.syntax("unterminated string")
			}
			q := j + k
			n := 0 // backslashes before the quote
			for n < q-r.i-1 && r.b[q-1-n] == '\\' {
				n++
			}
			if n%2 == 0 {
				r.i = q + 1
				return nil
			}
			j = q + 1
		}
	case kindObject:
		return r.object(func([]byte) error { return r.skipLoosely() })
	case kindArray:
		return r.array(func(int) error { return r.skipLoosely() })
	}
	return r.skip()
}
