package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
	"github.com/colonel-byte/cargoship/test/fleet"
)

// playbook is the Ansible side: ansible.cfg, stage.yml and its templates.
//
//go:embed ansible
var playbook embed.FS

// ansible is a playbook directory ready to run against a fleet.
type ansible struct {
	dir      string
	strategy string
	profile  bool
}

// stageFile is one file the playbook copies, from the package's own
// extracted bytes to where cargoship places it.
type stageFile struct {
	Src     string `json:"src"`
	Dest    string `json:"dest"`
	Mode    string `json:"mode"`
	Profile string `json:"profile"` // "" for every host
}

// prepareAnsible writes the playbook, extracts the package's payload for
// the copy module and writes group_vars from the package: the playbook
// gets the same facts cargoship reads from it, once, as an Ansible user
// would keep them in group_vars.
func prepareAnsible(ctx context.Context, c config, pkgPath string) (*ansible, error) {
	a := &ansible{dir: filepath.Join(c.work, "ansible"), strategy: c.strategy, profile: c.profile}
	sub, err := fs.Sub(playbook, "ansible")
	if err != nil {
		return nil, err
	}
	if err := os.CopyFS(a.dir, sub); err != nil {
		return nil, fmt.Errorf("writing the playbook: %w", err)
	}
	p, err := pkgfile.OpenContext(ctx, pkgPath, pkgfile.OpenOptions{TmpDir: c.work})
	if err != nil {
		return nil, err
	}
	defer func() { _ = p.Close() }() // only removes the package's temp files under the work directory
	payload := filepath.Join(a.dir, "payload")
	if err := p.Extract(payload); err != nil {
		return nil, fmt.Errorf("extracting the package for Ansible: %w", err)
	}
	eng, err := engine.For(p.Distro.Spec.Type)
	if err != nil {
		return nil, err
	}
	var files []stageFile
	for _, e := range p.Entries() {
		dest := e.Target
		switch {
		case e.Kind == pkgfile.KindImages:
			dest = path.Join(eng.Paths().ImagesDir, path.Base(e.Name))
		case e.Kind == pkgfile.KindOS && (e.Selector == nil || e.Selector.Package != "binary"):
			continue // Debian hosts with no .deb in the package take the binary route
		case e.Kind != pkgfile.KindFiles && e.Kind != pkgfile.KindOS:
			continue
		case e.Executable:
			// The stage walk leaves executables beside their target; the
			// install phases rename them into place.
			dest = path.Join(path.Dir(e.Target), "."+path.Base(e.Target)+".cargoship-staged")
		}
		profile := ""
		if e.Selector != nil {
			profile = e.Selector.Profile
		}
		files = append(files, stageFile{
			Src: filepath.Join(payload, filepath.FromSlash(e.Name)), Dest: dest, Mode: e.Mode.String(),
			Profile: profile,
		})
	}
	cfg := p.Distro.Spec.Config.Engine.Config
	nw, err := eng.Network(cfg)
	if err != nil {
		return nil, err
	}
	ports := map[string]map[string][]string{}
	for _, role := range []string{"controller", "worker"} {
		ps, err := eng.Ports(role == "controller", cfg)
		if err != nil {
			return nil, err
		}
		ports[role] = map[string][]string{}
		for _, pt := range ps {
			ports[role][pt.Protocol] = append(ports[role][pt.Protocol], string(pt.Port))
		}
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	vars := map[string]any{
		"sysctls":       p.Distro.Spec.Config.OS.Sysctl,
		"modules":       hostos.DefaultModules,
		"stage_files":   files,
		"fw_cidrs":      append(append([]string{}, nw.PodCIDRs...), nw.ServiceCIDRs...),
		"fw_ports":      ports,
		"engine_config": cfg, // every key of the bench's config is server-only: workers get none
		"engine_dir":    path.Dir(eng.Paths().Config),
		"token":         hex.EncodeToString(token),
		"instance_id":   "ansible-" + strconv.Itoa(os.Getpid()),
	}
	b, err := json.MarshalIndent(vars, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(a.dir, "group_vars", "all.json"), b); err != nil {
		return nil, err
	}
	return a, nil
}

// writeInventory turns the fleet into an Ansible inventory: root with the
// fleet key, host keys checked against the fleet's known_hosts.
func (a *ansible) writeInventory(f *fleet.Fleet) error {
	var b strings.Builder
	for _, role := range []string{fleet.RoleController, fleet.RoleWorker} {
		fmt.Fprintf(&b, "[%s]\n", role)
		for _, h := range f.Role(role) {
			fmt.Fprintf(&b, "%s ansible_host=%s\n", h.Name, h.Address)
		}
	}
	cs := f.Role(fleet.RoleController)
	if len(cs) == 0 {
		return fmt.Errorf("fleet %s has no controller", f.Name)
	}
	fmt.Fprintf(&b, "\n[all:vars]\nansible_user=root\nansible_ssh_private_key_file=%s\n", f.KeyPath)
	fmt.Fprintf(&b, "ansible_ssh_common_args='-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes'\n", f.KnownHostsPath)
	fmt.Fprintf(&b, "loadbalancer=%s\n", cs[0].Address)
	return os.WriteFile(filepath.Join(a.dir, "inventory.ini"), []byte(b.String()), 0o644)
}

// recapLine is ansible-playbook's PLAY RECAP line for one host.
var recapLine = regexp.MustCompile(`^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// play runs the playbook once and returns its wall time and how many
// tasks reported a change, summed over hosts. Each run gets its own
// ControlPath directory: no SSH master survives from an earlier run, as
// cargoship too connects afresh every run.
func (a *ansible) play(ctx context.Context, name string) (time.Duration, int, error) {
	cp, err := os.MkdirTemp("", "cp")
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = os.RemoveAll(cp) }() // best effort: a leftover empty temp directory harms nothing
	logPath := filepath.Join(a.dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return 0, 0, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, "ansible-playbook", "-i", "inventory.ini", "stage.yml")
	cmd.Dir = a.dir
	cmd.Env = append(os.Environ(),
		"ANSIBLE_CONFIG="+filepath.Join(a.dir, "ansible.cfg"),
		"ANSIBLE_SSH_CONTROL_PATH_DIR="+cp,
		"ANSIBLE_STRATEGY="+a.strategy,
	)
	if a.profile {
		// Per-task times in the log; off by default, as it is not free.
		cmd.Env = append(cmd.Env, "ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks")
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	// The ControlPersist masters would outlive the fleet; stop them.
	_ = exec.Command("sh", "-c", `for s in "$1"/*; do [ -S "$s" ] && ssh -o ControlPath="$s" -O exit x 2>/dev/null; done; true`, "sh", cp).Run()
	if err != nil {
		return d, 0, fmt.Errorf("ansible-playbook: %w (log: %s)", err, logPath)
	}
	changed, err := recapChanged(logPath)
	return d, changed, err
}

// recapChanged sums changed= over the PLAY RECAP.
func recapChanged(logPath string) (int, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	total, hosts := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := recapLine.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[3])
			total += n
			hosts++
		}
	}
	if hosts == 0 {
		return 0, fmt.Errorf("no PLAY RECAP in %s", logPath)
	}
	return total, sc.Err()
}
