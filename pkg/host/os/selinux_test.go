package hostos

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// seHost is an enforcing EL host as its SELinux tools report it (output
// shapes of policycoreutils 3.x), changing state as commands run. Files
// (the module file, the state directory) are real, in a temp directory.
type seHost struct {
	mode       string
	modules    map[string]bool
	booleans   map[string]string
	fcontexts  [][3]string // spec, ftype, context, in listing order
	mislabeled map[string]int
	noSemanage bool
	ran        []string
}

func newSEHost() *seHost {
	return &seHost{
		mode:     "Enforcing",
		modules:  map[string]bool{"container": true, "virt": true},
		booleans: map[string]string{"container_manage_cgroup": "off", "virt_use_nfs": "on"},
		fcontexts: [][3]string{
			{"/var/lib/containers(/.*)?", "all files", "system_u:object_r:container_var_lib_t:s0"},
			{"/opt/cni(/.*)?", "all files", "system_u:object_r:usr_t:s0"},
			{"/var/run/flannel(/.*)?", "directory", "system_u:object_r:var_run_t:s0"},
		},
		mislabeled: map[string]int{"/var/lib/rancher": 12},
	}
}

// host answers the SELinux tools from the model and runs every other
// command (the file helpers) on this machine.
func (h *seHost) host() *hosttest.Fake {
	scriptArg := func(c hosttest.Call) string {
		_, args, _ := c.Script()
		return args[0]
	}
	return (&hosttest.Fake{Name: "rocky9", Else: &hosttest.Local{}}).
		Handle("semanage import", func(c hosttest.Call) (string, error) {
			_, lines, _ := c.Script()
			h.ran = append(h.ran, "semanage import: "+strings.Join(lines, "; "))
			for _, l := range lines {
				// as semanage's mkargv: words split at whitespace
				w := strings.Fields(l)
				switch {
				case len(w) == 4 && w[0] == "boolean" && w[1] == "-m":
					h.booleans[w[3]] = map[string]string{"--on": "on", "--off": "off"}[w[2]]
				case len(w) == 5 && w[0] == "fcontext" && w[2] == "-t":
					h.fcontexts = append(h.fcontexts, [3]string{w[4], "all files", "system_u:object_r:" + w[3] + ":s0"})
				default:
					return "", &host.ExitError{Code: 1, Stderr: "usage: " + l}
				}
			}
			return "", nil
		}).
		Handle("getenforce", func(hosttest.Call) (string, error) { return h.mode + "\n", nil }).
		Handle("command -v semanage", func(hosttest.Call) (string, error) {
			if h.noSemanage {
				return "semanage=no\n", nil
			}
			return "semanage=yes\n", nil
		}).
		Handle("restorecon -Rnv", func(c hosttest.Call) (string, error) {
			return fmt.Sprintf("%d\n", h.mislabeled[scriptArg(c)]), nil
		}).
		Handle(`restorecon -R "$1"`, func(c hosttest.Call) (string, error) {
			h.ran = append(h.ran, "restorecon -R "+scriptArg(c))
			h.mislabeled[scriptArg(c)] = 0
			return "", nil
		}).
		Handle("semodule -l", func(hosttest.Call) (string, error) {
			names := slices.Sorted(maps.Keys(h.modules))
			return strings.Join(names, "\n") + "\n", nil
		}).
		Handle("semodule -i", func(c hosttest.Call) (string, error) {
			h.ran = append(h.ran, c.Cmd)
			h.modules["rke2"] = true
			return "", nil
		}).
		Handle("getsebool ", func(c hosttest.Call) (string, error) {
			var out strings.Builder
			// as the real getsebool: every argument is a boolean's
			// name, "--" included
			for _, b := range c.Args()[1:] {
				v, ok := h.booleans[b]
				if !ok {
					return "", &host.ExitError{Code: 1, Stderr: "Error getting active value for " + b}
				}
				fmt.Fprintf(&out, "%s --> %s\n", b, v)
			}
			return out.String(), nil
		}).
		Handle("setsebool -P", func(c hosttest.Call) (string, error) {
			h.ran = append(h.ran, c.Cmd)
			for _, kv := range c.Args()[2:] {
				k, v, _ := strings.Cut(kv, "=")
				h.booleans[k] = map[string]string{"1": "on", "0": "off"}[v]
			}
			return "", nil
		}).
		Handle("semanage fcontext -l", func(hosttest.Call) (string, error) {
			var out strings.Builder
			out.WriteString("SELinux fcontext                                   type               Context\n\n")
			for _, f := range h.fcontexts {
				fmt.Fprintf(&out, "%-50s %-18s %s\n", f[0], f[1], f[2])
			}
			return out.String(), nil
		}).
		Handle("semanage fcontext", func(c hosttest.Call) (string, error) {
			w := c.Args()
			h.ran = append(h.ran, c.Cmd)
			h.fcontexts = append(h.fcontexts, [3]string{w[5], "all files", "system_u:object_r:" + w[4] + ":s0"})
			return "", nil
		})
}

