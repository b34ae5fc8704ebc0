package glove

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// small is a file of the package's shape: 3 words of 2 dimensions.
const small = `{"precision":8,"l2NormIndex":2,"wordIndex":3,"size":3,"dimensions":2,
"words":["the","king","queen"],
"vectors":{"king":[1,0.5,1.1,1],"the":[0.1,0.1,0.14,0],"queen":[0.9,0.6,1.08,2]},
"unkVector":[0,0,-1]}`

func TestLoadJSONReadsEveryWordInRankOrder(t *testing.T) {
	m, err := LoadJSON(strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if m.Words() != 3 || m.Dimensions() != 2 {
		t.Fatalf("%d words of %d dims, want 3 of 2", m.Words(), m.Dimensions())
	}
	if got := m.Vector("queen"); got[0] != 0.9 || got[1] != 0.6 {
		t.Errorf("queen = %v, want [0.9 0.6]", got)
	}
	if r, _ := m.rank("king"); r != 1 {
		t.Errorf("king has rank %d, want 1", r)
	}
	if m.Vector("prince") != nil {
		t.Error("an unknown word has a vector")
	}
}

func TestLoadJSONRefusesDamagedFiles(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"empty":             {small, "", "empty"},
		"wrong size":        {`"size":3`, `"size":4`, "header says 4 words"},
		"short vector":      {`[1,0.5,1.1,1]`, `[1,1.1,1]`, `has 3 values`},
		"wrong rank":        {`[1,0.5,1.1,1]`, `[1,0.5,1.1,2]`, `not that word's place`},
		"missing vector":    {`,"queen":[0.9,0.6,1.08,2]`, ``, "3 words but 2 vectors"},
		"vectors first":     {`"words":["the","king","queen"],`, ``, "before \"words\""},
		"huge header":       {`"dimensions":2`, `"dimensions":99999999`, "before \"words\""},
		"not a number":      {`0.6,1.08`, `"x",1.08`, "vector of \"queen\""},
		"cut short":         {small, small[:120], "EOF"},
		"norm index":        {`"l2NormIndex":2`, `"l2NormIndex":0`, "norm at 0"},
		"duplicate word":    {`"words":["the","king","queen"]`, `"words":["the","king","king"]`, "not that word's place"},
		"a list, no object": {small, `[1,2]`, "want"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			text := small
			if c.from == small {
				text = c.to
			} else {
				text = strings.Replace(small, c.from, c.to, 1)
			}
			_, err := LoadJSON(strings.NewReader(text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestBinaryRoundTripAndDamage(t *testing.T) {
	m, err := LoadJSON(strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := WriteBinary(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"the", "king", "queen"} {
		if a, b := m.Vector(w), got.Vector(w); a[0] != b[0] || a[1] != b[1] {
			t.Errorf("%s: %v after the round trip, want %v", w, b, a)
		}
	}
	data, _ := os.ReadFile(path)
	for _, at := range []int{0, len(data) / 2, len(data) - 1} {
		bad := append([]byte(nil), data...)
		bad[at] ^= 0x40
		os.WriteFile(path, bad, 0o644)
		if _, err := ReadBinary(path); !errors.Is(err, ErrBadBinary) {
			t.Errorf("byte %d flipped: err = %v, want ErrBadBinary", at, err)
		}
	}
}

// install lays out a package folder as npm ci would, with small as its
// vectors.
func install(t *testing.T, integrity string) string {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", Package)
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	lock := `{"packages":{"node_modules/` + Package + `":{"version":"1.1.0","integrity":"` + integrity + `"}}}`
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o644)
	os.WriteFile(filepath.Join(pkg, File), []byte(small), 0o644)
	return dir
}

func TestOpenKeepsABinaryFormKeyedByIntegrity(t *testing.T) {
	dir, cache := install(t, "sha512-one"), t.TempDir()
	if _, err := Open(dir, Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(cache)
	if len(entries) != 1 {
		t.Fatalf("cache holds %d files, want 1", len(entries))
	}
	// With the JSON gone, only the binary form can answer.
	os.Remove(filepath.Join(dir, "node_modules", Package, File))
	m, err := Open(dir, Options{CacheDir: cache})
	if err != nil || m.Words() != 3 {
		t.Fatalf("open from the cache: %v", err)
	}
	// Another integrity is another package: the cache does not answer.
	other := install(t, "sha512-two")
	os.Remove(filepath.Join(other, "node_modules", Package, File))
	if _, err := Open(other, Options{CacheDir: cache}); err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Fatalf("err = %v, want one saying to run npm ci", err)
	}
}

func TestOpenRewritesADamagedCache(t *testing.T) {
	dir, cache := install(t, "sha512-one"), t.TempDir()
	if _, err := Open(dir, Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(cache)
	path := filepath.Join(cache, entries[0].Name())
	os.WriteFile(path, []byte("garbage"), 0o644)
	if _, err := Open(dir, Options{CacheDir: cache}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBinary(path); err != nil {
		t.Fatalf("the damaged cache was not rewritten: %v", err)
	}
}

func TestOpenWithoutALockSaysWhatIsMissing(t *testing.T) {
	if _, err := Open(t.TempDir(), Options{CacheDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "lock file") {
		t.Fatalf("err = %v, want one naming the lock file", err)
	}
}
