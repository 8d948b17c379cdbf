package testengine

import (
	"fmt"
	"io/fs"

	"github.com/colonel-byte/cargoship/test/engine/units"
)

// Sources of files that do not come from the units package.
const (
	// SourceBinary is the binary Build made.
	SourceBinary = "<binary>"
	// SourceKubectl is a real kubectl binary the test supplies (the test
	// engine runs it; it has none of its own).
	SourceKubectl = "<kubectl>"
)

// Roles a file is for.
const (
	RoleAll    = "all"
	RoleServer = "server"
	RoleAgent  = "agent"
)

// File is one file of a test package: what it is, where it goes, its mode
// and which nodes need it.
type File struct {
	// Source is a path in units.FS, SourceBinary or SourceKubectl.
	Source string
	Target string
	Mode   fs.FileMode
	Role   string
}

// Layout is where a test package puts the test engine and its companions on a
// host, the places the real install uses: k3s as install.sh lays it out
// (docs/reference/engines.md 1.1), rke2 as its tarball unpacks under
// /usr/local (docs/reference/engines.md 1.2). The real kubectl goes to
// /usr/bin/kubectl for k3s ("k3s kubectl" runs the first kubectl on PATH that
// is not k3s itself) and to /var/lib/rancher/rke2/bin/kubectl for rke2.
func Layout(engine string) ([]File, error) {
	switch engine {
	case "k3s":
		return []File{
			{SourceBinary, "/usr/local/bin/k3s", 0o755, RoleAll},
			{SourceKubectl, "/usr/bin/kubectl", 0o755, RoleAll},
			{"k3s/k3s-killall.sh", "/usr/local/bin/k3s-killall.sh", 0o755, RoleAll},
			{"k3s/k3s.service", "/etc/systemd/system/k3s.service", 0o644, RoleServer},
			{"k3s/k3s-uninstall.sh", "/usr/local/bin/k3s-uninstall.sh", 0o755, RoleServer},
			{"k3s/k3s-agent.service", "/etc/systemd/system/k3s-agent.service", 0o644, RoleAgent},
			{"k3s/k3s-agent-uninstall.sh", "/usr/local/bin/k3s-agent-uninstall.sh", 0o755, RoleAgent},
		}, nil
	case "rke2":
		return []File{
			{SourceBinary, "/usr/local/bin/rke2", 0o755, RoleAll},
			{SourceKubectl, "/var/lib/rancher/rke2/bin/kubectl", 0o755, RoleAll},
			{"rke2/rke2-killall.sh", "/usr/local/bin/rke2-killall.sh", 0o755, RoleAll},
			{"rke2/rke2-uninstall.sh", "/usr/local/bin/rke2-uninstall.sh", 0o755, RoleAll},
			{"rke2/rke2-server.service", "/usr/local/lib/systemd/system/rke2-server.service", 0o644, RoleAll},
			{"rke2/rke2-server.env", "/usr/local/lib/systemd/system/rke2-server.env", 0o644, RoleAll},
			{"rke2/rke2-agent.service", "/usr/local/lib/systemd/system/rke2-agent.service", 0o644, RoleAll},
			{"rke2/rke2-agent.env", "/usr/local/lib/systemd/system/rke2-agent.env", 0o644, RoleAll},
		}, nil
	}
	return nil, fmt.Errorf("engine %q: want k3s or rke2", engine)
}

// Unit reads one file of units.FS.
func Unit(source string) ([]byte, error) { return fs.ReadFile(units.FS, source) }
