package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testPolicy is a small parent-child policy, so short test files still
// make several parents and children.
const testPolicy = `apiVersion: parentrag.io/v1alpha1
kind: ChunkingPolicy
metadata:
  name: test
spec:
  strategy: ParentChild
  lengthUnit: Characters
  parent: {chunkSize: 160, chunkOverlap: 0}
  child: {chunkSize: 50, chunkOverlap: 10}
`

// execute runs the parentrag command in process and returns what it wrote
// to standard output and standard error.
func execute(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := NewRootCommand()
	var out, errb bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = cmd.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// mustExecute runs the command and fails the test on an error.
func mustExecute(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := execute(t, args...)
	if err != nil {
		t.Fatalf("parentrag %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return stdout, stderr
}

// writeFile writes data to dir/name, creating folders, and returns the path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// listDir returns the sorted names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// testCorpus writes a small corpus folder: three documents (one nested)
// and a file without a document extension, which is ignored.
func testCorpus(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "corpus")
	writeFile(t, root, "zebra.md", "# Zebras\n\n"+
		"Zebras are African equines with distinctive black and white striped coats. "+
		"Each zebra has its own pattern of stripes.\n\n"+
		"Zebras live in herds on the savanna. They eat grass and travel far for water. "+
		"Lions and hyenas hunt them at night.\n\n"+
		"Scientists think the stripes keep biting flies away and help zebras stay cool.\n")
	writeFile(t, root, "lion.md", "# Lions\n\n"+
		"Lions are large cats that live in prides. A pride has several females, their cubs "+
		"and a few males.\n\n"+
		"Lionesses do most of the hunting, often together, and at dusk.\n")
	writeFile(t, root, "plants/baobab.txt", "The baobab tree stores water in its trunk. "+
		"It can live for more than a thousand years and grows across dry savanna.\n")
	writeFile(t, root, "plants/photo.png", "\x89PNG\x00\x00binary")
	return root
}
