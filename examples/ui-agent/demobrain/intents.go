package demobrain

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Decide picks the brain's answer to utterance, given the page state st
// (nil when no snapshot arrived yet) and the tools the conversation
// offers. It is a pure function: the same words and page give the same
// call.
func Decide(utterance string, st *UIState, offered map[string]bool) Call {
	d := decider{raw: strings.TrimSpace(utterance), st: st, offered: offered}
	d.u = strings.ToLower(d.raw)
	d.words = tokens(d.u)
	return d.decide()
}

type decider struct {
	raw     string
	u       string
	words   []string
	st      *UIState
	offered map[string]bool
}

func (d *decider) reply(r Reply) Call {
	if d.offered[ReplyTool] {
		return Call{Tool: ReplyTool, Args: r}
	}
	return Call{Args: Reply{Answer: r.Answer}}
}

func (d *decider) say(answer string) Call { return d.reply(Reply{Answer: answer}) }

const helpText = "I'm the offline demo brain, so I know a few tricks: ask where a phone is or add one to the cart, " +
	"select a paragraph and say explain this, tell me your name and email for the form, " +
	"or ask me to compare prices."

func (d *decider) decide() Call {
	switch {
	case d.raw == "":
		return d.say("I didn't catch that.")
	case d.isSmallTalk():
		return d.smallTalk()
	case containsAny(d.u, "what can you do", "help me", "how does this work") || d.u == "help":
		return d.say(helpText)
	case containsAny(d.u, "compare price", "price comparison", "best price", "cheapest price", "research", "look into", "find deals", "find me deals"):
		return d.research()
	case containsAny(d.u, "explain", "what does this mean", "what does that mean", "what's this mean",
		"summarize this", "summarise this", "summarize that", "summarise that", "in plain english", "in simple terms", "eli5", "tl;dr"):
		return d.explain()
	}
	if d.st == nil {
		return d.say("I can't see the page yet. Give it a second and ask again.")
	}
	if c, ok := d.form(); ok {
		return c
	}
	switch {
	case containsAny(d.u, "to the top", "top of the page", "scroll back up", "scroll up"):
		return d.scrollTop()
	case containsAny(d.u, "article about", "essay about", "what's this article", "what is this article",
		"summarize the article", "summarise the article", "what's the article", "what is the article"):
		return d.articleSummary()
	}
	if containsAny(d.u, "cheapest", "least expensive", "lowest price", "most expensive", "priciest") {
		if c, ok := d.extremePrice(); ok {
			return c
		}
	}
	if containsAny(d.u, "can i see", "on screen", "on my screen", "do i see", "visible") {
		if c, ok := d.visible(); ok {
			return c
		}
	}
	if c, ok := d.position(); ok {
		return c
	}
	if containsAny(d.u, "cart", "basket") {
		if c, ok := d.cart(); ok {
			return c
		}
	}
	if c, ok := d.brand(); ok {
		return c
	}
	if c, ok := d.product(); ok {
		return c
	}
	if c, ok := d.articleSearch(); ok {
		return c
	}
	return d.say(helpText)
}

// --- small talk -------------------------------------------------------------

var smallTalkWords = map[string]bool{
	"hi": true, "hello": true, "hey": true, "there": true, "thanks": true, "thank": true, "you": true,
	"bye": true, "goodbye": true, "good": true, "morning": true, "afternoon": true, "evening": true,
	"cheers": true, "ok": true, "okay": true, "great": true, "cool": true, "how": true, "are": true,
	"nice": true, "see": true, "later": true, "much": true, "so": true, "very": true,
}

func (d *decider) isSmallTalk() bool {
	if len(d.words) == 0 || len(d.words) > 6 {
		return false
	}
	for _, w := range d.words {
		if !smallTalkWords[w] {
			return false
		}
	}
	return true
}

func (d *decider) smallTalk() Call {
	switch {
	case hasWord(d.words, "thanks") || hasWord(d.words, "thank"):
		return d.say("You're welcome.")
	case hasWord(d.words, "bye") || hasWord(d.words, "goodbye") || hasWord(d.words, "later"):
		return d.say("Goodbye!")
	case hasWord(d.words, "how"):
		return d.say("Running smoothly, thanks. What can I show you?")
	}
	return d.say("Hi! Ask me where the iPhone 17 is, select a paragraph and say explain this, or tell me your name for the form.")
}

