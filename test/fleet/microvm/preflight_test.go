package microvm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

func TestCheckToolsReportsEveryMissingToolAtOnce(t *testing.T) {
	have := map[string]bool{"ssh": true, "qemu-img": true}
	err := checkTools(func(name string) (string, error) {
		if have[name] {
			return "/usr/bin/" + name, nil
		}
		return "", errors.New("not found")
	})
	if err == nil {
		t.Fatal("checkTools passed with three tools missing")
	}
	msg := err.Error()
	for _, want := range []string{"3 tool(s) missing", "qemu-system-x86_64", "mkfs.vfat", "mcopy", "apt-get install qemu-system-x86 dosfstools mtools"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	for _, present := range []string{"qemu-utils", "openssh-client"} {
		if strings.Contains(msg, present) {
			t.Errorf("error names %s, whose tool is present: %s", present, msg)
		}
	}
	if err := checkTools(func(name string) (string, error) { return "/usr/bin/" + name, nil }); err != nil {
		t.Errorf("checkTools with every tool present: %v", err)
	}
}

// sysModules makes a /sys/module with the named modules loaded.
func sysModules(t *testing.T, names ...string) string {
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDetectAccel(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "kvm")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dev string
		modules   []string
		want      string
		reason    string
	}{
		{"no device", filepath.Join(t.TempDir(), "none"), []string{"kvm", "kvm_intel"}, AccelTCG, "cannot be opened"},
		{"intel", dev, []string{"kvm", "kvm_intel"}, AccelKVM, "kvm_intel"},
		{"amd", dev, []string{"kvm", "kvm_amd"}, AccelKVM, "kvm_amd"},
		{"pvm only", dev, []string{"kvm", "kvm_pvm"}, AccelTCG, "kvm_pvm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := detectAccel(c.dev, sysModules(t, c.modules...))
			if a.Name != c.want || !strings.Contains(a.Reason, c.reason) {
				t.Errorf("detectAccel = %+v, want %s with a reason naming %q", a, c.want, c.reason)
			}
		})
	}
}

func TestCheckFitNamesMemory(t *testing.T) {
	// two default guests: 2*(4096+128)+512 = 8960 MiB
	if err := checkFit("dev", 2, DefaultMemoryMiB, 8960); err != nil {
		t.Errorf("exact fit refused: %v", err)
	}
	err := checkFit("dev", 2, DefaultMemoryMiB, 8959)
	if err == nil {
		t.Fatal("a fleet one MiB too big was accepted")
	}
	for _, want := range []string{`fleet "dev"`, "-memory=4096", "need 8960 MiB", "MemAvailable is 8959 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// Importing the package registers the backend with test/fleet.
func TestRegistered(t *testing.T) {
	p, err := fleet.NewBackend("microvm", fleet.Options{StateDir: t.TempDir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*Provider); !ok {
		t.Errorf("NewBackend(microvm) = %T, want *microvm.Provider", p)
	}
	if _, ok := p.(fleet.Rebooter); !ok {
		t.Error("the microvm backend reboots its guests")
	}
}
