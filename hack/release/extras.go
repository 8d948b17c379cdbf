package release

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/colonel-byte/cargoship/pkg/cli"
)

// commandTree is the tree as a user's shell sees it, built as hack/gendocs
// builds it: the environment plays no part in help text, so an empty one
// makes the same pages and scripts on every machine.
func commandTree() *cobra.Command {
	noEnv := func(string) (string, bool) { return "", false }
	root := cli.NewRootCommand(io.Discard, io.Discard, noEnv)
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	return root
}

// Completion files by shell, as the archive carries them under completions/.
var completionFiles = map[string]func(*cobra.Command, io.Writer) error{
	"cargoship.bash": func(c *cobra.Command, w io.Writer) error { return c.GenBashCompletionV2(w, true) },
	"_cargoship":     func(c *cobra.Command, w io.Writer) error { return c.GenZshCompletion(w) },
	"cargoship.fish": func(c *cobra.Command, w io.Writer) error { return c.GenFishCompletion(w, true) },
	"cargoship.ps1":  func(c *cobra.Command, w io.Writer) error { return c.GenPowerShellCompletionWithDesc(w) },
}

// WriteExtras writes the shell completions into dir/completions and one
// man page per command into dir/manpages (section 1), dated date so two
// runs over one commit write the same bytes.
func WriteExtras(dir string, date time.Time) error {
	comp, man := filepath.Join(dir, "completions"), filepath.Join(dir, "manpages")
	for _, d := range []string{comp, man} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for name, gen := range completionFiles {
		if err := writeWith(filepath.Join(comp, name), func(w io.Writer) error { return gen(commandTree(), w) }); err != nil {
			return fmt.Errorf("completion %s: %w", name, err)
		}
	}
	header := &doc.GenManHeader{Title: "CARGOSHIP", Section: "1", Source: "cargoship", Manual: "cargoship manual", Date: &date}
	if err := doc.GenManTree(commandTree(), header, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

func writeWith(p string, gen func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := gen(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
