package source

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLoadJSONLinesReadsLineByLine checks the line-at-a-time loader: lines
// longer than its buffer, CRLF endings and a last line without a newline
// load whole, and a bad byte is reported at its offset in the file and a
// bad line by its number.
func TestLoadJSONLinesReadsLineByLine(t *testing.T) {
	long := strings.Repeat("word ", 500_000) // 2.5 MB, over the 1 MiB buffer
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	body := `{"_id":"a","text":"one"}` + "\r\n\r\n" + `{"_id":"b","text":"` + long + `"}` + "\n" + `{"_id":"c","text":"three"}`
	if err := os.WriteFile(good, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := LoadFile(good, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 || docs[0].Text != "one" || docs[1].Text != long || docs[2].ID != "c" {
		t.Fatalf("loaded %d documents, want a, b (%d bytes) and c", len(docs), len(long))
	}
	first := `{"_id":"a","text":"ok"}` + "\n"
	for name, tc := range map[string]struct{ body, want string }{
		"bad UTF-8 on line 2": {first + `{"_id":"b","text":"caf` + "\xe9" + `"}`, "invalid UTF-8 at byte offset " + strconv.Itoa(len(first)+len(`{"_id":"b","text":"caf`))},
		"NUL on line 2":       {first + "\x00", "NUL byte at offset " + strconv.Itoa(len(first))},
		"not JSON on line 3":  {first + "\n" + "{", "bad.jsonl:3: not a JSON document object"},
	} {
		path := filepath.Join(t.TempDir(), "bad.jsonl")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(path, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, tc.want)
		}
	}
}
