package chunking

import (
	"slices"
	"testing"
)

func TestStrategiesAreDeclaredOnceDefaultFirst(t *testing.T) {
	got := Strategies()
	if len(got) == 0 || got[0] != ParentChild {
		t.Fatalf("strategies %v, want ParentChild, the default, first", got)
	}
	for i, s := range got {
		if slices.Contains(got[:i], s) {
			t.Errorf("%s is declared twice", s)
		}
		if s == "" || !s.Declared() {
			t.Errorf("strategy %q is listed but not declared", s)
		}
	}
	got[0] = "Changed"
	if Strategies()[0] != ParentChild {
		t.Error("changing the returned slice changed the declarations")
	}
}

func TestTraitsOfEachStrategy(t *testing.T) {
	for _, tc := range []struct {
		s                         Strategy
		declared, overlap, window bool
	}{
		{ParentChild, true, false, false},
		{SentenceWindow, true, true, true},
		{"", false, false, false},
		{"sentencewindow", false, false, false},
	} {
		if got := tc.s.Declared(); got != tc.declared {
			t.Errorf("%q.Declared() = %v, want %v", tc.s, got, tc.declared)
		}
		if got := tc.s.ParentsOverlap(); got != tc.overlap {
			t.Errorf("%q.ParentsOverlap() = %v, want %v", tc.s, got, tc.overlap)
		}
		if got := tc.s.Window(); got != tc.window {
			t.Errorf("%q.Window() = %v, want %v", tc.s, got, tc.window)
		}
	}
}
