package origin

import "testing"

func TestAllowed(t *testing.T) {
	patterns := []string{"https://app.example.com", "http://127.0.0.1:*"}
	for origin, want := range map[string]bool{
		"https://app.example.com":      true,
		"HTTPS://APP.EXAMPLE.COM":      true,
		"https://app.example.com:8443": false,
		"http://127.0.0.1":             true,
		"http://127.0.0.1:5173":        true,
		"http://127.0.0.1:":            false,
		"http://127.0.0.1:123456":      false,
		"http://127.0.0.1:80a":         false,
		"http://127.0.0.10:5173":       false,
		"https://127.0.0.1:5173":       false,
		"https://evil.example.com":     false,
		"":                             false,
	} {
		if got := Allowed(patterns, origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
	if !Allowed([]string{"*"}, "https://anything.example") {
		t.Error(`"*" refused an origin`)
	}
	if Allowed(nil, "http://127.0.0.1") {
		t.Error("no patterns allowed an origin")
	}
}

func FuzzAllowed(f *testing.F) {
	f.Add("http://127.0.0.1:*", "http://127.0.0.1:5173")
	f.Add("https://a.example", "https://a.example")
	f.Add(":*", "")
	f.Fuzz(func(t *testing.T, pattern, origin string) {
		if Allowed([]string{pattern}, origin) && pattern != "*" && !anyPort(pattern, origin) && len(pattern) != len(origin) {
			t.Fatalf("%q matched %q without a rule", pattern, origin)
		}
	})
}
