package main

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/frames"
	"github.com/framewire/framewire/pipeline/pipelinetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestShoutUpperCasesText(t *testing.T) {
	res := pipelinetest.Run(t, Shout{}, pipelinetest.Options{
		Send: []frames.Frame{&frames.Text{Text: "hello"}, &frames.LLMText{Text: "untouched"}},
	})
	res.ExpectDown(t, &frames.Text{Text: "HELLO"}, &frames.LLMText{Text: "untouched"})
}

func TestWordCounterReportsAtEnd(t *testing.T) {
	res := pipelinetest.Run(t, &WordCounter{}, pipelinetest.Options{
		Send: []frames.Frame{&frames.Text{Text: "one two"}, &frames.Text{Text: "three"}},
	})
	res.ExpectDown(t, &frames.Text{Text: "one two"}, &frames.Text{Text: "three"}, &frames.Text{Text: "(3 words)"})
}

func TestMainRuns(t *testing.T) { main() }