// --- task groups ------------------------------------------------------------

func (d *decider) research() Call {
	if !d.offered[ResearchTool] {
		return d.say("This app has no research workers set up, so I can't start that.")
	}
	query := ""
	for _, lead := range []string{"research ", "look into ", "compare prices for ", "compare prices of ", "compare the prices of ", "compare the price of ", "compare prices on "} {
		if i := strings.Index(d.u, lead); i >= 0 {
			query = strings.Trim(d.raw[i+len(lead):], " ?.!")
			break
		}
	}
	if p := d.bestProduct(); p != nil && (query == "" || strings.Contains(d.u, "price")) {
		query = "prices for the " + p.Name
	}
	if query == "" {
		query = "phone prices"
	}
	if strings.Contains(d.u, "price") && !strings.Contains(strings.ToLower(query), "price") {
		query = "prices for " + query
	}
	return Call{Tool: ResearchTool, Args: Research{
		Query:  query,
		Answer: fmt.Sprintf("On it: three workers are looking into %s. Follow along in the task card.", query),
	}}
}

// --- deixis: explain the selection ------------------------------------------

func (d *decider) explain() Call {
	if d.st == nil || strings.TrimSpace(d.st.SelectionText) == "" {
		if d.st != nil && containsAny(d.u, "article", "essay") {
			return d.articleSummary()
		}
		return d.say("Select a paragraph first, then ask me to explain it.")
	}
	sel := strings.Join(strings.Fields(d.st.SelectionText), " ")
	n := d.st.Find(d.st.SelectionRef)
	if n != nil {
		if item := n.Ancestor("listitem"); item != nil && item.Name != "" {
			return d.say(fmt.Sprintf("That's the %s: %s.", item.Name, strings.TrimSuffix(describe(item), ".")))
		}
		if n.Role == "textbox" {
			return d.say(fmt.Sprintf("That's what you typed in %s: %s", strings.ToLower(n.Name), firstSentence(sel, 25)))
		}
	}
	if n == nil || n.Role != "paragraph" {
		// A selection that runs past its paragraph (a triple click) is
		// held by the container: find the paragraph the text starts with.
		if p := d.passageStarting(sel); p != nil {
			n = p
		}
	}
	topic := ""
	if n != nil {
		topic = headingFor(n)
	}
	if len(strings.Fields(sel)) < 6 {
		if topic != "" {
			return d.say(fmt.Sprintf("%q comes up in the part about %s. Select the whole paragraph and I'll explain it.", sel, strings.ToLower(topic)))
		}
		return d.say(fmt.Sprintf("You selected %q. Select a whole paragraph and I'll explain it.", sel))
	}
	gist := firstSentence(sel, 30)
	if topic != "" {
		return d.say(fmt.Sprintf("This part is about %s. In short: %s", strings.ToLower(topic), gist))
	}
	return d.say("In short: " + gist)
}

// headingFor returns the heading that introduces n: the nearest heading
// before it among its siblings (or its ancestors' siblings), or the name
// of the region that holds it.
func headingFor(n *Node) string {
	for c := n; c != nil && c.Parent != nil; c = c.Parent {
		sib := c.Parent.Children
		for i := c.Index - 1; i >= 0; i-- {
			if sib[i].Role == "heading" && sib[i].Name != "" {
				return sib[i].Name
			}
		}
		if (c.Parent.Role == "region" || c.Parent.Role == "article") && c.Parent.Name != "" {
			return c.Parent.Name
		}
	}
	return ""
}

// --- the form ---------------------------------------------------------------

type field struct {
	key   string // first, last, email, phone, years, why
	label string // how the answer names it
	node  *Node
}

var fieldKeys = []struct {
	key, label string
	match      []string
}{
	{"first", "first name", []string{"first name", "given name"}},
	{"last", "last name", []string{"last name", "surname", "family name"}},
	{"email", "email", []string{"email", "e-mail"}},
	{"phone", "phone", []string{"phone"}},
	{"years", "years of experience", []string{"years", "experience"}},
	{"why", "why you're interested", []string{"why", "interest", "motivation"}},
}

