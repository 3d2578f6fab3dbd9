package pocketsphinx

import (
	"strings"
	"testing"
)

func TestPronunciationsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		p    map[string]string
		want string // "" for none
	}{
		{map[string]string{"explain(2)": "EH K S P L EY N", "framewire": "F R EY M W AY ER"}, ""},
		{map[string]string{"explain(1)": "EH K S P L EY N"}, "word(2) to word(99)"},
		{map[string]string{"explain(2": "EH K S P L EY N"}, "word(2) to word(99)"},
		{map[string]string{"two words": "T UW"}, "not a dictionary word"},
		{map[string]string{"(2)": "T UW"}, "not a dictionary word"},
		{map[string]string{"empty": ""}, "0 phones"},
		{map[string]string{"lower": "eh k"}, `"eh" is not a phone`},
		{map[string]string{"long": strings.Repeat("AA ", 33)}, "33 phones"},
	} {
		err := checkPronunciations(tc.p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("checkPronunciations(%v) = %v, want %q", tc.p, err, tc.want)
		}
	}
	many := map[string]string{}
	for i := range MaxPronunciations + 1 {
		many["w"+strings.Repeat("x", i%50)+string(rune('a'+i%26))+strings.Repeat("y", i/50)] = "AA"
	}
	if err := checkPronunciations(many); err == nil {
		t.Errorf("%d pronunciations accepted, the bound is %d", len(many), MaxPronunciations)
	}
}
