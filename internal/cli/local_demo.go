package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/docs"
	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// defaultDemoQuestion is asked when the demo is given none.
const defaultDemoQuestion = "Why split documents into parents and children?"

// newLocalDemoCommand indexes parentrag's own documentation, which ships
// inside the binary, and asks it a question.
func newLocalDemoCommand() *cobra.Command {
	var (
		dir   string
		quiet bool
		qf    queryFlags
	)
	cmd := &cobra.Command{
		Use:   `demo ["question"]`,
		Short: "Index parentrag's own documentation with the default policy and ask it a question",
		RunE: func(cmd *cobra.Command, args []string) error {
			question := defaultDemoQuestion
			if len(args) > 0 {
				question = strings.Join(args, " ")
			}
			docs, err := embeddedDocs()
			if err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join(os.TempDir(), "parentrag-demo")
			}
			if err := checkOut(dir, true); err != nil {
				return err
			}
			compiled, err := loadPolicy("")
			if err != nil {
				return err
			}
			built, err := indexDocuments(cmd.Context(), indexRequest{docs: docs, compiled: compiled, emb: &embeddingFlags{contextWeight: -1}, out: dir, replace: true}, newProgressReporter(cmd.ErrOrStderr(), quiet))
			if err != nil {
				return err
			}
			m := built.Manifest
			fmt.Fprintf(cmd.ErrOrStderr(), "indexed %d pages of parentrag's docs: %d parents, %d children, revision %s, in %s\n\nQ: %s\n\n",
				m.Documents, m.Parents, m.Children, m.Revision, dir, question)
			b, err := bundle.Open(dir)
			if err != nil {
				return err
			}
			defer b.Close()
			return runQuery(cmd, b, question, qf)
		},
	}
	cmd.Flags().StringVar(&dir, "out", "", "where to write the demo index (default: a folder in the system's temp dir, replaced on each run)")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not report progress")
	qf.register(cmd)
	return cmd
}

// embeddedDocs returns the Markdown pages compiled into the binary.
func embeddedDocs() ([]hierarchy.Document, error) {
	var out []hierarchy.Document
	err := fs.WalkDir(docs.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(docs.Files, path)
		if err != nil {
			return err
		}
		docs, err := document.Read(document.Markdown, "docs/"+path, "docs/"+path, data)
		if err != nil {
			return err
		}
		out = append(out, docs...)
		return nil
	})
	return out, err
}
