package wire

// Snapshot is the accessibility snapshot a client sends in ui-snapshot
// (docs/protocol.md §8.2): the whole page, never a diff, so each one replaces the
// previous. Unknown members are kept in Extra and re-encoded, and members
// sent as explicit null (Python clients) are re-encoded as null, so a
// decoded snapshot encodes to an equal JSON value.
type Snapshot struct {
	// Root is the node for document.body.
	Root Node
	// CapturedAt is when the client took the snapshot, in epoch milliseconds.
	CapturedAt int64
	// Selection is the user's text selection; nil when there is none.
	Selection *Selection
	// Extra holds members this model does not know (for example viewport),
	// in the order received.
	Extra []Field

	selectionNull bool
}

// Field is one unknown object member, kept verbatim.
type Field struct {
	Key   string
	Value RawJSON
}

// NodeFields names the optional members of a [Node], as bits.
type NodeFields uint8

// The optional members of a node.
const (
	FieldName NodeFields = 1 << iota
	FieldValue
	FieldState
	FieldLevel
	FieldColCount
	FieldRowCount
	FieldChildren
)

// Node is one node of the accessibility tree. Text leaves have Ref ""; the
// JS client omits members without a value, Python clients send null.
type Node struct {
	// Ref identifies the element across snapshots ("e12"); "" for text
	// leaves, "<ref>.more" for truncation placeholders.
	Ref string
	// Role is the ARIA-like role ("button", "heading", "text", ...).
	Role string
	// Name is the accessible name. Options always have one, possibly "".
	Name string
	// Value is the current value of a form control.
	Value string
	// State lists state tags in client order ("focused", "checked", ...).
	State []string
	// Level is a heading level.
	Level int
	// ColCount and RowCount come from aria-colcount and aria-rowcount.
	ColCount, RowCount int
	// Children are the child nodes, in document order.
	Children []Node
	// Extra holds unknown members, in the order received.
	Extra []Field
	// Set marks optional members that are present even though their value
	// is the zero value (an option's empty name, a level of 0). Decoding
	// sets it for every member received; when building a node by hand, only
	// zero values that must be sent need it.
	Set NodeFields

	null NodeFields // members received as explicit null
}

// Has reports whether the optional member f is present: received with a
// value, or set to a non-zero value.
func (n *Node) Has(f NodeFields) bool {
	if n.Set&f != 0 {
		return true
	}
	switch f {
	case FieldName:
		return n.Name != ""
	case FieldValue:
		return n.Value != ""
	case FieldState:
		return len(n.State) > 0
	case FieldLevel:
		return n.Level != 0
	case FieldColCount:
		return n.ColCount != 0
	case FieldRowCount:
		return n.RowCount != 0
	case FieldChildren:
		return len(n.Children) > 0
	}
	return false
}

// Walk calls fn for n and every node below it, depth-first in pre-order,
// with the depth of each (n is at depth 0). It stops early when fn returns
// false, and reports whether it went through the whole tree.
func (n *Node) Walk(fn func(node *Node, depth int) bool) bool {
	return n.walk(fn, 0)
}

func (n *Node) walk(fn func(*Node, int) bool, depth int) bool {
	if !fn(n, depth) {
		return false
	}
	for i := range n.Children {
		if !n.Children[i].walk(fn, depth+1) {
			return false
		}
	}
	return true
}

// Find returns the first node with the given non-empty ref, or nil.
func (s *Snapshot) Find(ref string) *Node {
	if ref == "" {
		return nil
	}
	var found *Node
	s.Root.Walk(func(n *Node, _ int) bool {
		if n.Ref == ref {
			found = n
			return false
		}
		return true
	})
	return found
}

// Selection is the user's text selection in a snapshot.
type Selection struct {
	// Ref is the node holding the selection (for a document selection, the
	// nearest ancestor with a ref).
	Ref string
	// Text is the selected text, at most 2000 characters.
	Text string
	// StartOffset and EndOffset are set for input and textarea selections.
	StartOffset, EndOffset *int
	// Extra holds unknown members, in the order received.
	Extra []Field

	nulls uint8
}

