package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every group the page sees opens with group_started, closes with exactly
// one group_completed, and has one job_completed per worker in between:
// all completed, failed plus cancelled, or all cancelled by the user.
func TestTheRunShowsEachLifecycle(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, 20); err != nil {
		t.Fatal(err)
	}
	sections := strings.Split(out.String(), "\n# ")[1:]
	if len(sections) != 3 {
		t.Fatalf("got %d sections:\n%s", len(sections), out.String())
	}
	want := [][]string{
		{`"completed"`, `"completed"`, `"completed"`},
		{`"cancelled"`, `"failed"`},
		{`"cancelled"`, `"cancelled"`},
	}
	for i, sec := range sections {
		lines := strings.Split(strings.TrimSpace(sec), "\n")[1:]
		if !strings.Contains(lines[0], "group_started") || !strings.Contains(lines[len(lines)-1], "group_completed") {
			t.Errorf("section %d does not open with group_started and close with group_completed:\n%s", i+1, sec)
		}
		var statuses []string
		for _, l := range lines {
			if _, st, ok := strings.Cut(l, "status="); ok {
				statuses = append(statuses, strings.Fields(st)[0])
			}
			if strings.Contains(l, "group_completed") && l != lines[len(lines)-1] {
				t.Errorf("section %d: group_completed before the end:\n%s", i+1, sec)
			}
		}
		slices.Sort(statuses)
		if !slices.Equal(statuses, want[i]) {
			t.Errorf("section %d statuses = %v, want %v", i+1, statuses, want[i])
		}
	}
}
