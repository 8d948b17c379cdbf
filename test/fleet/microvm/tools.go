package microvm

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// tool is a program the backend runs on this machine.
type tool struct {
	name   string // what exec looks up on PATH
	debPkg string // the Debian package that provides it
	why    string
}

// hostTools are the programs a bring-up runs. None of them needs root.
var hostTools = []tool{
	{"qemu-system-x86_64", "qemu-system-x86", "runs the guests"},
	{"qemu-img", "qemu-utils", "makes each guest's copy-on-write overlay"},
	{"mkfs.vfat", "dosfstools", "makes each guest's first-boot seed volume"},
	{"mcopy", "mtools", "writes the seed volume without mounting it"},
	{"ssh", "openssh-client", "dev:vmShell logs in with it"},
}

// checkTools reports every missing tool at once, with the packages that
// provide them, so one apt-get fixes a machine instead of one per attempt.
func checkTools(lookPath func(string) (string, error)) error {
	var missing, pkgs []string
	for _, t := range hostTools {
		if _, err := lookPath(t.name); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s; Debian package %s)", t.name, t.why, t.debPkg))
			if !slices.Contains(pkgs, t.debPkg) {
				pkgs = append(pkgs, t.debPkg)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("microvm backend: %d tool(s) missing: %s; on Debian: apt-get install %s",
		len(missing), strings.Join(missing, ", "), strings.Join(pkgs, " "))
}

// CheckTools is checkTools against this machine's PATH.
func CheckTools() error { return checkTools(exec.LookPath) }