const (
	selNullStart = 1 << iota
	selNullEnd
)

// AppendJSON implements [Payload].
func (s Snapshot) AppendJSON(dst []byte) []byte {
	dst = s.Root.AppendJSON(appendKey(append(dst, '{'), "root", true))
	dst = appendInt(appendKey(dst, "captured_at", false), s.CapturedAt)
	switch {
	case s.Selection != nil:
		dst = s.Selection.AppendJSON(appendKey(dst, "selection", false))
	case s.selectionNull:
		dst = append(appendKey(dst, "selection", false), "null"...)
	}
	dst = appendExtra(dst, s.Extra)
	return append(dst, '}')
}

// AppendJSON implements [Payload].
func (s Selection) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "ref", s.Ref, true)
	dst = appendStringField(dst, "text", s.Text, false)
	optInt := func(key string, v *int, null uint8) {
		switch {
		case v != nil:
			dst = appendInt(appendKey(dst, key, false), int64(*v))
		case s.nulls&null != 0:
			dst = append(appendKey(dst, key, false), "null"...)
		}
	}
	optInt("start_offset", s.StartOffset, selNullStart)
	optInt("end_offset", s.EndOffset, selNullEnd)
	dst = appendExtra(dst, s.Extra)
	return append(dst, '}')
}

// AppendJSON implements [Payload]. Members are written in the client's
// order (ref, role, name, value, state, level, colcount, rowcount,
// children), then the unknown ones.
func (n Node) AppendJSON(dst []byte) []byte {
	dst = appendStringField(append(dst, '{'), "ref", n.Ref, true)
	dst = appendStringField(dst, "role", n.Role, false)
	nullField := func(f NodeFields, key string) bool {
		if n.null&f != 0 {
			dst = append(appendKey(dst, key, false), "null"...)
			return true
		}
		return false
	}
	if n.Has(FieldName) {
		dst = appendStringField(dst, "name", n.Name, false)
	} else {
		nullField(FieldName, "name")
	}
	if n.Has(FieldValue) {
		dst = appendStringField(dst, "value", n.Value, false)
	} else {
		nullField(FieldValue, "value")
	}
	if n.Has(FieldState) {
		dst = append(appendKey(dst, "state", false), '[')
		for i, s := range n.State {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, s)
		}
		dst = append(dst, ']')
	} else {
		nullField(FieldState, "state")
	}
	intField := func(f NodeFields, key string, v int) {
		if n.Has(f) {
			dst = appendInt(appendKey(dst, key, false), int64(v))
		} else {
			nullField(f, key)
		}
	}
	intField(FieldLevel, "level", n.Level)
	intField(FieldColCount, "colcount", n.ColCount)
	intField(FieldRowCount, "rowcount", n.RowCount)
	if n.Has(FieldChildren) {
		dst = append(appendKey(dst, "children", false), '[')
		for i := range n.Children {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = n.Children[i].AppendJSON(dst)
		}
		dst = append(dst, ']')
	} else {
		nullField(FieldChildren, "children")
	}
	dst = appendExtra(dst, n.Extra)
	return append(dst, '}')
}

func appendExtra(dst []byte, extra []Field) []byte {
	for _, f := range extra {
		dst = appendString(append(dst, ','), f.Key)
		dst = appendPayload(append(dst, ':'), f.Value)
	}
	return dst
}

// DecodeSnapshot decodes an accessibility snapshot (the tree member of
// ui-snapshot). Unknown members are kept; optional members may be absent
// or null; ref and role are required on every node, root and captured_at
// on the snapshot, ref and text on the selection.
func DecodeSnapshot(b []byte) (*Snapshot, error) {
	r := reader{b: b}
	s, err := decodeSnapshot(&r)
	if err == nil {
		if r.ws(); r.i != len(b) {
			return nil, r.syntax("trailing data after value")
		}
		return s, nil
	}
	// A field error stops the walk early: input that is not JSON at all
	// must still be reported as such.
	if verr := validJSON(b); verr != nil {
		return nil, verr
	}
	return nil, err
}

