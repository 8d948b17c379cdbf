package cli

import (
	"context"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeoutContext(t *testing.T) {
	for name, c := range map[string]struct {
		args        []string
		env         string
		settings    time.Duration
		onlyIfGiven bool
		want        time.Duration // 0: no deadline
	}{
		"settings":                  {settings: 20 * time.Minute, want: 20 * time.Minute},
		"zero bounds nothing":       {settings: 0},
		"create, not given":         {settings: 20 * time.Minute, onlyIfGiven: true},
		"create, --timeout":         {args: []string{"--timeout", "5m"}, settings: 5 * time.Minute, onlyIfGiven: true, want: 5 * time.Minute},
		"create, CARGOSHIP_TIMEOUT": {env: "90s", settings: 90 * time.Second, onlyIfGiven: true, want: 90 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			var d time.Duration
			cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
			cmd.Flags().DurationVar(&d, "timeout", 0, "")
			require.NoError(t, cmd.ParseFlags(c.args))
			cmd.SetContext(context.Background())
			app := &App{Settings: Settings{Timeout: c.settings}, Getenv: func(k string) string {
				if k == EnvPrefix+"TIMEOUT" {
					return c.env
				}
				return ""
			}}
			start := time.Now()
			ctx, cancel := app.timeoutContext(cmd, c.onlyIfGiven)
			defer cancel()
			deadline, ok := ctx.Deadline()
			if c.want == 0 {
				assert.False(t, ok, "no deadline")
				return
			}
			require.True(t, ok)
			assert.WithinDuration(t, start.Add(c.want), deadline, time.Second)
		})
	}
}
