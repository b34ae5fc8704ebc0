package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/source"
)

// splitOutput is what `parentrag split` prints.
type splitOutput struct {
	Parents  []splitParent `json:"parents"`
	Children []splitChild  `json:"children"`
}

type splitParent struct {
	ID          string           `json:"id"`
	HeadingPath []string         `json:"headingPath,omitempty"`
	Pages       *hierarchy.Pages `json:"pages,omitempty"`
	Text        string           `json:"text"`
	Start       int              `json:"start"`
}

type splitChild struct {
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	Text     string `json:"text"`
	Start    int    `json:"start"`
}

// newSplitCommand prints the parents and children of one file as JSON.
func newSplitCommand() *cobra.Command {
	var policyPath string
	cmd := &cobra.Command{
		Use:   "split --policy POLICY.yaml FILE",
		Short: "Split one file into parents and children and print them as JSON",
		Long: `Split one file with a ChunkingPolicy and print
{"parents":[{"id","headingPath","text","start"}],"children":[{"id","parentId","text","start"}]}.
start is the code-point offset in FILE, for children too (-1 when a chunk
cannot be located; in an HTML, PDF or DOCX file, in the Markdown it converts
to). headingPath, with parent.boundaries Sections, names the Markdown
headings or the code definitions a parent falls under; pages, for a PDF,
the pages it spans. Without --policy the default policy is used.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			compiled, err := loadPolicy(policyPath)
			if err != nil {
				return err
			}
			docs, err := source.LoadFile(args[0], filepath.Base(args[0]))
			if err != nil {
				return err
			}
			// Empty lists print as [], never null, so the schema holds
			// for a file with no text.
			out := splitOutput{Parents: []splitParent{}, Children: []splitChild{}}
			for _, doc := range docs {
				res := compiled.Builder.Build(doc)
				for _, p := range res.Parents {
					out.Parents = append(out.Parents, splitParent{ID: p.ID, HeadingPath: p.HeadingPath, Pages: p.Pages, Text: p.Text, Start: p.Start})
				}
				for _, c := range res.Children {
					out.Children = append(out.Children, splitChild{ID: c.ID, ParentID: c.ParentID, Text: c.Text, Start: c.Start})
				}
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	cmd.Flags().StringVar(&policyPath, "policy", "", "ChunkingPolicy YAML file (default: the built-in default policy)")
	return cmd
}

// loadPolicy reads and compiles the policy file, or the default policy when
// path is empty.
func loadPolicy(path string) (*policy.Compiled, error) {
	p := policy.Default()
	if path != "" {
		var err error
		if p, err = policy.Load(path); err != nil {
			return nil, err
		}
	}
	compiled, err := policy.Compile(&p.Spec)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", displayName(path), err)
	}
	return compiled, nil
}

// displayName names a policy file in messages.
func displayName(path string) string {
	if path == "" {
		return "(default)"
	}
	return path
}
