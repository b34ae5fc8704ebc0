package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// The limit flags reach the server's options, zero meaning no limit for
// the cost limits, and bad values are refused before anything loads.
func TestServeLimitFlags(t *testing.T) {
	cmd := &cobra.Command{Use: "serve"}
	var f serveFlags
	f.register(cmd)
	if err := cmd.Flags().Parse([]string{"--request-timeout", "3s", "--max-in-flight", "5", "--max-queued", "7",
		"--queue-wait", "40ms", "--max-query-terms", "0", "--max-postings", "900",
		"--heavy-body-bytes", "0", "--heavy-postings", "500", "--max-heavy-in-flight", "2"}); err != nil {
		t.Fatal(err)
	}
	o := f.serverOptions()
	if o.RequestTimeout != 3*time.Second || o.MaxInFlight != 5 || o.MaxQueued != 7 || o.QueueWait != 40*time.Millisecond ||
		o.MaxQueryTerms != -1 || o.MaxPostings != 900 || o.HeavyBodyBytes != -1 || o.HeavyPostings != 500 || o.MaxHeavyInFlight != 2 {
		t.Errorf("server options %+v do not follow the flags", o)
	}
	empty := t.TempDir()
	for _, args := range [][]string{
		{"--request-timeout", "0s"}, {"--queue-wait", "0s"}, {"--max-in-flight", "-1"}, {"--max-query-terms", "-3"},
		{"--heavy-postings", "-1"},
	} {
		_, _, err := execute(t, append([]string{"serve", "--index", empty}, args...)...)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: %v, want an error naming %s", args, err, args[0])
		}
	}
}

// serve --index exits with an error naming the file, instead of turning
// ready, over an index whose parents.jsonl was truncated or changed.
func TestServeIndexVerifiesFiles(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"changed":   func(b []byte) []byte { copy(b[len(b)/2:], "XXXX"); return b },
	} {
		t.Run(name, func(t *testing.T) {
			index := localIndex(t)
			p := filepath.Join(index, "parents.jsonl")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err = execute(t, "serve", "--index", index, "--addr", "127.0.0.1:0", "--shutdown-delay", "0")
			if err == nil || !strings.Contains(err.Error(), "parents.jsonl") || !strings.Contains(err.Error(), "manifest says") {
				t.Fatalf("serve over a %s parents.jsonl: %v, want an error naming the file", name, err)
			}
		})
	}
}
