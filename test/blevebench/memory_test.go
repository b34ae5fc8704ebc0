package blevebench

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// memory is the process's resident memory, in bytes, as /proc/self/status
// gives it: all of it, its anonymous pages (the heap) and its file pages
// (mapped index files), and the most it has held (peak).
type memory struct{ rss, anon, file, peak float64 }

// readMemory returns the process's resident memory after a garbage
// collection that hands freed heap back to the kernel, so it counts what
// the process holds, not what it has thrown away. Off Linux it is zero.
func readMemory(b *testing.B) memory {
	b.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return memory{}
	}
	defer f.Close()
	var m memory
	fields := map[string]*float64{"VmRSS:": &m.rss, "RssAnon:": &m.anon, "RssFile:": &m.file, "VmHWM:": &m.peak}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var kB float64
		if _, err := fmt.Sscan(sc.Text(), &name, &kB); err == nil && fields[name] != nil {
			*fields[name] = kB * 1024
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return m
}

// record puts into got, in MiB, how much more memory m holds than
// before, as the engine's RSS and its anonymous and file parts, and the
// process's peak RSS so far; it logs them too.
func (m memory) record(got metrics, engine string, before memory) {
	fmt.Fprintf(os.Stderr, "blevebench: %s: RSS +%.0f MiB (anonymous +%.0f, file +%.0f); peak so far %.0f MiB\n",
		engine, (m.rss-before.rss)/(1<<20), (m.anon-before.anon)/(1<<20), (m.file-before.file)/(1<<20), m.peak/(1<<20))
	got.set(m.peak/(1<<20), "peak-rss-MiB")
	got.set((m.rss-before.rss)/(1<<20), engine+"-rss-MiB")
	got.set((m.anon-before.anon)/(1<<20), engine+"-anon-MiB")
	got.set((m.file-before.file)/(1<<20), engine+"-file-MiB")
}

// diskMiB returns the size of the files under dir, in MiB.
func diskMiB(b *testing.B, dir string) float64 {
	b.Helper()
	var size int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		size += info.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(size) / (1 << 20)
}

// phaseLog writes to standard error how far a long phase has come, so a
// run at millions of children shows it is alive: every tenth of each
// step's total, and the time since the phase began.
type phaseLog struct {
	name    string
	started time.Time
	next    map[string]int
}

// newPhaseLog starts the clock of the phase name (the engine and size).
func newPhaseLog(name string) *phaseLog {
	return &phaseLog{name: name, started: time.Now(), next: map[string]int{}}
}

// progress logs step's count done of total when it has passed the next
// tenth of total, or reached it.
func (l *phaseLog) progress(step string, done, total int) {
	if done < l.next[step] && done < total {
		return
	}
	l.next[step] = done + max(1, total/10)
	l.logf("%s %d of %d", step, done, total)
}

// logf writes one line with the phase's name and elapsed time.
func (l *phaseLog) logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "blevebench: %s: %s (%s)\n", l.name, strings.TrimSpace(msg), time.Since(l.started).Round(time.Second))
}

// elapsed is the time since the phase began.
func (l *phaseLog) elapsed() time.Duration { return time.Since(l.started) }

// metrics are figures measured before a benchmark's loop, reported after
// it (testing.B forgets metrics reported before its loop starts).
type metrics map[string]float64

// set records one figure under its unit.
func (m metrics) set(value float64, unit string) { m[unit] = value }

// report reports every figure.
func (m metrics) report(b *testing.B) {
	for unit, v := range m {
		b.ReportMetric(v, unit)
	}
}

// mappedMiB returns, in MiB, the resident pages of the process's mappings
// of files under dir (from /proc/self/smaps): how much of an engine's
// mapped index its searches have brought into memory. Off Linux it is 0.
func mappedMiB(b *testing.B, dir string) float64 {
	b.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var kB float64
	inside := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-"):
			inside = len(fields) == 6 && strings.HasPrefix(fields[5], dir+string(filepath.Separator))
		case inside && len(fields) == 3 && fields[0] == "Rss:":
			var n float64
			fmt.Sscan(fields[1], &n)
			kB += n
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return kB / 1024
}