func decodeSnapshot(r *reader) (*Snapshot, error) {
	s := &Snapshot{}
	var haveRoot, haveCaptured bool
	err := r.readObject(func(key []byte) error {
		switch string(key) {
		case "root":
			haveRoot = true
			root, err := decodeNode(r)
			s.Root = root
			return at(err, "root")
		case "captured_at":
			v, err := r.readInt()
			s.CapturedAt, haveCaptured = v, true
			return at(err, "captured_at")
		case "selection":
			if r.null() {
				s.Selection, s.selectionNull = nil, true
				return nil
			}
			sel, err := decodeSelection(r)
			s.Selection, s.selectionNull = sel, false
			return at(err, "selection")
		}
		return r.extra(key, &s.Extra)
	})
	if err != nil {
		return nil, err
	}
	if !haveRoot {
		return nil, missing("root")
	}
	if !haveCaptured {
		return nil, missing("captured_at")
	}
	return s, nil
}

// extra reads an unknown member into list.
func (r *reader) extra(key []byte, list *[]Field) error {
	k := string(key)
	raw, err := r.raw()
	if err != nil {
		return err
	}
	*list = append(*list, Field{Key: k, Value: raw})
	return nil
}

func decodeSelection(r *reader) (*Selection, error) {
	s := &Selection{}
	var haveRef, haveText bool
	optInt := func(dst **int, null uint8, name string) error {
		if r.null() {
			*dst = nil
			s.nulls |= null
			return nil
		}
		v, err := r.readInt()
		if err != nil {
			return at(err, name)
		}
		iv := int(v)
		*dst = &iv
		s.nulls &^= null
		return nil
	}
	err := r.readObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "ref":
			s.Ref, err = r.readString()
			haveRef = true
			return at(err, "ref")
		case "text":
			s.Text, err = r.readString()
			haveText = true
			return at(err, "text")
		case "start_offset":
			return optInt(&s.StartOffset, selNullStart, "start_offset")
		case "end_offset":
			return optInt(&s.EndOffset, selNullEnd, "end_offset")
		}
		return r.extra(key, &s.Extra)
	})
	if err != nil {
		return nil, err
	}
	if !haveRef {
		return nil, missing("ref")
	}
	if !haveText {
		return nil, missing("text")
	}
	return s, nil
}

// decodeNode decodes one node into n. It is the hot loop of snapshot
// decoding, so it walks members without closures and builds each
// children slice once, at its final size, from the reader's node stack.
func decodeNode(r *reader) (Node, error) {
	var n Node
	return n, n.decode(r)
}

// decode fills n (a local of decodeNode: taking the address of a value
// that recursion passes around would move every node to the heap).
func (n *Node) decode(r *reader) error {
	if k := r.peek(); k != kindObject {
		return wrongType("object", k)
	}
	if err := r.enter('{'); err != nil {
		return err
	}
	var haveRef, haveRole bool
	first := true
	for {
		key, ok, err := r.member(&first)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch string(key) {
		case "ref":
			if n.Ref, err = r.readString(); err != nil {
				return at(err, "ref")
			}
			haveRef = true
		case "role":
			if k := r.peek(); k != kindString {
				return at(wrongType("string", k), "role")
			}
			b, err := r.stringBytes(&r.scratch)
			if err != nil {
				return err
			}
			n.Role, haveRole = internRole(b), true
		case "name":
			s, isNull, err := r.readOptString()
			if err != nil {
				return at(err, "name")
			}
			n.Name = s
			n.mark(FieldName, isNull)
		case "value":
			s, isNull, err := r.readOptString()
			if err != nil {
				return at(err, "value")
			}
			n.Value = s
			n.mark(FieldValue, isNull)
		case "state":
			if err := decodeState(r, n); err != nil {
				return at(err, "state")
			}
		case "level":
			if err := n.optInt(r, FieldLevel, &n.Level); err != nil {
				return at(err, "level")
			}
		case "colcount":
			if err := n.optInt(r, FieldColCount, &n.ColCount); err != nil {
				return at(err, "colcount")
			}
		case "rowcount":
			if err := n.optInt(r, FieldRowCount, &n.RowCount); err != nil {
				return at(err, "rowcount")
			}
		case "children":
			kids, isNull, err := decodeChildren(r)
			if err != nil {
				return at(err, "children")
			}
			n.Children = kids
			n.mark(FieldChildren, isNull)
		default:
			if err := r.extra(key, &n.Extra); err != nil {
				return err
			}
		}
	}
	if !haveRef {
		return missing("ref")
	}
	if !haveRole {
		return missing("role")
	}
	return nil
}

