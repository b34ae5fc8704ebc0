package split

import (
	"reflect"
	"testing"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "One here. Two there! Three? Four.", []string{"One here.", "Two there!", "Three?", "Four."}},
		{"abbreviations", "Dr. Smith met Mr. Jones, e.g. at noon. They left.", []string{"Dr. Smith met Mr. Jones, e.g. at noon.", "They left."}},
		{"decimals", "Pi is 3.14 roughly. It is irrational.", []string{"Pi is 3.14 roughly.", "It is irrational."}},
		{"initials", "J. R. R. Tolkien wrote it. Then he slept.", []string{"J. R. R. Tolkien wrote it.", "Then he slept."}},
		{"lower-case continuation", "It costs approx. five dollars. Cheap.", []string{"It costs approx. five dollars.", "Cheap."}},
		{"quotes", `He said "stop." Then he left.`, []string{`He said "stop."`, "Then he left."}},
		{"blank line", "A heading\n\nBody text here", []string{"A heading", "Body text here"}},
		{"wrapped prose", "This line\nwraps here. Next one.", []string{"This line\nwraps here.", "Next one."}},
		{"list items", "Steps:\n- first\n- second", []string{"Steps:", "- first", "- second"}},
		{"numbered", "Do this:\n1. open\n2. close", []string{"Do this:", "1. open", "2. close"}},
		{"ellipsis", "Wait… What now?", []string{"Wait…", "What now?"}},
		{"empty", "  \n ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Sentences(tt.in) {
				got = append(got, c.Text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Sentences(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSentencesStartsLocateText(t *testing.T) {
	in := "  Héllo wörld. 中文句子。 Next one?\n\nLast — done."
	runes := []rune(in)
	for _, c := range Sentences(in) {
		n := len([]rune(c.Text))
		if got := string(runes[c.Start : c.Start+n]); got != c.Text {
			t.Fatalf("start %d locates %q, want %q", c.Start, got, c.Text)
		}
	}
}
