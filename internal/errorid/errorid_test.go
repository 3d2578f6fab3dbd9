package errorid_test

import (
	"regexp"
	"testing"

	"go.uber.org/goleak"

	"github.com/framewire/framewire/internal/errorid"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIDsAreTwelveHexDigitsAndDiffer(t *testing.T) {
	a, b := errorid.New(), errorid.New()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(a) || a == b {
		t.Errorf("ids %q and %q, want two different 12-digit hex ids", a, b)
	}
}
