package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// packageExt is how a package's file name ends.
const packageExt = "tar.zst"

// completeYAML offers YAML files for --config.
func completeYAML(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completePackageArg offers package files for the one argument of apply,
// prepare and inspect, and nothing once it is given.
func completePackageArg(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{packageExt}, cobra.ShellCompDirectiveFilterFileExt
}

// completeDocumentArg offers YAML documents for validate's one
// argument, and nothing once it is given.
func completeDocumentArg(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeEngine offers the engines, for kube-config's --distro.
func completeEngine(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return withPrefix(v1alpha1.Engines, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeEngineOrPackage offers reset's --distro: an engine, or a package
// file. A shell's file filter cannot be mixed with words, so the files are
// listed here: packages and the directories that may hold one.
func completeEngineOrPackage(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	out := withPrefix(v1alpha1.Engines, toComplete)
	directive := cobra.ShellCompDirectiveNoFileComp
	// A pattern character typed by the user only narrows the glob.
	matches, _ := filepath.Glob(toComplete + "*")
	for _, m := range matches {
		fi, err := os.Stat(m)
		switch {
		case err != nil:
		case fi.IsDir():
			out = append(out, m+string(filepath.Separator))
			directive |= cobra.ShellCompDirectiveNoSpace // go on into it
		case strings.HasSuffix(m, "."+packageExt):
			out = append(out, m)
		}
	}
	return out, directive
}

func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
