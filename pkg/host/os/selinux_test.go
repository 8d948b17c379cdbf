package hostos

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host"
	"github.com/colonel-byte/cargoship/pkg/host/os/ostest"
)

// seHost is an enforcing EL host as its SELinux tools report it (output
// shapes of policycoreutils 3.x), changing state as commands run.
type seHost struct {
	mode       string
	modules    map[string]bool
	booleans   map[string]string
	fcontexts  [][3]string // spec, ftype, context, in listing order
	mislabeled map[string]int
	files      map[string]string
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
		files:      map[string]string{"/var/lib/rancher/rke2/rpm/rke2.pp": "policy-v1"},
	}
}

func (h *seHost) String() string { return "rocky9" }
func (h *seHost) Run(ctx context.Context, cmd string, opts ...host.RunOption) (string, error) {
	return h.Sudo(ctx, cmd, opts...)
}

func (h *seHost) Sudo(_ context.Context, cmd string, opts ...host.RunOption) (string, error) {
	w := ostest.Words(cmd)
	script, args := "", []string(nil)
	if len(w) >= 4 && w[0] == "sh" && w[1] == "-c" {
		script, args = w[2], w[4:]
	}
	switch {
	case strings.Contains(script, "getenforce"):
		return h.mode + "\n", nil
	case strings.Contains(script, "base64"):
		if c, ok := h.files[args[0]]; ok {
			return "present\n" + base64.StdEncoding.EncodeToString([]byte(c)) + "\n", nil
		}
		return "absent\n", nil
	case strings.Contains(script, "mktemp"):
		b, _ := io.ReadAll(host.Apply(opts).Stdin)
		h.files[args[0]] = string(b)
		return "", nil
	case strings.Contains(script, "restorecon -Rnv"):
		return fmt.Sprintf("%d\n", h.mislabeled[args[0]]), nil
	case strings.Contains(script, "restorecon -R"):
		h.ran = append(h.ran, "restorecon -R "+args[0])
		h.mislabeled[args[0]] = 0
		return "", nil
	case script != "":
		return "", fmt.Errorf("unexpected script %q", script)
	}
	switch strings.Join(w[:2], " ") {
	case "semodule -l":
		var names []string
		for m := range h.modules {
			names = append(names, m)
		}
		sort.Strings(names)
		return strings.Join(names, "\n") + "\n", nil
	case "sha256sum --":
		return fmt.Sprintf("%064x  %s\n", len(h.files[w[2]])*7919+int(h.files[w[2]][len(h.files[w[2]])-1]), w[2]), nil
	case "semodule -i":
		h.ran = append(h.ran, cmd)
		h.modules["rke2"] = true
		return "", nil
	case "getsebool --":
		var out strings.Builder
		for _, b := range w[2:] {
			v, ok := h.booleans[b]
			if !ok {
				return "", &host.ExitError{Code: 1, Stderr: "Error getting active value for " + b}
			}
			fmt.Fprintf(&out, "%s --> %s\n", b, v)
		}
		return out.String(), nil
	case "setsebool -P":
		h.ran = append(h.ran, cmd)
		for _, kv := range w[2:] {
			k, v, _ := strings.Cut(kv, "=")
			h.booleans[k] = map[string]string{"1": "on", "0": "off"}[v]
		}
		return "", nil
	case "semanage fcontext":
		if w[2] == "-l" {
			var out strings.Builder
			out.WriteString("SELinux fcontext                                   type               Context\n\n")
			for _, f := range h.fcontexts {
				fmt.Fprintf(&out, "%-50s %-18s %s\n", f[0], f[1], f[2])
			}
			return out.String(), nil
		}
		h.ran = append(h.ran, cmd)
		h.fcontexts = append(h.fcontexts, [3]string{w[5], "all files", "system_u:object_r:" + w[4] + ":s0"})
		return "", nil
	}
	return "", fmt.Errorf("unexpected command %q", cmd)
}

var rke2Policy = SELinuxPolicy{
	StateDir: "/var/lib/cargoship/selinux",
	Modules:  []SELinuxModule{{Name: "rke2", Path: "/var/lib/rancher/rke2/rpm/rke2.pp"}},
	Booleans: map[string]bool{"container_manage_cgroup": true, "virt_use_nfs": true},
	FileContexts: []SELinuxFileContext{
		{Path: "/var/lib/rancher(/.*)?", Type: "container_var_lib_t"},
		{Path: "/opt/cni(/.*)?", Type: "container_file_t"},
		{Path: "/var/lib/containers(/.*)?", Type: "container_var_lib_t"},
	},
}

func TestSELinuxPolicyPlanApplyIdempotent(t *testing.T) {
	ctx := context.Background()
	h := newSEHost()
	step := Enforcing{Configurer: EnterpriseLinux{}, Step: rke2Policy}
	plan, err := step.Plan(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"install SELinux module rke2 from /var/lib/rancher/rke2/rpm/rke2.pp",
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
	if _, err := step.Apply(ctx, h); err != nil {
		t.Fatal(err)
	}
	ran := strings.Join(h.ran, "\n")
	for _, w := range []string{
		"semodule -i /var/lib/rancher/rke2/rpm/rke2.pp",
		"setsebool -P container_manage_cgroup=1",
		"semanage fcontext -a -t container_var_lib_t '/var/lib/rancher(/.*)?'",
		"semanage fcontext -m -t container_file_t '/opt/cni(/.*)?'",
		"restorecon -R /var/lib/rancher",
		"restorecon -R /opt/cni",
	} {
		if !strings.Contains(ran, w) {
			t.Errorf("did not run %q; ran:\n%s", w, ran)
		}
	}
	if strings.Contains(ran, "virt_use_nfs") || strings.Contains(ran, "/var/lib/containers") {
		t.Errorf("touched what was already right:\n%s", ran)
	}
	n := len(h.ran)
	again, err := step.Apply(ctx, h)
	if err != nil || again.Changed() || len(h.ran) != n {
		t.Errorf("second apply = %+v %v, ran %q", again, err, h.ran[n:])
	}
	// A new module file is installed again; the old one was recorded.
	h.files["/var/lib/rancher/rke2/rpm/rke2.pp"] = "policy-v2"
	if c, err := step.Plan(ctx, h); err != nil || len(c.Actions) != 1 || !strings.HasPrefix(c.Actions[0], "update SELinux module rke2") {
		t.Errorf("changed module file: %+v %v", c, err)
	}
}

func TestSELinuxOnlyWhenEnforcing(t *testing.T) {
	for mode, warnings := range map[string]int{"Permissive": 1, "Disabled": 0} {
		h := newSEHost()
		h.mode = mode
		c, err := Enforcing{Configurer: EnterpriseLinux{}, Step: rke2Policy}.Apply(context.Background(), h)
		if err != nil || c.Changed() || len(c.Warnings) != warnings || len(h.ran) != 0 {
			t.Errorf("%s: %+v %v ran %q", mode, c, err, h.ran)
		}
	}
}

func TestSELinuxUnknownBoolean(t *testing.T) {
	p := SELinuxPolicy{Booleans: map[string]bool{"no_such_bool": true}}
	if _, err := p.Plan(context.Background(), newSEHost()); err == nil {
		t.Error("an unknown boolean should be an error")
	}
	bad := SELinuxPolicy{FileContexts: []SELinuxFileContext{{Path: "/x", Type: "bad type"}}}
	if _, err := bad.Plan(context.Background(), newSEHost()); err == nil {
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
