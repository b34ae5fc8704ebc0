//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
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
