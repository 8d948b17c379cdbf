package firewall

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// builtinPublic is a zone file as firewalld ships it: a declaration,
// indentation, a multi-line description.
const builtinPublic = `<?xml version="1.0" encoding="utf-8"?>
<zone>
  <short>Public</short>
  <description>For use in public areas. You do not trust the other computers on networks
  to not harm your computer.</description>
  <service name="ssh"/>
  <service name="dhcpv6-client"/>
  <forward/>
</zone>
`

// writtenPublic is the same settings as firewalld writes them back after
// a change was made and undone: another order, other whitespace.
const writtenPublic = `<?xml version="1.0" encoding="utf-8"?>
<zone>
  <short>Public</short>
  <description>For use in public areas. You do not trust the other computers on networks to not harm your computer.</description>
  <service name="dhcpv6-client"/>
  <service name="ssh"/>
  <forward/>
</zone>
`

func TestCanonicalXMLComparesSettingsNotLayout(t *testing.T) {
	a, err := canonicalXML([]byte(builtinPublic))
	if err != nil {
		t.Fatal(err)
	}
	b, err := canonicalXML([]byte(writtenPublic))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("same settings compare different:\n%s\n%s", a, b)
	}
	withPort, err := canonicalXML([]byte(`<zone><short>Public</short><port protocol="tcp" port="8080"/></zone>`))
	if err != nil {
		t.Fatal(err)
	}
	if withPort == a {
		t.Error("a zone with an extra port compares equal")
	}
	if _, err := canonicalXML([]byte("<zone><a></zone>")); err == nil {
		t.Error("broken XML is not an error")
	}
}

// TestTidyRestoresOnlyZonesCargoshipAloneChanged: public holds its
// defaults again and goes back to them (firewall-cmd asked to, its backup
// removed); trusted keeps a source the admin added and is left with its
// backup; the backups of cargoship's deleted ipsets and service go, other
// files stay.
func TestTidyRestoresOnlyZonesCargoshipAloneChanged(t *testing.T) {
	etc, lib := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(lib, "zones/public.xml"), builtinPublic)
	write(filepath.Join(lib, "zones/trusted.xml"), `<zone target="ACCEPT"><short>Trusted</short></zone>`)
	write(filepath.Join(etc, "zones/public.xml"), writtenPublic)
	write(filepath.Join(etc, "zones/public.xml.old"), writtenPublic)
	write(filepath.Join(etc, "zones/trusted.xml"), `<zone target="ACCEPT"><short>Trusted</short><source address="192.0.2.7"/></zone>`)
	write(filepath.Join(etc, "zones/trusted.xml.old"), "admin's backup")
	write(filepath.Join(etc, "ipsets/k8s-nodes.xml.old"), "x")
	write(filepath.Join(etc, "ipsets/admin.xml.old"), "x")
	write(filepath.Join(etc, "services/cargoship.xml.old"), "x")

	stubs, err := hosttest.NewStubs(t.TempDir(), "firewall-cmd")
	if err != nil {
		t.Fatal(err)
	}
	fw := Firewalld{ConfigDir: etc, DefaultsDir: lib}
	p, err := fw.tidy(context.Background(), stubs.Runner(), []string{"public", "trusted", "internal"})
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := stubs.Calls()
	if want := [][]string{{"firewall-cmd", "--permanent", "--load-zone-defaults=public"}}; !reflect.DeepEqual(calls, want) {
		t.Errorf("firewall-cmd calls = %q, want %q", calls, want)
	}
	for _, gone := range []string{"zones/public.xml.old", "ipsets/k8s-nodes.xml.old", "services/cargoship.xml.old"} {
		if _, err := os.Stat(filepath.Join(etc, gone)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	for _, kept := range []string{"zones/trusted.xml", "zones/trusted.xml.old", "ipsets/admin.xml.old"} {
		if _, err := os.Stat(filepath.Join(etc, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	if len(p.Actions) != 4 {
		t.Errorf("tidy reported %d actions, want 4 (a zone, three backups): %+v", len(p.Actions), p.Actions)
	}
}
