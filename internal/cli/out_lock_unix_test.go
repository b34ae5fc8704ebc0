//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// A temporary folder is judged by whether the run that may own it is
// alive, not by its age: while a real `parentrag local index` process
// writes --out, another run of the same --out removes no temporary folder
// of it; once that process is killed, the next run removes them at once.
func TestLocalIndexTempsOfLiveAndKilledRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	root := testCorpus(t, dir)
	out := filepath.Join(dir, "ix")
	bad := `{"id": "p1"}` + "\n"
	writeFile(t, dir, "ix.tmp-111/parents.jsonl", bad)
	// The live run waits, holding its lock, for a policy that never comes.
	fifo := filepath.Join(dir, "policy.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	live := exec.Command(bin, "local", "index", "--quiet", "--policy", fifo, "--out", out, root)
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer live.Process.Kill()
	lock, err := outLockPath(out)
	if err != nil {
		t.Fatal(err)
	}
	waitLocked(t, lock)
	if slices.Contains(listDir(t, dir), "ix.tmp-111") {
		t.Errorf("the run did not remove the temporary folder of a run that was gone before it started")
	}
	// What the live run would be writing.
	writeFile(t, dir, "ix.tmp-222/parents.jsonl", bad)
	mustExecute(t, "local", "index", "--quiet", "--out", out, root)
	if !slices.Contains(listDir(t, dir), "ix.tmp-222") {
		t.Fatalf("a run removed a temporary folder while another run of the same --out was alive")
	}
	if err := live.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	live.Wait()
	mustExecute(t, "local", "index", "--quiet", "--replace", "--out", out, root)
	if slices.Contains(listDir(t, dir), "ix.tmp-222") {
		t.Errorf("the temporary folder of a killed run was kept: %v", listDir(t, dir))
	}
}

// waitLocked waits until another process holds a shared flock on path:
// the lock a run keeps while it writes, taken once it has removed the
// temporary folders of dead runs under the exclusive one (an exclusive
// lock makes a shared attempt fail too, so this never returns mid-removal).
func waitLocked(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if heldShared(path) {
			return
		}
	}
	t.Fatalf("no process locked %s shared", path)
}

// heldShared reports whether another process holds path's flock shared:
// an exclusive attempt fails while a shared one succeeds.
func heldShared(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		return false
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil
}

// A run of `parentrag local index` killed with SIGKILL mid-build leaves
// its temporary folder beside --out with the build's scratch in it (the
// unit spill, the parent store being written) and, with a unit cache, the
// pack it was writing there. Killed three times (the embedded child
// index, segments, a unit cache), a run to completion then leaves nothing
// of them: beside --out only the index, and in the unit cache only packs.
func TestKilledLocalIndexRunsLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a corpus of 6 MB")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	root := filepath.Join(dir, "corpus")
	writeSynthCorpus(t, root, 6<<20)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "ix")
	units := filepath.Join(dir, "units")
	// Each run is killed once it has written the scratch named.
	for _, run := range []struct {
		flags   []string
		scratch string
	}{
		{[]string{"--no-unit-cache"}, filepath.Join(work, "ix.tmp-*", ".units-*.spill")},
		{[]string{"--no-unit-cache", "--child-index", "segments"}, filepath.Join(work, "ix.tmp-*", "parents", "*")},
		{[]string{"--unit-cache", units}, filepath.Join(units, ".pack-*")},
	} {
		args := append([]string{"local", "index", "--quiet", "--replace", "--out", out}, run.flags...)
		killOnceWritten(t, exec.Command(bin, append(args, root)...), run.scratch)
	}
	if left := scratchOf(t, work, units); len(left) == 0 {
		t.Fatal("the killed runs left nothing: they were not killed mid-build")
	} else {
		t.Logf("the killed runs left %v", left)
	}
	run := exec.Command(bin, "local", "index", "--quiet", "--replace", "--unit-cache", units, "--out", out, root)
	if msg, err := run.CombinedOutput(); err != nil {
		t.Fatalf("the complete run: %v\n%s", err, msg)
	}
	if got := listDir(t, work); !slices.Equal(got, []string{"ix"}) {
		t.Errorf("beside --out after a complete run: %v, want only ix", got)
	}
	for _, name := range listDir(t, units) {
		if !strings.HasSuffix(name, ".pack") && name != "segments" {
			t.Errorf("the unit cache holds %s after a complete run, want only packs", name)
		}
	}
}

// writeSynthCorpus writes about size bytes of synthetic documents into
// root as one JSON Lines file.
func writeSynthCorpus(t *testing.T, root string, size int) {
	t.Helper()
	docs, _ := synthtest.BenchDocuments(size)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, d := range docs {
		enc.Encode(map[string]string{"id": d.ID, "text": d.Text})
	}
	writeFile(t, root, "docs.jsonl", b.String())
}

// killOnceWritten starts cmd and kills it with SIGKILL once a file
// matching scratch appears.
func killOnceWritten(t *testing.T, cmd *exec.Cmd, scratch string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for written, _ := filepath.Glob(scratch); len(written) == 0; written, _ = filepath.Glob(scratch) {
		select {
		case err := <-exited:
			t.Fatalf("%v ended (%v) before it wrote %s: %s", cmd.Args, err, scratch, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	if err := <-exited; err == nil {
		t.Fatalf("%v finished before it was killed", cmd.Args)
	}
}

// scratchOf lists what builds write before they finish: the temporary
// folders beside work's index and their files, and the unit cache's packs
// being written.
func scratchOf(t *testing.T, work, units string) []string {
	t.Helper()
	var found []string
	temps, _ := filepath.Glob(filepath.Join(work, "ix.tmp-*"))
	for _, tmp := range temps {
		names, _ := filepath.Glob(filepath.Join(tmp, "*.tmp-*"))
		spills, _ := filepath.Glob(filepath.Join(tmp, ".units-*"))
		found = append(found, tmp)
		found = append(found, append(names, spills...)...)
	}
	packs, _ := filepath.Glob(filepath.Join(units, ".pack-*"))
	return append(found, packs...)
}