// rke2Policy is rke2's policy with its module file in dir, holding
// "policy-v1".
func rke2Policy(t *testing.T) SELinuxPolicy {
	t.Helper()
	dir := t.TempDir()
	pp := filepath.Join(dir, "rke2.pp")
	if err := os.WriteFile(pp, []byte("policy-v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	return SELinuxPolicy{
		StateDir: filepath.Join(dir, "state"),
		Modules:  []SELinuxModule{{Name: "rke2", Path: pp}},
		Booleans: map[string]bool{"container_manage_cgroup": true, "virt_use_nfs": true},
		FileContexts: []SELinuxFileContext{
			{Path: "/var/lib/rancher(/.*)?", Type: "container_var_lib_t"},
			{Path: "/opt/cni(/.*)?", Type: "container_file_t"},
			{Path: "/var/lib/containers(/.*)?", Type: "container_var_lib_t"},
		},
	}
}

func TestSELinuxPolicyPlanApplyIdempotent(t *testing.T) {
	ctx := context.Background()
	h := newSEHost()
	r := h.host()
	policy := rke2Policy(t)
	pp := policy.Modules[0].Path
	step := SELinuxEnabled{Configurer: EnterpriseLinux{}, Step: policy}
	plan, err := step.Plan(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"install SELinux module rke2 from " + pp,
		"setsebool -P container_manage_cgroup=on (now off)",
		"semanage fcontext -a -t container_var_lib_t /var/lib/rancher(/.*)?",
		"restorecon -R /var/lib/rancher (12 files to relabel)",
		"semanage fcontext -m -t container_file_t /opt/cni(/.*)? (now usr_t)",
	}
	if strings.Join(plan.Actions, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant\n%s", strings.Join(plan.Actions, "\n"), strings.Join(want, "\n"))
	}
	if len(h.ran) != 0 {
		t.Fatalf("Plan changed the host: %q", h.ran)
	}
	if _, err := step.Apply(ctx, r); err != nil {
		t.Fatal(err)
	}
	ran := strings.Join(h.ran, "\n")
	for _, w := range []string{
		"semodule -i " + pp,
		"semanage import: boolean -m --on container_manage_cgroup; fcontext -a -t container_var_lib_t /var/lib/rancher(/.*)?; fcontext -m -t container_file_t /opt/cni(/.*)?",
		"restorecon -R /var/lib/rancher",
		"restorecon -R /opt/cni",
	} {
		if !strings.Contains(ran, w) {
			t.Errorf("did not run %q; ran:\n%s", w, ran)
		}
	}
	// Each commit rebuilds the policy: the module's, then one for the rest.
	if n := commits(h.ran); n != 2 {
		t.Errorf("%d policy commits, want 2 (semodule -i, semanage import):\n%s", n, ran)
	}
	if strings.Contains(ran, "virt_use_nfs") || strings.Contains(ran, "/var/lib/containers") {
		t.Errorf("touched what was already right:\n%s", ran)
	}
	n := len(h.ran)
	again, err := step.Apply(ctx, r)
	if err != nil || again.Changed() || len(h.ran) != n {
		t.Errorf("second apply = %+v %v, ran %q", again, err, h.ran[n:])
	}
	// A new module file is installed again; the old one was recorded.
	if err := os.WriteFile(pp, []byte("policy-v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := step.Plan(ctx, r); err != nil || len(c.Actions) != 1 || !strings.HasPrefix(c.Actions[0], "update SELinux module rke2") {
		t.Errorf("changed module file: %+v %v", c, err)
	}
}

// commits counts the commands that commit a policy transaction.
func commits(ran []string) int {
	n := 0
	for _, c := range ran {
		for _, p := range []string{"semodule -i", "setsebool -P", "semanage fcontext", "semanage import"} {
			if strings.HasPrefix(c, p) {
				n++
				break
			}
		}
	}
	return n
}

// Booleans alone are set with setsebool -P: a minimal EL host has no
// semanage, and with no file context nothing asked for it.
func TestSELinuxBooleansAloneNeedNoSemanage(t *testing.T) {
	h := newSEHost()
	h.noSemanage = true
	p := SELinuxPolicy{Booleans: map[string]bool{"container_manage_cgroup": true, "virt_use_nfs": false}}
	if _, err := p.Apply(context.Background(), h.host()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"setsebool -P container_manage_cgroup=1 virt_use_nfs=0"}; !slices.Equal(h.ran, want) {
		t.Errorf("ran %q, want %q", h.ran, want)
	}
	if h.booleans["container_manage_cgroup"] != "on" || h.booleans["virt_use_nfs"] != "off" {
		t.Errorf("booleans = %v", h.booleans)
	}
}

// A file context semanage import would misread (a quote in the pattern)
// is set with its own semanage call.
func TestSELinuxQuotedContextIsNotImported(t *testing.T) {
	h := newSEHost()
	p := SELinuxPolicy{FileContexts: []SELinuxFileContext{{Path: "/opt/it's(/.*)?", Type: "container_file_t"}}}
	if _, err := p.Apply(context.Background(), h.host()); err != nil {
		t.Fatal(err)
	}
	if len(h.ran) == 0 || !strings.HasPrefix(h.ran[0], "semanage fcontext -a -t container_file_t") {
		t.Errorf("ran %q", h.ran)
	}
}

// A permissive host gets the policy and the labels as an enforcing one
// does: switched to enforcing later, it must already be right. Only a
// disabled host is left alone.
func TestSELinuxWhenEnabled(t *testing.T) {
	for mode, changes := range map[string]bool{"Enforcing": true, "Permissive": true, "Disabled": false} {
		h := newSEHost()
		h.mode = mode
		c, err := SELinuxEnabled{Configurer: EnterpriseLinux{}, Step: rke2Policy(t)}.Apply(context.Background(), h.host())
		if err != nil || c.Changed() != changes || (len(h.ran) > 0) != changes {
			t.Errorf("%s: %+v %v ran %q", mode, c, err, h.ran)
		}
	}
}

// A minimal EL host has no semanage: the plan says which package brings
// it, before any module or boolean is touched.
func TestSELinuxNoSemanage(t *testing.T) {
	h := newSEHost()
	h.noSemanage = true
	_, err := SELinuxEnabled{Configurer: EnterpriseLinux{}, Step: rke2Policy(t)}.Apply(context.Background(), h.host())
	if err == nil || !strings.Contains(err.Error(), "policycoreutils-python-utils") {
		t.Errorf("err = %v, want one naming policycoreutils-python-utils", err)
	}
	if len(h.ran) != 0 {
		t.Errorf("changed the host before failing: %q", h.ran)
	}
}

func TestSELinuxUnknownBoolean(t *testing.T) {
	p := SELinuxPolicy{Booleans: map[string]bool{"no_such_bool": true}}
	if _, err := p.Plan(context.Background(), newSEHost().host()); err == nil {
		t.Error("an unknown boolean should be an error")
	}
	bad := SELinuxPolicy{FileContexts: []SELinuxFileContext{{Path: "/x", Type: "bad type"}}}
	if _, err := bad.Plan(context.Background(), newSEHost().host()); err == nil {
		t.Error("a bad type should be refused")
	}
}

func TestFcontextBase(t *testing.T) {
	for spec, want := range map[string]string{
		"/var/lib/rancher(/.*)?":                           "/var/lib/rancher",
		"/usr/local/s?bin/k3s":                             "/usr/local",
		"/var/lib/rancher/k3s/data/[^/]+/bin/containerd.*": "/var/lib/rancher/k3s/data",
		"/usr/bin/k3s":                                     "/usr/bin/k3s",
		"/(.*)?":                                           "",
		"/var/lib/rancher/k3s/agent/containerd/[^/]*/snapshots": "/var/lib/rancher/k3s/agent/containerd",
	} {
		if got := FcontextBase(spec); got != want {
			t.Errorf("FcontextBase(%q) = %q, want %q", spec, got, want)
		}
	}
}

// A dry run uploads nothing, so a module file is not on a fresh host yet:
// the plan reads the checksum the upload will have instead of failing.
func TestSELinuxPlanBeforeTheUpload(t *testing.T) {
	policy := rke2Policy(t)
	m := &policy.Modules[0]
	m.Path = filepath.Join(t.TempDir(), "not-uploaded", "rke2.pp")
	plan, err := SELinuxEnabled{Configurer: EnterpriseLinux{}, Step: policy}.Plan(context.Background(), newSEHost().host())
	if err == nil {
		t.Fatalf("a missing module with no checksum to plan from: %+v", plan)
	}
	m.SHA256 = "4f8c0a1e"
	plan, err = SELinuxEnabled{Configurer: EnterpriseLinux{}, Step: policy}.Plan(context.Background(), newSEHost().host())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Actions) == 0 || plan.Actions[0] != "install SELinux module rke2 from "+m.Path {
		t.Errorf("plan: %q", plan.Actions)
	}
}

// The boolean names reach getsebool as its arguments, with no "--",
// which getsebool would take for a boolean.
func TestSELinuxBooleanNames(t *testing.T) {
	for _, ok := range []string{"virt_use_nfs", "a.b-c"} {
		if err := (SELinuxPolicy{Booleans: map[string]bool{ok: true}}).validate(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"--", "-P", "a b", ""} {
		if err := (SELinuxPolicy{Booleans: map[string]bool{bad: true}}).validate(); err == nil {
			t.Errorf("%q passed as a boolean name", bad)
		}
	}
}
