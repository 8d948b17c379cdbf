package hostos

import (
	"context"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// fakeRPM is an EL host whose rpm database changes when the install
// command runs, so plan, apply and a second apply can be checked in turn.
type fakeRPM struct {
	installed map[string]string // name -> rpmFormat line
	files     map[string]string // path -> rpmFormat line
	onInstall func(files []string) error
	installs  [][]string
	// resolveOut is what dnf --assumeno prints; gpgcheck the
	// localpkg_gpgcheck value; imported the keys rpm --import got.
	resolveOut string
	resolves   int
	gpgcheck   string
	imported   []string
}

// host answers the configurer's commands from the model, by the arguments
// passed after each script; anything else fails.
func (f *fakeRPM) host() *hosttest.Fake {
	last := func(c hosttest.Call) string { a := c.Args(); return a[len(a)-1] }
	return (&hosttest.Fake{Name: "el9", Strict: true}).
		On("command -v", "dnf\n").
		Handle("localpkg_gpgcheck", func(hosttest.Call) (string, error) { return "localpkg_gpgcheck=" + f.gpgcheck + "\n", nil }).
		Handle("rpm --import", func(c hosttest.Call) (string, error) {
			f.imported = append(f.imported, c.Args()[4:]...)
			return "", nil
		}).
		Handle("rpm -K", func(c hosttest.Call) (string, error) {
			var out strings.Builder
			for _, file := range c.Args()[4:] {
				verdict := "ok\tdigests signatures OK"
				if len(f.imported) == 0 {
					verdict = "bad\tdigests SIGNATURES NOT OK"
				}
				out.WriteString(file + "\t" + verdict + "\n")
			}
			return out.String(), nil
		}).
		Handle("--assumeno", func(c hosttest.Call) (string, error) {
			f.resolves++
			return f.resolveOut + "\ncargoship-exit=1\n", nil
		}).
		Handle("rpm -qp", func(c hosttest.Call) (string, error) { return f.files[last(c)] + "\n", nil }).
		Handle("rpm -q ", func(c hosttest.Call) (string, error) {
			if l, ok := f.installed[last(c)]; ok {
				return l + "\n", nil
			}
			return "package " + last(c) + " is not installed\n", nil
		}).
		Handle("dnf ", func(c hosttest.Call) (string, error) {
			var files []string
			for _, a := range c.Args() {
				if strings.HasPrefix(a, "/") {
					files = append(files, a)
				}
			}
			f.installs = append(f.installs, files)
			return "", f.onInstall(files)
		})
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
	r := f.host()
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
	if c, err := step.Apply(ctx, partial.host()); err != nil || len(c.Warnings) != 1 {
		t.Errorf("partial success: %+v %v", c, err)
	}
	// exit 0 but nothing installed: an error.
	silent := mk(func(*fakeRPM) error { return nil })
	if _, err := step.Apply(ctx, silent.host()); err == nil || !strings.Contains(err.Error(), "left not installed") {
		t.Errorf("silent failure: %v", err)
	}
	failed := mk(func(*fakeRPM) error { return &host.ExitError{Code: 1, Stderr: "Failed dependencies"} })
	if _, err := step.Apply(ctx, failed.host()); err == nil || !strings.Contains(err.Error(), "Failed dependencies") {
		t.Errorf("failure: %v", err)
	}
}

func TestPackagesNoTool(t *testing.T) {
	f := (&hosttest.Fake{}).On("command -v", "none\n")
	if _, err := (Packages{Configurer: Debian{}, Files: []string{"/a.deb"}}).Plan(context.Background(), f); err == nil {
		t.Error("a host without apt-get cannot install .deb files")
	}
	if c, err := (Packages{Configurer: Other{}}).Plan(context.Background(), f); err != nil || c.Changed() {
		t.Errorf("no files is nothing to do: %+v %v", c, err)
	}
}