// mark records an optional member as present or null.
func (n *Node) mark(f NodeFields, isNull bool) {
	if isNull {
		n.null |= f
		n.Set &^= f
	} else {
		n.Set |= f
		n.null &^= f
	}
}

func (n *Node) optInt(r *reader, f NodeFields, dst *int) error {
	if r.null() {
		*dst = 0
		n.mark(f, true)
		return nil
	}
	v, err := r.readInt()
	if err != nil {
		return err
	}
	*dst = int(v)
	n.mark(f, false)
	return nil
}

func decodeState(r *reader, n *Node) error {
	n.State = nil
	if r.null() {
		n.mark(FieldState, true)
		return nil
	}
	n.mark(FieldState, false)
	if k := r.peek(); k != kindArray {
		return wrongType("array", k)
	}
	if err := r.enter('['); err != nil {
		return err
	}
	n.State = make([]string, 0, 2)
	first := true
	for i := 0; ; i++ {
		ok, err := r.element(&first)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if k := r.peek(); k != kindString {
			return atIndex(wrongType("string", k), i)
		}
		b, err := r.stringBytes(&r.scratch)
		if err != nil {
			return err
		}
		n.State = append(n.State, internState(b))
	}
}

// decodeChildren decodes a children member: nil and isNull for null.
func decodeChildren(r *reader) (kids []Node, isNull bool, err error) {
	if r.null() {
		return nil, true, nil
	}
	if k := r.peek(); k != kindArray {
		return nil, false, wrongType("array", k)
	}
	if err := r.enter('['); err != nil {
		return nil, false, err
	}
	// Children are decoded onto the reader's stack, above the pending
	// siblings of this node's ancestors, then copied out in one allocation.
	mark := len(r.nodes)
	defer func() {
		clear(r.nodes[mark:])
		r.nodes = r.nodes[:mark]
	}()
	first := true
	for i := 0; ; i++ {
		ok, err := r.element(&first)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			break
		}
		c, err := decodeNode(r)
		if err != nil {
			return nil, false, atIndex(err, i)
		}
		r.nodes = append(r.nodes, c)
	}
	kids = make([]Node, len(r.nodes)-mark)
	copy(kids, r.nodes[mark:])
	return kids, false, nil
}

// internRole returns a shared string for the roles the JS walker emits, so
// decoding a snapshot does not allocate one per node.
func internRole(b []byte) string {
	switch string(b) {
	case "generic":
		return "generic"
	case "text":
		return "text"
	case "button":
		return "button"
	case "link":
		return "link"
	case "heading":
		return "heading"
	case "paragraph":
		return "paragraph"
	case "listitem":
		return "listitem"
	case "list":
		return "list"
	case "textbox":
		return "textbox"
	case "checkbox":
		return "checkbox"
	case "radio":
		return "radio"
	case "combobox":
		return "combobox"
	case "option":
		return "option"
	case "ellipsis":
		return "ellipsis"
	case "img":
		return "img"
	case "region":
		return "region"
	case "main":
		return "main"
	case "nav":
		return "nav"
	case "header":
		return "header"
	case "footer":
		return "footer"
	case "aside":
		return "aside"
	case "table":
		return "table"
	case "row":
		return "row"
	case "cell":
		return "cell"
	case "columnheader":
		return "columnheader"
	case "grid":
		return "grid"
	}
	return string(b)
}

// internState returns a shared string for the walker's state tags.
func internState(b []byte) string {
	switch string(b) {
	case "focused":
		return "focused"
	case "expanded":
		return "expanded"
	case "selected":
		return "selected"
	case "disabled":
		return "disabled"
	case "checked":
		return "checked"
	case "offscreen":
		return "offscreen"
	}
	return string(b)
}
