package wire

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// ClientVersion is the RTVI protocol version a client announced in
// client-ready, as Python parses it. The zero value (0.0.0) means unknown:
// the client has not said, or said something unparseable.
type ClientVersion struct {
	Major, Minor, Patch int
}

// Legacy reports whether the client speaks RTVI 1.x: it then gets its own
// version echoed in bot-ready and the 1.x bot-output format.
func (v ClientVersion) Legacy() bool { return v.Major == 1 }

// Vocabulary returns the UI vocabulary for the client: the task names for
// exactly 1.3.x, the job-group names otherwise.
func (v ClientVersion) Vocabulary() Vocabulary {
	if v.Major == 1 && v.Minor == 3 {
		return VocabularyTask
	}
	return VocabularyJobGroup
}

// BotReadyVersion returns the version to announce in bot-ready: the
// client's own for 1.x clients, ProtocolVersion otherwise.
func (v ClientVersion) BotReadyVersion() string {
	if v.Legacy() {
		return v.String()
	}
	return ProtocolVersion
}

// String returns "major.minor.patch".
func (v ClientVersion) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// compatibilitySuffix ends every version error text (§2.2 step 4).
const compatibilitySuffix = " Compatibility issues may occur."

// CheckClientVersion applies the version check of docs/protocol.md §4 to the
// version a client sent ("" when it sent none). It returns the parsed
// version (zero when unparseable) and, when the check fails, the exact
// error text to send in an error-response. The connection continues
// either way.
func CheckClientVersion(version string) (ClientVersion, string) {
	if version == "" {
		return ClientVersion{}, "Client version unknown." + compatibilitySuffix
	}
	parts := strings.Split(version, ".")
	if len(parts) != 3 {
		return ClientVersion{}, "Invalid client version format (" + version + ")." + compatibilitySuffix
	}
	var nums [3]int
	for i, p := range parts {
		n, ok := pythonInt(p)
		if !ok {
			return ClientVersion{}, "Invalid client version format (" + version + ")." + compatibilitySuffix
		}
		nums[i] = n
	}
	v := ClientVersion{Major: nums[0], Minor: nums[1], Patch: nums[2]}
	if v.Major != 2 && v.Major != 1 {
		return v, "RTVI version " + version + " is not compatible with server protocol " + ProtocolVersion + "." + compatibilitySuffix
	}
	return v, ""
}

// pythonInt parses s the way Python's int() does for the inputs that
// matter here: surrounding whitespace, an optional sign, and decimal
// digits with single underscores between them. Values beyond the int
// range saturate (they can only fail the major check anyway).
func pythonInt(s string) (int, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' {
		return 0, false
	}
	var v uint64
	prevUnderscore := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			if prevUnderscore {
				return 0, false
			}
			prevUnderscore = true
			continue
		}
		prevUnderscore = false
		if c < '0' || c > '9' {
			return 0, false
		}
		if v < math.MaxInt64/10 {
			v = v*10 + uint64(c-'0')
		} else {
			v = math.MaxInt64
		}
	}
	if v > math.MaxInt64 {
		v = math.MaxInt64
	}
	if neg {
		return -int(v), true
	}
	return int(v), true
}
