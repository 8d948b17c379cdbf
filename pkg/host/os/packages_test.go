package hostos

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/os/ostest"
)

// fakeRPM is an EL host whose rpm database changes when the install
// command runs, so plan, apply and a second apply can be checked in turn.
type fakeRPM struct {
	mu        sync.Mutex
	installed map[string]string // name -> rpmFormat line
	files     map[string]string // path -> rpmFormat line
	onInstall func(files []string) error
	installs  [][]string
}

// rpmHost implements host.Runner by looking at the arguments the configurer
// passed after the script.
type rpmHost struct{ f *fakeRPM }

func (h rpmHost) String() string { return "el9" }
func (h rpmHost) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return h.Sudo(ctx, cmd, opts...)
}
func (h rpmHost) Sudo(_ context.Context, cmd string, _ ...host.RunOption) (string, error) {
	f := h.f
	f.mu.Lock()
	defer f.mu.Unlock()
	args := strings.Fields(cmd)
	last := strings.Trim(args[len(args)-1], "'")
	switch {
	case strings.Contains(cmd, "command -v"):
		return "dnf\n", nil
	case strings.Contains(cmd, "rpm -qp"):
		return f.files[last] + "\n", nil
	case strings.Contains(cmd, "rpm -q "):
		if l, ok := f.installed[last]; ok {
			return l + "\n", nil
		}
		return "package " + last + " is not installed\n", nil
	case strings.HasPrefix(cmd, "dnf "):
		var files []string
		for _, a := range args {
			if strings.HasPrefix(a, "/") {
				files = append(files, a)
			}
		}
		f.installs = append(f.installs, files)
		return "", f.onInstall(files)
	}
	return "", &host.ExitError{Host: "el9", Cmd: cmd, Code: 127, Stderr: "unexpected"}
}

func TestPackagesPlanApplyIdempotent(t *testing.T) {
	ctx := context.Background()
	f := &fakeRPM{
		installed: map[string]string{"runc": "runc|0:1.2.0-1.el9|x86_64", "containerd.io": "containerd.io|0:2.2.1-1.el9|x86_64"},
		files: map[string]string{
			"/r/runc.rpm":       "runc|0:1.2.0-1.el9|x86_64",
			"/r/containerd.rpm": "containerd.io|0:2.2.2-1.el9|x86_64",
			"/r/kubelet.rpm":    "kubelet|0:1.35.3-150500.1.1|x86_64",
		},
	}
	f.onInstall = func(files []string) error {
		for _, file := range files {
			line := f.files[file]
			f.installed[strings.Split(line, "|")[0]] = line
		}
		return nil
	}
	step := Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/runc.rpm", "/r/containerd.rpm", "/r/kubelet.rpm"}}
	r := rpmHost{f}
	plan, err := step.Plan(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) != 2 || !strings.Contains(plan.Actions[0], "containerd.io 0:2.2.2-1.el9") || !strings.Contains(plan.Actions[0], "installed: 0:2.2.1-1.el9") || !strings.Contains(plan.Actions[1], "not installed") {
		t.Errorf("plan = %q", plan.Actions)
	}
	if len(f.installs) != 0 {
		t.Fatal("Plan installed something")
	}
	got, err := step.Apply(ctx, r)
	if err != nil || len(got.Actions) != 2 {
		t.Fatalf("apply = %+v %v", got, err)
	}
	if len(f.installs) != 1 || strings.Join(f.installs[0], " ") != "/r/containerd.rpm /r/kubelet.rpm" {
		t.Errorf("one transaction with the two pending files, got %q", f.installs)
	}
	again, err := step.Apply(ctx, r)
	if err != nil || again.Changed() || len(f.installs) != 1 {
		t.Errorf("second apply = %+v %v, installs %d", again, err, len(f.installs))
	}
}

// TestPackagesVerifiesAfterInstall: the exit code is not trusted either way.
func TestPackagesVerifiesAfterInstall(t *testing.T) {
	ctx := context.Background()
	mk := func(onInstall func(*fakeRPM) error) *fakeRPM {
		f := &fakeRPM{installed: map[string]string{}, files: map[string]string{"/r/a.rpm": "a|0:1.0-1|noarch"}}
		f.onInstall = func([]string) error { return onInstall(f) }
		return f
	}
	step := Packages{Configurer: EnterpriseLinux{}, Files: []string{"/r/a.rpm"}}
	// rpm exits 2 although the package ends up installed: a warning.
	partial := mk(func(f *fakeRPM) error {
		f.installed["a"] = "a|0:1.0-1|noarch"
		return &host.ExitError{Code: 2, Stderr: "package a-1.0-1.noarch is already installed"}
	})
	if c, err := step.Apply(ctx, rpmHost{partial}); err != nil || len(c.Warnings) != 1 {
		t.Errorf("partial success: %+v %v", c, err)
	}
	// exit 0 but nothing installed: an error.
	silent := mk(func(*fakeRPM) error { return nil })
	if _, err := step.Apply(ctx, rpmHost{silent}); err == nil || !strings.Contains(err.Error(), "left not installed") {
		t.Errorf("silent failure: %v", err)
	}
	failed := mk(func(*fakeRPM) error { return &host.ExitError{Code: 1, Stderr: "Failed dependencies"} })
	if _, err := step.Apply(ctx, rpmHost{failed}); err == nil || !strings.Contains(err.Error(), "Failed dependencies") {
		t.Errorf("failure: %v", err)
	}
}

func TestPackagesNoTool(t *testing.T) {
	f := (&ostest.Fake{}).On("command -v", "none\n")
	if _, err := (Packages{Configurer: Debian{}, Files: []string{"/a.deb"}}).Plan(context.Background(), f); err == nil {
		t.Error("a host without apt-get cannot install .deb files")
	}
	if c, err := (Packages{Configurer: Other{}}).Plan(context.Background(), f); err != nil || c.Changed() {
		t.Errorf("no files is nothing to do: %+v %v", c, err)
	}
}
