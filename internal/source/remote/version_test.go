package remote

import "testing"

func TestVersionString(t *testing.T) {
	v := Version{ETag: `"x"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT", Checksum: "sha256:ab"}
	want := `checksum="sha256:ab" etag="\"x\"" lastModified="Mon, 02 Jan 2006 15:04:05 GMT"`
	if got := v.String(); got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}
	if got := (Version{ETag: "e"}).String(); got != `etag="e"` {
		t.Errorf("String() = %s", got)
	}
	if got := (Version{}).String(); got != "" || !(Version{}).IsZero() {
		t.Errorf("zero String() = %q", got)
	}
}

func TestVersionMatches(t *testing.T) {
	tests := []struct {
		a, b Version
		want bool
	}{
		{Version{Checksum: "c1", ETag: "e1"}, Version{Checksum: "c1", ETag: "e2"}, true},
		{Version{Checksum: "c1", ETag: "e1"}, Version{Checksum: "c2", ETag: "e1"}, false},
		{Version{ETag: "e1"}, Version{Checksum: "c1", ETag: "e1"}, true},
		{Version{ETag: "e1"}, Version{ETag: "e2", LastModified: "l"}, false},
		{Version{LastModified: "l"}, Version{ETag: "e", LastModified: "l"}, true},
		{Version{ETag: "e"}, Version{LastModified: "l"}, false},
		{Version{}, Version{}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Matches(tt.b); got != tt.want {
			t.Errorf("%+v.Matches(%+v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
