package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"
)

// registerConfig adds -c/--config, the cluster document, as k0sctl names
// it, with completion of YAML files.
func registerConfig(cmd *cobra.Command, config *string) {
	cmd.Flags().StringVarP(config, "config", "c", "", "the cluster inventory, a YAML document (required)")
	_ = cmd.RegisterFlagCompletionFunc("config", completeYAML) // the flag was just added
}

// aCount is what a script written for the earlier -c (--concurrency) passes.
var aCount = regexp.MustCompile(`^[0-9]+$`)

// checkConfig refuses a missing --config, and explains a number given to
// -c that names no file: -c was --concurrency before it was --config.
func checkConfig(config, what string) error {
	if config == "" {
		return fmt.Errorf("--config is required: %s", what)
	}
	if aCount.MatchString(config) {
		if _, err := os.Stat(config); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--config %s: no such file; -c names the cluster inventory (it was --concurrency's short flag): for %s hosts at once pass --concurrency %s", config, config, config)
		}
	}
	return nil
}
