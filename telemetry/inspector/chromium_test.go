package inspector_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framewire/framewire/telemetry/inspector"
)

// The page in Chromium, against a live session: the graph and a turn's
// waterfall are on it; with FRAMEWIRE_UPDATE_DOCS=1 the screenshot goes to
// docs/img/inspector.png.
// Skips when Chromium or e2e/node_modules (bash e2e/setup.sh) is missing,
// and fails then under make test (FRAMEWIRE_REQUIRE_DEPS), which installs
// them first.
func TestInspectorPageInChromium(t *testing.T) {
	skip := t.Skip
	if os.Getenv("FRAMEWIRE_REQUIRE_DEPS") != "" {
		skip = t.Fatal
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	mods, _ := filepath.Abs("../../e2e/node_modules")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(chromium); serr != nil || err != nil {
		skip("no chromium or node: run bash e2e/setup.sh")
	}
	if _, err := os.Stat(filepath.Join(mods, "playwright-core")); err != nil {
		skip("no e2e/node_modules: run bash e2e/setup.sh")
	}
	in, err := inspector.New(t.Context(), inspector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(context.Background()) }()
	stop := liveSession(t, in)
	defer stop()
	srv := newLoopbackServer(t, in)
	// The test leaves the source tree alone; FRAMEWIRE_UPDATE_DOCS=1
	// writes the screenshot docs/observability.md shows.
	shot := filepath.Join(t.TempDir(), "inspector.png")
	if os.Getenv("FRAMEWIRE_UPDATE_DOCS") != "" {
		shot, _ = filepath.Abs("../../docs/img/inspector.png")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/shot.mjs", srv+"/", shot)
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods, "CHROMIUM="+chromium, "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "LLM") {
		t.Errorf("graph on the page: %s", out)
	}
}