// fields finds the form controls the brain knows, in form order.
func (d *decider) fields() []field {
	var out []field
	seen := map[*Node]bool{}
	for _, fk := range fieldKeys {
		for _, n := range d.st.All() {
			if n.Role != "textbox" || seen[n] {
				continue
			}
			name := strings.ToLower(n.Name)
			if containsAny(name, fk.match...) {
				out = append(out, field{key: fk.key, label: fk.label, node: n})
				seen[n] = true
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return order(d.st, out[i].node) < order(d.st, out[j].node) })
	return out
}

func order(st *UIState, n *Node) int {
	i, pos := 0, -1
	st.Root.Walk(func(x *Node) bool {
		if x == n {
			pos = i
			return false
		}
		i++
		return true
	})
	return pos
}

func (d *decider) field(key string) *field {
	for _, f := range d.fields() {
		if f.key == key {
			return &f
		}
	}
	return nil
}

func (d *decider) form() (Call, bool) {
	switch {
	case hasWord(d.words, "submit") || containsAny(d.u, "send the application", "send my application", "send the form"):
		return d.submit(), true
	case containsAny(d.u, "what have i entered", "what did i enter", "what have i filled", "read back", "read it back",
		"read the form", "read me the form", "what's in the form", "what is in the form", "review the form", "check the form"):
		return d.readBack(), true
	case containsAny(d.u, "clear the form", "reset the form", "empty the form"):
		return d.clearForm(), true
	}
	values := extractValues(d.raw)
	if len(values) == 0 {
		return Call{}, false
	}
	var fills []Fill
	var said []string
	var first *Node
	var missing []string
	for _, fk := range fieldKeys {
		v, ok := values[fk.key]
		if !ok {
			continue
		}
		f := d.field(fk.key)
		if f == nil {
			missing = append(missing, fk.label)
			continue
		}
		if first == nil {
			first = f.node
		}
		fills = append(fills, Fill{Ref: f.node.Ref, Value: v})
		said = append(said, fk.label+" "+v)
	}
	if len(fills) == 0 {
		return d.say("I can't find the form on this page."), true
	}
	r := Reply{Fills: fills, Answer: "Got it: " + joinList(said) + "."}
	if len(missing) > 0 {
		r.Answer += " The form has no field for " + joinList(missing) + "."
	}
	if first.Offscreen() {
		r.ScrollTo = first.Ref
	}
	return d.reply(r), true
}

func (d *decider) readBack() Call {
	fs := d.fields()
	if len(fs) == 0 {
		return d.say("I can't find the form on this page.")
	}
	var filled, empty []string
	for _, f := range fs {
		if strings.TrimSpace(f.node.Value) == "" {
			empty = append(empty, f.label)
		} else {
			filled = append(filled, f.label+" "+firstSentence(f.node.Value, 12))
		}
	}
	switch {
	case len(filled) == 0:
		return d.say("The form is still empty. Tell me your name and email to start.")
	case len(empty) == 0:
		return d.say("You've entered " + joinList(filled) + ". Everything is filled in; say submit when you're ready.")
	}
	return d.say("You've entered " + joinList(filled) + ". Still empty: " + joinList(empty) + ".")
}

func (d *decider) clearForm() Call {
	var fills []Fill
	for _, f := range d.fields() {
		if f.node.Value != "" {
			fills = append(fills, Fill{Ref: f.node.Ref, Value: ""})
		}
	}
	if len(fills) == 0 {
		return d.say("The form is already empty.")
	}
	return d.reply(Reply{Answer: "Cleared the form.", Fills: fills})
}

func (d *decider) submit() Call {
	var button *Node
	for _, n := range d.st.All() {
		if n.Role == "button" && strings.Contains(strings.ToLower(n.Name), "submit") {
			button = n
			break
		}
	}
	if button == nil {
		return d.say("I can't find a submit button on this page.")
	}
	if button.Has("disabled") {
		return d.say("The submit button is disabled right now.")
	}
	var missing []string
	var refs []string
	var firstMissing *Node
	firstName := ""
	for _, f := range d.fields() {
		if f.key == "first" {
			firstName = strings.TrimSpace(f.node.Value)
		}
		if (f.key == "first" || f.key == "last" || f.key == "email") && strings.TrimSpace(f.node.Value) == "" {
			missing = append(missing, f.label)
			refs = append(refs, f.node.Ref)
			if firstMissing == nil {
				firstMissing = f.node
			}
		}
	}
	if len(missing) > 0 {
		r := Reply{Answer: "Before I submit, I still need your " + joinList(missing) + ".", Highlight: refs}
		if firstMissing.Offscreen() {
			r.ScrollTo = firstMissing.Ref
		}
		return d.reply(r)
	}
	answer := "Done, I submitted your application."
	if firstName != "" {
		answer = "Done, I submitted your application. Thanks, " + firstName + "!"
	}
	r := Reply{Answer: answer, Click: []string{button.Ref}}
	if button.Offscreen() {
		r.ScrollTo = button.Ref
	}
	return d.reply(r)
}

var (
	nameWord      = `([\p{L}][\p{L}'’-]*)`
	reMyName      = regexp.MustCompile(`(?i)\b(?:my name is|my name's|name is|i am called|call me|(?:fill in|put|enter) my name(?:\s+(?:with|as))?)\s+` + nameWord + `(?:\s+` + nameWord + `)?`)
	reFirstName   = regexp.MustCompile(`(?i)\bfirst name(?:\s+is|\s*:)?\s+` + nameWord)
	reLastName    = regexp.MustCompile(`(?i)\b(?:last name|surname|family name)(?:\s+is|\s*:)?\s+` + nameWord)
	reEmail       = regexp.MustCompile(`(?i)[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}`)
	reEmailOnly   = regexp.MustCompile(`(?i)^[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$`)
	reSpokenEmail = regexp.MustCompile(`(?i)\be-?mail(?:\s+address)?(?:\s+is|\s*:)?\s+(.+?)(?:\s+and\s|[,;]|[.!?]?$)`)
	rePhone       = regexp.MustCompile(`(?i)\b(?:phone|mobile|cell)(?:\s+number)?(?:\s+is|\s*:)?\s+(\+?[\d(][\d\s().-]{4,}\d)`)
	reSpokenPhone = regexp.MustCompile(`(?i)\b(?:phone|mobile|cell)(?:\s+number)?(?:\s+is|\s*:)?\s+((?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double|triple)\b\s*)+)`)
	reYears       = regexp.MustCompile(`(?i)\b(\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty)\s+years?\b`)
	reWhy         = regexp.MustCompile(`(?i)\b(?:i'?m interested because|i am interested because|interested because|i'?m interested in this role because|because)\s+(.+)$`)
)

// notNames are words that follow "my name is X" but are not a last name.
var notNames = map[string]bool{"and": true, "my": true, "i": true, "the": true, "email": true, "phone": true, "but": true, "with": true, "please": true}

// extractValues pulls form values out of an utterance: names, email
// (typed or spoken: "ada at example dot com"), phone (digits or spoken
// digits), years of experience and the reason for applying.
func extractValues(s string) map[string]string {
	v := map[string]string{}
	if m := reMyName.FindStringSubmatch(s); m != nil {
		if !notNames[strings.ToLower(m[1])] {
			v["first"] = capitalize(m[1])
			if m[2] != "" && !notNames[strings.ToLower(m[2])] {
				v["last"] = capitalize(m[2])
			}
		}
	}
	if m := reFirstName.FindStringSubmatch(s); m != nil && !notNames[strings.ToLower(m[1])] {
		v["first"] = capitalize(m[1])
	}
	if m := reLastName.FindStringSubmatch(s); m != nil && !notNames[strings.ToLower(m[1])] {
		v["last"] = capitalize(m[1])
	}
	if m := reEmail.FindString(s); m != "" {
		v["email"] = strings.ToLower(m)
	} else if m := reSpokenEmail.FindStringSubmatch(s); m != nil {
		if e := spokenEmail(m[1]); e != "" {
			v["email"] = e
		}
	}
	if m := rePhone.FindStringSubmatch(s); m != nil {
		v["phone"] = strings.TrimSpace(m[1])
	} else if m := reSpokenPhone.FindStringSubmatch(s); m != nil {
		if p := spokenDigits(m[1]); len(p) >= 3 {
			v["phone"] = p
		}
	}
	if m := reYears.FindStringSubmatch(s); m != nil {
		n := strings.ToLower(m[1])
		if w, ok := numberWords[n]; ok {
			n = w
		}
		v["years"] = n
	}
	if m := reWhy.FindStringSubmatch(s); m != nil {
		why := strings.TrimRight(strings.TrimSpace(m[1]), ".!")
		if why != "" {
			v["why"] = capitalize(why) + "."
		}
	}
	return v
}

// spokenEmail turns "ada dot lovelace at example dot com" into
// "ada.lovelace@example.com"; it returns "" when the result is not an
// email address.
func spokenEmail(s string) string {
	s = " " + strings.ToLower(strings.TrimSpace(s)) + " "
	for _, r := range []struct{ from, to string }{
		{" at ", "@"}, {" dot ", "."}, {" underscore ", "_"}, {" dash ", "-"}, {" hyphen ", "-"}, {" plus ", "+"},
	} {
		s = strings.ReplaceAll(s, r.from, r.to)
	}
	s = strings.Join(strings.Fields(s), "")
	s = strings.TrimRight(s, ".")
	if !reEmailOnly.MatchString(s) {
		return ""
	}
	return s
}

// spokenDigits turns "five five five one two three four" into "5551234",
// with "double" and "triple" repeating the next digit.
func spokenDigits(s string) string {
	var b strings.Builder
	repeat := 1
	for _, w := range tokens(s) {
		switch w {
		case "double":
			repeat = 2
			continue
		case "triple":
			repeat = 3
			continue
		}
		dgt, ok := numberWords[w]
		if !ok || len(dgt) != 1 {
			continue
		}
		b.WriteString(strings.Repeat(dgt, repeat))
		repeat = 1
	}
	return b.String()
}

// --- pointing: products -----------------------------------------------------

type product struct {
	Name  string
	Brand string
	node  *Node
}

// products lists the named list items (the product cards).
func (d *decider) products() []product {
	var out []product
	for _, n := range d.st.All() {
		if n.Role != "listitem" || n.Name == "" {
			continue
		}
		desc := describe(n)
		brand, _, _ := strings.Cut(desc, "·")
		out = append(out, product{Name: n.Name, Brand: strings.TrimSpace(brand), node: n})
	}
	return out
}

// describe returns the first paragraph inside a card.
func describe(n *Node) string {
	desc := ""
	n.Walk(func(x *Node) bool {
		if x.Role == "paragraph" && x.Name != "" {
			desc = x.Name
			return false
		}
		return true
	})
	return desc
}

// matchProducts returns the products named in the utterance: every full
// match of the longest name, else the best partial matches.
func (d *decider) matchProducts() []product {
	if d.st == nil {
		return nil
	}
	var full []product
	fullLen := 0
	var partial []product
	best := 0.0
	for _, p := range d.products() {
		pt := tokens(p.Name)
		if len(pt) == 0 {
			continue
		}
		matched, wordy := 0, false
		for _, t := range pt {
			if hasWord(d.words, t) {
				matched++
				if !isNumber(t) {
					wordy = true
				}
			}
		}
		if matched == 0 && p.Brand != "" && hasWord(d.words, strings.ToLower(p.Brand)) {
			// "the OPPO one": the brand names the phone.
			matched, wordy = 1, true
			pt = append(pt, "")
		}
		switch {
		case matched == len(pt):
			if len(pt) > fullLen {
				full, fullLen = nil, len(pt)
			}
			if len(pt) == fullLen {
				full = append(full, p)
			}
		case wordy:
			score := float64(matched) / float64(len(pt))
			if score > best {
				partial, best = nil, score
			}
			if score == best {
				partial = append(partial, p)
			}
		}
	}
	if len(full) > 0 {
		return full
	}
	return partial
}

func (d *decider) bestProduct() *product {
	if m := d.matchProducts(); len(m) == 1 {
		return &m[0]
	}
	return nil
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// hidden reports whether a card is out of view: offscreen itself, or
// only its edge showing (every child offscreen).
func hidden(n *Node) bool {
	if n.Offscreen() {
		return true
	}
	if len(n.Children) == 0 {
		return false
	}
	for _, c := range n.Children {
		if !c.Offscreen() {
			return false
		}
	}
	return true
}

var rePrice = regexp.MustCompile(`\$\s?[\d,]+`)

// where says where a card sits in the grid.
func where(n *Node) string {
	cols := 0
	if n.Parent != nil {
		cols = n.Parent.Cols
	}
	if cols <= 0 {
		return fmt.Sprintf("number %d in the list", n.Index+1)
	}
	return fmt.Sprintf("row %d, column %d", n.Index/cols+1, n.Index%cols+1)
}

func (d *decider) product() (Call, bool) {
	m := d.matchProducts()
	if len(m) == 0 {
		return Call{}, false
	}
	if len(m) > 1 {
		var names, refs []string
		var scroll string
		for _, p := range m {
			names = append(names, "the "+p.Name)
			refs = append(refs, p.node.Ref)
			if scroll == "" && hidden(p.node) {
				scroll = p.node.Ref
			}
		}
		return d.reply(Reply{Answer: "I found " + joinList(names) + ".", ScrollTo: scroll, Highlight: refs}), true
	}
	p := m[0]
	price := strings.ReplaceAll(rePrice.FindString(describe(p.node)), " ", "")
	answer := fmt.Sprintf("The %s is right there, %s.", p.Name, where(p.node))
	r := Reply{Highlight: []string{p.node.Ref}}
	if hidden(p.node) {
		answer = fmt.Sprintf("The %s is in %s. I scrolled down to it.", p.Name, where(p.node))
		r.ScrollTo = p.node.Ref
	}
	if price != "" {
		answer += " It starts at " + price + "."
	}
	r.Answer = answer
	return d.reply(r), true
}

// price returns the dollar price in a card's description, or -1.
func price(n *Node) int {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, rePrice.FindString(describe(n)))
	if digits == "" {
		return -1
	}
	v := 0
	for _, r := range digits {
		v = v*10 + int(r-'0')
	}
	return v
}

// extremePrice points at the cheapest or the most expensive phone.
func (d *decider) extremePrice() (Call, bool) {
	most := containsAny(d.u, "most expensive", "priciest")
	var best *product
	bestPrice := -1
	for _, p := range d.products() {
		v := price(p.node)
		if v < 0 {
			continue
		}
		if best == nil || (most && v > bestPrice) || (!most && v < bestPrice) {
			best, bestPrice = &p, v
		}
	}
	if best == nil {
		return Call{}, false
	}
	which := "cheapest"
	if most {
		which = "most expensive"
	}
	r := Reply{Answer: fmt.Sprintf("The %s is the %s, at %s: %s.", best.Name, which,
		strings.ReplaceAll(rePrice.FindString(describe(best.node)), " ", ""), where(best.node)), Highlight: []string{best.node.Ref}}
	if hidden(best.node) {
		r.ScrollTo = best.node.Ref
	}
	return d.reply(r), true
}

// visible names the phones on screen, leaving out the ones scrolled away.
func (d *decider) visible() (Call, bool) {
	var names []string
	for _, p := range d.products() {
		if !hidden(p.node) {
			names = append(names, "the "+p.Name)
		}
	}
	if len(d.products()) == 0 {
		return Call{}, false
	}
	if len(names) == 0 {
		return d.say("No phones are on screen right now; ask me to scroll back to the top."), true
	}
	return d.say(fmt.Sprintf("On screen: %s.", joinList(names))), true
}

var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
	"seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}

// position answers "the top right one", "the second phone", "the last
// one": positions count the cards on screen only, in reading order, with
// rows and columns from the grid's [cols=N] (the prompt guide's rules).
func (d *decider) position() (Call, bool) {
	if !containsAny(d.u, "phone", "one", "card", "item") {
		return Call{}, false
	}
	corner := ""
	for _, c := range []string{"top right", "top left", "bottom right", "bottom left"} {
		if strings.Contains(d.u, c) {
			corner = c
		}
	}
	nth := 0
	for _, w := range d.words {
		if n, ok := ordinals[w]; ok {
			nth = n
		}
		if w == "last" {
			nth = -1
		}
	}
	if corner == "" && nth == 0 {
		return Call{}, false
	}
	var seen []product
	for _, p := range d.products() {
		if !hidden(p.node) {
			seen = append(seen, p)
		}
	}
	if len(seen) == 0 {
		return d.say("No phones are on screen right now."), true
	}
	var pick *product
	switch {
	case corner != "":
		cols := 0
		if seen[0].node.Parent != nil {
			cols = seen[0].node.Parent.Cols
		}
		if cols <= 0 {
			cols = len(seen)
		}
		row := func(p product) int { return p.node.Index / cols }
		col := func(p product) int { return p.node.Index % cols }
		wantRow := row(seen[0])
		if strings.HasPrefix(corner, "bottom") {
			wantRow = row(seen[len(seen)-1])
		}
		for i := range seen {
			if row(seen[i]) != wantRow {
				continue
			}
			if pick == nil || (strings.HasSuffix(corner, "right") && col(seen[i]) > col(*pick)) || (strings.HasSuffix(corner, "left") && col(seen[i]) < col(*pick)) {
				pick = &seen[i]
			}
		}
	case nth == -1:
		pick = &seen[len(seen)-1]
	case nth <= len(seen):
		pick = &seen[nth-1]
	default:
		return d.say(fmt.Sprintf("I only see %d phones on screen.", len(seen))), true
	}
	which := corner
	if which == "" {
		which = d.wordFor(nth)
	}
	answer := fmt.Sprintf("The %s one on screen is the %s", which, pick.Name)
	if pr := strings.ReplaceAll(rePrice.FindString(describe(pick.node)), " ", ""); pr != "" {
		answer += ", " + pr
	}
	return d.reply(Reply{Answer: answer + ".", Highlight: []string{pick.node.Ref}}), true
}

func (d *decider) wordFor(nth int) string {
	if nth == -1 {
		return "last"
	}
	for w, n := range ordinals {
		if n == nth {
			return w
		}
	}
	return fmt.Sprint(nth)
}

// cart adds a named phone to the cart (or takes it out) by clicking its
// card's button.
func (d *decider) cart() (Call, bool) {
	p := d.bestProduct()
	if p == nil {
		return Call{}, false
	}
	remove := containsAny(d.u, "remove", "take", "delete", "out of")
	var add, del *Node
	p.node.Walk(func(n *Node) bool {
		name := strings.ToLower(n.Name)
		switch {
		case n.Role != "button":
		case strings.HasPrefix(name, "add "):
			add = n
		case strings.HasPrefix(name, "remove "):
			del = n
		}
		return true
	})
	target, answer := add, "Added the "+p.Name+" to your cart."
	switch {
	case remove && del != nil:
		target, answer = del, "Took the "+p.Name+" out of your cart."
	case remove:
		return d.say("The " + p.Name + " isn't in your cart."), true
	case add == nil && del != nil:
		return d.reply(Reply{Answer: "The " + p.Name + " is already in your cart.", Highlight: []string{p.node.Ref}}), true
	}
	if target == nil {
		return Call{}, false
	}
	r := Reply{Answer: answer, Click: []string{target.Ref}}
	if hidden(p.node) {
		r.ScrollTo = p.node.Ref
	}
	return d.reply(r), true
}

func (d *decider) brand() (Call, bool) {
	if !containsAny(d.u, "which", "from", " all ", "every", "show me", "made by", " by ", "phones") {
		return Call{}, false
	}
	byBrand := map[string][]product{}
	var brands []string
	for _, p := range d.products() {
		b := strings.ToLower(p.Brand)
		if b == "" {
			continue
		}
		if _, ok := byBrand[b]; !ok {
			brands = append(brands, b)
		}
		byBrand[b] = append(byBrand[b], p)
	}
	for _, b := range brands {
		if !hasWord(d.words, b) {
			continue
		}
		// "where is the Pixel 10 from Google" names one product: point at it.
		if p := d.bestProduct(); p != nil && d.fullMatch(p) {
			return Call{}, false
		}
		ps := byBrand[b]
		var names, refs []string
		scroll := ""
		for _, p := range ps {
			names = append(names, "the "+p.Name)
			refs = append(refs, p.node.Ref)
			if scroll == "" && hidden(p.node) {
				scroll = p.node.Ref
			}
		}
		count := fmt.Sprint(len(ps))
		if len(ps) == 1 {
			count = "one"
		}
		answer := fmt.Sprintf("%s makes %s of these phones: %s.", ps[0].Brand, count, joinList(names))
		return d.reply(Reply{Answer: answer, ScrollTo: scroll, Highlight: refs}), true
	}
	return Call{}, false
}

func (d *decider) fullMatch(p *product) bool {
	for _, t := range tokens(p.Name) {
		if !hasWord(d.words, t) {
			return false
		}
	}
	return true
}

func (d *decider) scrollTop() Call {
	// The first thing in the main content; a sticky header is always in
	// view, so scrolling to it would do nothing.
	var top *Node
	for _, n := range d.st.All() {
		if n.Role == "main" {
			n.Walk(func(x *Node) bool {
				if x.Ref != "" && x.Role == "heading" {
					top = x
					return false
				}
				return true
			})
			break
		}
	}
	if top == nil {
		for _, n := range d.st.All() {
			if n.Role == "heading" && n.Ref != "" {
				top = n
				break
			}
		}
	}
	if top == nil {
		return d.say("I can't find the top of the page.")
	}
	return d.reply(Reply{Answer: "Back at the top.", ScrollTo: top.Ref})
}

// --- deixis: the article ----------------------------------------------------

type passage struct {
	node    *Node
	heading string
}

// passages lists the article's paragraphs: paragraphs outside cards and
// forms that are long enough to be prose.
func (d *decider) passages() []passage {
	var out []passage
	for _, n := range d.st.All() {
		if n.Role != "paragraph" || len(n.Name) < 40 || n.Ancestor("listitem") != nil || n.Ancestor("form") != nil {
			continue
		}
		out = append(out, passage{node: n, heading: headingFor(n)})
	}
	return out
}

// passageStarting returns the paragraph whose text starts the selection,
// or nil. Paragraph names are cut at 100 characters ("…"), so the name's
// start is compared.
func (d *decider) passageStarting(sel string) *Node {
	if d.st == nil {
		return nil
	}
	for _, p := range d.passages() {
		name := strings.TrimSuffix(p.node.Name, "…")
		if len(name) >= 20 && (strings.HasPrefix(sel, name) || strings.HasPrefix(name, sel)) {
			return p.node
		}
	}
	return nil
}

func (d *decider) articleSummary() Call {
	ps := d.passages()
	if len(ps) == 0 {
		return d.say("I don't see an article on this page.")
	}
	var topics []string
	seen := map[string]bool{}
	title := ""
	for _, p := range ps {
		if p.heading != "" && !seen[p.heading] {
			seen[p.heading] = true
			topics = append(topics, strings.ToLower(p.heading))
		}
	}
	for _, n := range d.st.All() {
		if n.Role == "heading" && n.Level == 2 && n.Name != "" && order(d.st, n) < order(d.st, ps[0].node) {
			title = n.Name
		}
	}
	answer := "It's an essay"
	if title != "" {
		answer += fmt.Sprintf(" called %q", title)
	}
	if len(topics) > 0 {
		answer += ". It covers " + joinList(topics)
	}
	return d.say(answer + ".")
}

var questionWords = map[string]bool{"how": true, "what": true, "why": true, "when": true, "who": true,
	"does": true, "do": true, "is": true, "are": true, "can": true, "where": true, "which": true}

// articleSearch answers "where does it talk about X" and questions whose
// answer is in a paragraph, by selecting the paragraph.
func (d *decider) articleSearch() (Call, bool) {
	topic := d.u
	explicit := false
	for _, lead := range []string{"talk about", "talks about", "talking about", "say about", "says about", "mention", "discuss", "cover"} {
		if i := strings.Index(d.u, lead); i >= 0 {
			topic = d.u[i+len(lead):]
			explicit = true
			break
		}
	}
	want := content(topic)
	if len(want) == 0 {
		return Call{}, false
	}
	question := strings.HasSuffix(d.u, "?") || questionWords[d.words[0]]
	if !explicit && !question {
		return Call{}, false
	}
	var best *passage
	bestScore := 0
	ps := d.passages()
	for i, p := range ps {
		have := content(p.heading + " " + p.node.Name)
		score := 0
		for _, w := range want {
			if hasWord(have, w) {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = &ps[i], score
		}
	}
	if best == nil {
		if explicit {
			return d.say("I couldn't find that in the article."), true
		}
		return Call{}, false
	}
	r := Reply{SelectText: best.node.Ref}
	if best.node.Offscreen() {
		r.ScrollTo = best.node.Ref
	}
	where := "here"
	if best.heading != "" {
		where = fmt.Sprintf("in the part called %q", best.heading)
	}
	if explicit {
		r.Answer = fmt.Sprintf("It talks about that %s. I selected the paragraph for you.", where)
	} else {
		r.Answer = fmt.Sprintf("The article says: %s I selected the paragraph.", firstSentence(best.node.Name, 30))
	}
	return d.reply(r), true
}
