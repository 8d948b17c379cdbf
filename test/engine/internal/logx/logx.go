// Package logx writes log lines the way k3s and rke2 do (logrus's text
// format: time="..." level=info msg="..."), so journal output from the test
// engine reads like the real engine's and tests can grep the same phrases.
package logx

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

var (
	mu    sync.Mutex
	out   io.Writer = os.Stderr
	debug bool
)

// SetDebug turns debug lines on (the engines' --debug flag).
func SetDebug(on bool) { debug = on }

func write(level, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	mu.Lock()
	defer mu.Unlock()
	_, _ = fmt.Fprintf(out, "time=%q level=%s msg=%q\n", time.Now().Format(time.RFC3339), level, msg)
}

// Debugf logs at debug level when --debug is set.
func Debugf(format string, args ...any) {
	if debug {
		write("debug", format, args...)
	}
}

// Infof logs at info level.
func Infof(format string, args ...any) { write("info", format, args...) }

// Warnf logs at warning level.
func Warnf(format string, args ...any) { write("warning", format, args...) }

// Errorf logs at error level.
func Errorf(format string, args ...any) { write("error", format, args...) }

// Fatalf logs at fatal level and exits 1, as logrus.Fatal does; systemd's
// Restart=always then starts the engine again, as it would the real one.
func Fatalf(format string, args ...any) {
	write("fatal", format, args...)
	os.Exit(1)
}
