package main

import (
	"strings"

	"github.com/framewire/framewire/examples/ui-agent/demobrain"
	"github.com/framewire/framewire/processors/llm"
	"github.com/framewire/framewire/processors/llm/openai"
)

// brain is the model behind the agent, as the page and the logs name it.
type brain struct {
	// Kind is "demo" for the offline demo brain, "openai" for an
	// OpenAI-compatible server.
	Kind string `json:"kind"`
	// Label names the brain in one short phrase.
	Label string `json:"label"`
	// Detail says why this brain was chosen and how to change it.
	Detail string `json:"detail"`

	provider llm.Provider
}

// chooseBrain picks the model from the environment: FRAMEWIRE_BRAIN=demo
// forces the offline demo brain; otherwise OPENAI_API_KEY or
// OPENAI_BASE_URL selects the OpenAI-compatible client (OPENAI_MODEL names
// the model); with neither, the demo brain answers.
func chooseBrain(getenv func(string) string) brain {
	forced := strings.ToLower(strings.TrimSpace(getenv("FRAMEWIRE_BRAIN")))
	key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	if forced != "demo" && (key != "" || base != "") {
		c := openai.New(openai.Options{APIKey: key, BaseURL: base, Model: getenv("OPENAI_MODEL")})
		where := base
		if where == "" {
			where = openai.DefaultBaseURL
		}
		return brain{
			Kind:     "openai",
			Label:    c.Model(),
			Detail:   "OpenAI-compatible model " + c.Model() + " at " + where + " (from OPENAI_API_KEY / OPENAI_BASE_URL / OPENAI_MODEL).",
			provider: c,
		}
	}
	detail := "No LLM is configured: a deterministic offline demo brain answers. Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL, OPENAI_MODEL) to use a real model."
	if forced == "demo" {
		detail = "FRAMEWIRE_BRAIN=demo: the deterministic offline demo brain answers."
	}
	return brain{Kind: "demo", Label: "offline demo brain", Detail: detail, provider: demobrain.New()}
}
