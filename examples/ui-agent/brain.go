package main

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/framewire/framewire/examples/ui-agent/demobrain"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/anthropic"
	"github.com/framewire/framewire/processors/llm/gemini"
	"github.com/framewire/framewire/processors/llm/openai"
	"github.com/framewire/framewire/processors/llm/openairealtime"
)

// brain is the model behind the agent, as the page and the logs name it.
type brain struct {
	// Kind is "demo" for the offline demo brain, "openai" for an
	// OpenAI-compatible server, "anthropic" or "gemini".
	Kind string `json:"kind"`
	// Label names the brain in one short phrase.
	Label string `json:"label"`
	// Detail says why this brain was chosen and how to change it.
	Detail string `json:"detail"`

	provider llm.Provider
	// realtime, when set, is a speech-to-speech model that replaces the
	// speech services and the provider (OPENAI_REALTIME_MODEL).
	realtime *openairealtime.Options
}

// chooseBrain picks the model from the environment: FRAMEWIRE_BRAIN=demo
// forces the offline demo brain; OPENAI_REALTIME_MODEL with OpenAI's key
// or base URL picks an OpenAI Realtime speech-to-speech model; otherwise
// the first configured of an
// OpenAI-compatible server (OPENAI_API_KEY or OPENAI_BASE_URL, with
// OPENAI_MODEL), Anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// ANTHROPIC_MODEL) and Gemini (GOOGLE_API_KEY or GEMINI_API_KEY,
// GEMINI_BASE_URL, GEMINI_MODEL); with none, the demo brain answers.
func chooseBrain(getenv func(string) string) brain {
	forced := strings.ToLower(strings.TrimSpace(getenv("FRAMEWIRE_BRAIN")))
	key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	gemKey := getenv("GOOGLE_API_KEY")
	if gemKey == "" {
		gemKey = getenv("GEMINI_API_KEY")
	}
	switch {
	case forced == "demo":
	case getenv("OPENAI_REALTIME_MODEL") != "" && (key != "" || base != ""):
		o := &openairealtime.Options{APIKey: key, BaseURL: base, Model: getenv("OPENAI_REALTIME_MODEL")}
		return brain{Kind: "realtime", Label: o.Model + " (speech to speech)", realtime: o,
			Detail: "OpenAI Realtime model " + o.Model + " hears and speaks itself (from OPENAI_REALTIME_MODEL with OPENAI_API_KEY / OPENAI_BASE_URL)."}
	case key != "" || base != "":
		c := openai.New(openai.Options{APIKey: key, BaseURL: base, Model: getenv("OPENAI_MODEL")})
		where := base
		if where == "" {
			where = openai.DefaultBaseURL
		}
		return brain{
			Kind:     "openai",
			Label:    c.Model(),
			Detail:   "OpenAI-compatible model " + c.Model() + " at " + publicURL(where) + " (from OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL).",
			provider: c,
		}
	case getenv("ANTHROPIC_API_KEY") != "":
		c := anthropic.New(anthropic.Options{APIKey: getenv("ANTHROPIC_API_KEY"), BaseURL: getenv("ANTHROPIC_BASE_URL"), Model: getenv("ANTHROPIC_MODEL")})
		return brain{Kind: "anthropic", Label: c.Model(), provider: c,
			Detail: "Anthropic model " + c.Model() + " (from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / ANTHROPIC_MODEL)."}
	case gemKey != "":
		c := gemini.New(gemini.Options{APIKey: gemKey, BaseURL: getenv("GEMINI_BASE_URL"), Model: getenv("GEMINI_MODEL")})
		return brain{Kind: "gemini", Label: c.Model(), provider: c,
			Detail: "Gemini model " + c.Model() + " (from GOOGLE_API_KEY or GEMINI_API_KEY / GEMINI_BASE_URL / GEMINI_MODEL)."}
	}
	detail := "No LLM is configured: a deterministic offline demo brain answers. Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL, OPENAI_MODEL), ANTHROPIC_API_KEY or GOOGLE_API_KEY to use a real model."
	if forced == "demo" {
		detail = "FRAMEWIRE_BRAIN=demo: the deterministic offline demo brain answers."
	}
	return brain{Kind: "demo", Label: "offline demo brain", Detail: detail, provider: demobrain.New()}
}

// publicURL is raw as the page and the logs may show it: without its
// user:password and its query string (a key such as ?api-key=) or
// fragment.
func publicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	}
	return u.String()
}

// urlPattern finds the URLs in a text.
var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// redactURLs returns text with every URL in it as publicURL shows it:
// the notes the page shows quote configured URLs, in messages of their
// own and in errors.
func redactURLs(text string) string {
	return urlPattern.ReplaceAllStringFunc(text, publicURL)
}
