package wire

// PeekID returns the id of an RTVI client message without decoding it: the
// top-level "id" string of a JSON object whose "label" is "rtvi-ai". ok is
// false for anything else (not JSON, not RTVI, no id or one that is not a
// string). As [Decode], it takes the last of repeated keys. It copies
// nothing but the id and stops at the first syntax error, so it is cheap
// enough to run on a message about to be refused, to answer it by its id.
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
				return r.skip()
			}
			s, err := r.stringBytes(&r.scratch)
			label = err == nil && string(s) == Label
			return err
		case "id":
			haveID = false
			if r.peek() != kindString {
				return r.skip() // Decode refuses it too
			}
			s, err := r.str()
			id, haveID = s, err == nil
			return err
		}
		return r.skip()
	})
	if err != nil || !label || !haveID {
		return "", false
	}
	return id, true
}
