package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/repo"
)

// moduleRoot is the module root.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildBinary builds the parentrag binary into dir and returns its path;
// it skips the test where there is no go tool.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	bin := filepath.Join(dir, "parentrag")
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/parentrag")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryReportsOneErrorLine builds the real binary and checks what a
// user sees on bad input: exit status 1 and one line on standard error.
func TestBinaryReportsOneErrorLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	// A folder of unreadable files only: with one readable file beside it,
	// local index skips the bad one, says so, and succeeds (local_test.go).
	bad := writeFile(t, tmp, "corpus/bad.md", "caf\xe9\n")
	cases := map[string]struct {
		args []string
		want string
	}{
		"only invalid UTF-8": {[]string{"local", "index", "--out", filepath.Join(tmp, "index"), filepath.Join(tmp, "corpus")}, bad},
		"missing file":       {[]string{"split", filepath.Join(tmp, "nope.md")}, "nope.md"},
		"unknown flag":       {[]string{"local", "query", "--bogus", "x"}, "--bogus"},
		"missing arguments":  {[]string{"split"}, "arg"},
		"no manifest":        {[]string{"local", "query", "--index", tmp, "zebra"}, "manifest.json"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1", err)
			}
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "parentrag: ") || !strings.HasSuffix(stderr.String(), "\n") {
				t.Errorf("stderr is not one line starting with \"parentrag: \": %q", stderr.String())
			}
			if !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q does not name %q", lines[0], tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tmp, "index")); !os.IsNotExist(err) {
		t.Errorf("a failed index left its --out behind: %v", err)
	}
}
