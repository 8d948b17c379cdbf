package cli

import (
	"io"
	"log/slog"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFanoutFlag: peer fan-out is on unless --fanout=false, on the
// commands that upload (apply, prepare); reset uploads nothing and has no
// such flag.
func TestFanoutFlag(t *testing.T) {
	for args, noFanout := range map[string]bool{"": false, "--fanout": false, "--fanout=false": true} {
		f := &installFlags{}
		cmd := &cobra.Command{}
		app := &App{Log: slog.New(slog.DiscardHandler), Err: io.Discard, Settings: DefaultSettings()}
		f.register(cmd, app)
		argv := []string{"--config", "cluster.yaml", "--dry-run"}
		if args != "" {
			argv = append(argv, args)
		}
		require.NoError(t, cmd.Flags().Parse(argv))
		o, err := f.options(cmd, app, "")
		require.NoError(t, err)
		assert.Equal(t, noFanout, o.Phase.NoFanout, "%q", args)
	}
	root := NewRootCommand(io.Discard, io.Discard, func(string) (string, bool) { return "", false })
	for name, has := range map[string]bool{"apply": true, "prepare": true, "reset": false} {
		cmd, _, err := root.Find([]string{name})
		require.NoError(t, err)
		assert.Equal(t, has, cmd.Flags().Lookup("fanout") != nil, name)
	}
}
