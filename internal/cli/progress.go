package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// progressReporter shows indexing progress on w: a bar per stage on a
// terminal, and one log line per stage and every few seconds elsewhere.
type progressReporter struct {
	w        io.Writer
	tty      bool
	quiet    bool
	stage    string
	bar      *progressbar.ProgressBar
	lastLine time.Time
}

// newProgressReporter reports on w (the command's standard error) unless
// quiet; bars are drawn only when w is a terminal.
func newProgressReporter(w io.Writer, quiet bool) *progressReporter {
	f, ok := w.(*os.File)
	return &progressReporter{w: w, tty: ok && term.IsTerminal(int(f.Fd())), quiet: quiet}
}

// report is an indexer.Options.OnProgress callback.
func (p *progressReporter) report(pr indexer.Progress) {
	if p.quiet {
		return
	}
	if pr.Stage != p.stage {
		p.finishStage()
		p.stage = pr.Stage
		p.startStage(pr.Total)
	}
	if p.bar != nil {
		p.bar.Set(pr.Done)
		return
	}
	if pr.Done == pr.Total || time.Since(p.lastLine) > 2*time.Second {
		fmt.Fprintf(p.w, "%-6s %d/%d\n", pr.Stage, pr.Done, pr.Total)
		p.lastLine = time.Now()
	}
}

// startStage opens a bar for a new stage on a terminal.
func (p *progressReporter) startStage(total int) {
	if !p.tty {
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(fmt.Sprintf("%-6s", p.stage)),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
}

// finishStage completes the current bar, if any.
func (p *progressReporter) finishStage() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}
