// Package units holds the systemd units, environment files and
// killall/uninstall scripts a test package installs with the cargoship test
// engine, in the places and shapes the real install puts them
// (docs/reference/engines.md 1.1 and 1.2). See testengine.Layout for where
// each goes.
package units

import "embed"

// FS holds k3s/* and rke2/*.
//
//go:embed k3s rke2
var FS embed.FS
