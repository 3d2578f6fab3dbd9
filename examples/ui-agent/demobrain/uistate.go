package demobrain

import (
	"strconv"
	"strings"
)

// Node is one line of a rendered <ui_state> tree (ui-agent.md §1.4).
type Node struct {
	Role  string
	Name  string
	Value string
	Ref   string
	// Level is a heading level; 0 when absent.
	Level int
	// Cols and Rows come from [cols=N] and [rows=N]; 0 when absent.
	Cols, Rows int
	// State lists the state tags (focused, offscreen, ...).
	State []string

	Parent   *Node
	Children []*Node
	// Index is the node's position among its parent's children.
	Index int
}

// Has reports whether the node carries the state tag.
func (n *Node) Has(state string) bool {
	for _, s := range n.State {
		if s == state {
			return true
		}
	}
	return false
}

// Offscreen reports whether the node is outside the viewport.
func (n *Node) Offscreen() bool { return n.Has("offscreen") }

// Walk calls fn for n and its descendants in pre-order until fn returns
// false.
func (n *Node) Walk(fn func(*Node) bool) bool {
	if !fn(n) {
		return false
	}
	for _, c := range n.Children {
		if !c.Walk(fn) {
			return false
		}
	}
	return true
}

// Ancestor returns the nearest ancestor (or n itself) with the role, or nil.
func (n *Node) Ancestor(role string) *Node {
	for a := n; a != nil; a = a.Parent {
		if a.Role == role {
			return a
		}
	}
	return nil
}

// UIState is a parsed <ui_state> block: the page's accessibility tree and
// the user's selection.
type UIState struct {
	Root *Node
	// SelectionRef and SelectionText are the <selection> block; empty
	// when the user selected nothing.
	SelectionRef  string
	SelectionText string

	byRef map[string]*Node
}

// Find returns the node with ref, or nil.
func (s *UIState) Find(ref string) *Node {
	if s == nil || ref == "" {
		return nil
	}
	return s.byRef[ref]
}

// All returns every node in pre-order.
func (s *UIState) All() []*Node {
	var out []*Node
	if s == nil || s.Root == nil {
		return nil
	}
	s.Root.Walk(func(n *Node) bool { out = append(out, n); return true })
	return out
}

// ParseUIState parses the last <ui_state> block in text. It reports false
// when text holds no block. Lines it cannot read are skipped: the block
// comes from a browser and may hold anything.
func ParseUIState(text string) (*UIState, bool) {
	start := strings.LastIndex(text, "<ui_state>")
	if start < 0 {
		return nil, false
	}
	body := text[start+len("<ui_state>"):]
	if end := strings.LastIndex(body, "</ui_state>"); end >= 0 {
		body = body[:end]
	}
	st := &UIState{byRef: map[string]*Node{}}
	// Split off the selection block first: its text may span lines and
	// look like anything.
	if i := strings.Index(body, "\n<selection ref=\""); i >= 0 {
		sel := body[i+1:]
		body = body[:i]
		head, rest, _ := strings.Cut(sel, "\n")
		st.SelectionRef = strings.TrimSuffix(strings.TrimPrefix(head, `<selection ref="`), `">`)
		if j := strings.LastIndex(rest, "</selection>"); j >= 0 {
			rest = rest[:j]
		}
		st.SelectionText = strings.TrimSuffix(rest, "\n")
	}
	var stack []*Node // stack[d] is the last node seen at depth d
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if !strings.HasPrefix(trimmed, "- ") {
			continue
		}
		depth := (len(line) - len(trimmed)) / 2
		n := parseLine(trimmed[2:])
		if depth > len(stack) {
			depth = len(stack) // a skipped level: attach to the deepest node
		}
		stack = stack[:depth]
		if depth == 0 {
			if st.Root != nil {
				// A second root: keep both under a synthetic one.
				if st.Root.Role != "" || st.Root.Ref != "" {
					old := st.Root
					st.Root = &Node{Role: "generic", Children: []*Node{old}}
					old.Parent = st.Root
				}
				n.Parent = st.Root
				n.Index = len(st.Root.Children)
				st.Root.Children = append(st.Root.Children, n)
			} else {
				st.Root = n
			}
		} else {
			p := stack[depth-1]
			n.Parent = p
			n.Index = len(p.Children)
			p.Children = append(p.Children, n)
		}
		stack = append(stack, n)
		if n.Ref != "" {
			st.byRef[n.Ref] = n
		}
	}
	if st.Root == nil {
		st.Root = &Node{Role: "generic"}
	}
	return st, true
}

// parseLine reads `ROLE "NAME" = "VALUE" [tag]... [ref=REF]:`. Names and
// values are not escaped on the wire, so tags are peeled off the end
// first and the value is split at the last ` = "`.
func parseLine(s string) *Node {
	n := &Node{}
	s = strings.TrimSuffix(s, ":")
	for strings.HasSuffix(s, "]") {
		i := strings.LastIndex(s, " [")
		if i < 0 {
			break
		}
		tag := s[i+2 : len(s)-1]
		s = s[:i]
		switch {
		case strings.HasPrefix(tag, "ref="):
			n.Ref = tag[4:]
		case strings.HasPrefix(tag, "level="):
			n.Level, _ = strconv.Atoi(tag[6:])
		case strings.HasPrefix(tag, "cols="):
			n.Cols, _ = strconv.Atoi(tag[5:])
		case strings.HasPrefix(tag, "rows="):
			n.Rows, _ = strconv.Atoi(tag[5:])
		default:
			n.State = append([]string{tag}, n.State...)
		}
	}
	role, rest, _ := strings.Cut(s, " ")
	n.Role = role
	if n.Role == "" {
		n.Role = "generic"
	}
	if i := strings.LastIndex(rest, `" = "`); i >= 0 && strings.HasSuffix(rest, `"`) {
		n.Value = rest[i+5 : len(rest)-1]
		rest = rest[:i+1]
	} else if strings.HasPrefix(rest, `= "`) && strings.HasSuffix(rest, `"`) && len(rest) >= 4 {
		n.Value = rest[3 : len(rest)-1]
		rest = ""
	}
	if len(rest) >= 2 && rest[0] == '"' && rest[len(rest)-1] == '"' {
		n.Name = rest[1 : len(rest)-1]
	}
	return n
}
