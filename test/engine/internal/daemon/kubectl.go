package daemon

import (
	"errors"
	"os"
	"path"
	"path/filepath"

	"github.com/colonel-byte/cargoship/test/engine/internal/buildinfo"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// FindKubectl is the first kubectl on PATH that is not this binary (k3s
// installs kubectl as a symlink to itself).
func FindKubectl() (string, error) {
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "kubectl")
		real, err := filepath.EvalSymlinks(p)
		if err != nil || real == self {
			continue
		}
		if st, err := os.Stat(real); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("kubectl: the cargoship test engine runs the real kubectl, and none is on PATH (the test package must carry one, e.g. /usr/bin/kubectl)")
}

// linkKubectl gives rke2 its <data-dir>/bin/kubectl. rke2 unpacks its
// runtime image into data/<version>/bin and points bin at it; the test
// engine links the real kubectl there instead, unless the package already
// put a bin directory in place.
func linkKubectl(c Config) {
	if c.Flavor.Name != "rke2" {
		return
	}
	d := dataDir(c.DataDir)
	if st, err := os.Lstat(hostfs.Path(d.join("bin"))); err == nil && st.Mode()&os.ModeSymlink == 0 {
		return
	}
	kubectl, err := FindKubectl()
	if err != nil {
		logx.Warnf("%v; %s will be missing", err, d.join("bin", "kubectl"))
		return
	}
	abs, _ := filepath.Abs(kubectl)
	binDir := path.Join("data", buildinfo.Version, "bin")
	if err := hostfs.Symlink(abs, d.join(binDir, "kubectl")); err != nil {
		logx.Warnf("link kubectl: %v", err)
		return
	}
	if err := hostfs.Symlink(binDir, d.join("bin")); err != nil {
		logx.Warnf("link %s: %v", d.join("bin"), err)
	}
}
