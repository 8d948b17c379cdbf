package hostos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// fixtures lists every file in testdata/os-release (the verbatim files of
// docs/reference/hosts.md §1.4) with what detection must make of it.
var fixtures = map[string]struct {
	id, version, major, pretty, family, route string
	immutable                                 bool
}{
	"rhel-8.10":                        {"rhel", "8.10", "8", "Red Hat Enterprise Linux 8.10 (Ootpa)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"rhel-9.6":                         {"rhel", "9.6", "9", "Red Hat Enterprise Linux 9.6 (Plow)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"rhel-10.0":                        {"rhel", "10.0", "10", "Red Hat Enterprise Linux 10.0 (Coughlan)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"rocky-linux-9.5":                  {"rocky", "9.5", "9", "Rocky Linux 9.5 (Blue Onyx)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"rocky-linux-10.0":                 {"rocky", "10.0", "10", "Rocky Linux 10.0 (Red Quartz)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"almalinux-9.6":                    {"almalinux", "9.6", "9", "AlmaLinux 9.6 (Sage Margay)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"almalinux-10.0":                   {"almalinux", "10.0", "10", "AlmaLinux 10.0 (Purple Lion)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"centos-stream-9":                  {"centos", "9", "9", "CentOS Stream 9", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"centos-stream-10":                 {"centos", "10", "10", "CentOS Stream 10", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"oracle-linux-9.5":                 {"ol", "9.5", "9", "Oracle Linux Server 9.5", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"fedora-41-container":              {"fedora", "41", "41", "Fedora Linux 41 (Container Image)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"fedora-42":                        {"fedora", "42", "42", "Fedora Linux 42 (Forty Two)", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"fedora-coreos-40":                 {"fedora", "40", "40", "Fedora CoreOS 40", v1alpha1.FamilyOther, v1alpha1.RouteBinary, true},
	"amazon-linux-2":                   {"amzn", "2", "2", "Amazon Linux 2", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"amazon-linux-2023":                {"amzn", "2023", "2023", "Amazon Linux 2023", v1alpha1.FamilyEnterpriseLinux, v1alpha1.RouteRPM, false},
	"debian-12-bookworm":               {"debian", "12", "12", "Debian GNU/Linux 12 (bookworm)", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"debian-13-trixie":                 {"debian", "13", "13", "Debian GNU/Linux 13 (trixie)", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"debian-testing-sid":               {"debian", "", "", "Debian GNU/Linux bookworm/sid", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"ubuntu-22.04-ga":                  {"ubuntu", "22.04", "22", "Ubuntu 22.04 LTS", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"ubuntu-24.04-ga":                  {"ubuntu", "24.04", "24", "Ubuntu 24.04 LTS", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"ubuntu-26.04":                     {"ubuntu", "26.04", "26", "Ubuntu 26.04 LTS", v1alpha1.FamilyDebian, v1alpha1.RouteAPT, false},
	"sles-15-sp6":                      {"sles", "15.6", "15", "SUSE Linux Enterprise Server 15 SP6", v1alpha1.FamilySUSE, v1alpha1.RouteBinary, false},
	"sles-15-sp7":                      {"sles", "15.7", "15", "SUSE Linux Enterprise Server 15 SP7", v1alpha1.FamilySUSE, v1alpha1.RouteBinary, false},
	"opensuse-leap-15.6":               {"opensuse-leap", "15.6", "15", "openSUSE Leap 15.6", v1alpha1.FamilySUSE, v1alpha1.RouteBinary, false},
	"opensuse-tumbleweed":              {"opensuse-tumbleweed", "20240112", "20240112", "openSUSE Tumbleweed", v1alpha1.FamilySUSE, v1alpha1.RouteBinary, false},
	"alpine-3.20.7":                    {"alpine", "3.20.7", "3", "Alpine Linux v3.20", v1alpha1.FamilyAlpine, v1alpha1.RouteBinary, false},
	"alpine-3.21.4":                    {"alpine", "3.21.4", "3", "Alpine Linux v3.21", v1alpha1.FamilyAlpine, v1alpha1.RouteBinary, false},
	"alpine-3.22.1":                    {"alpine", "3.22.1", "3", "Alpine Linux v3.22", v1alpha1.FamilyAlpine, v1alpha1.RouteBinary, false},
	"alpine-3.23.2":                    {"alpine", "3.23.2", "3", "Alpine Linux v3.23", v1alpha1.FamilyAlpine, v1alpha1.RouteBinary, false},
	"flatcar-container-linux-4459.0.0": {"flatcar", "4459.0.0", "4459", "Flatcar Container Linux by Kinvolk 4459.0.0 (Oklo)", v1alpha1.FamilyOther, v1alpha1.RouteBinary, false},
	"arch-linux":                       {"arch", "", "", "Arch Linux", v1alpha1.FamilyOther, v1alpha1.RouteBinary, false},
	"arch-linux-docker-image":          {"arch", "TEMPLATE_VERSION_ID", "TEMPLATE_VERSION_ID", "Arch Linux", v1alpha1.FamilyOther, v1alpha1.RouteBinary, false},
}

func TestFixturesAllListed(t *testing.T) {
	entries, err := os.ReadDir("testdata/os-release")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(fixtures) {
		t.Errorf("%d fixture files, %d expectations", len(entries), len(fixtures))
	}
	for _, e := range entries {
		if _, ok := fixtures[e.Name()]; !ok {
			t.Errorf("testdata/os-release/%s has no expectation", e.Name())
		}
	}
}

func TestDetectFixtures(t *testing.T) {
	for name, want := range fixtures {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/os-release", name))
			if err != nil {
				t.Fatal(err)
			}
			rel, err := ParseOSRelease(data)
			if err != nil {
				t.Fatalf("ParseOSRelease: %v", err)
			}
			if rel.ID != want.id || rel.VersionID != want.version || rel.PrettyName != want.pretty {
				t.Errorf("got ID=%q VERSION_ID=%q PRETTY_NAME=%q, want %q %q %q", rel.ID, rel.VersionID, rel.PrettyName, want.id, want.version, want.pretty)
			}
			o := Detect(rel)
			if o.Family != want.family || o.Route() != want.route || o.Immutable != want.immutable || o.Major() != want.major {
				t.Errorf("got family=%s route=%s immutable=%v major=%q, want %s %s %v %q", o.Family, o.Route(), o.Immutable, o.Major(), want.family, want.route, want.immutable, want.major)
			}
		})
	}
}

// TestParseFields checks values the fixtures quote in every way they do.
func TestParseFields(t *testing.T) {
	read := func(name string) Release {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata/os-release", name))
		if err != nil {
			t.Fatal(err)
		}
		rel, err := ParseOSRelease(data)
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}
	for _, c := range []struct{ file, key, want string }{
		{"rhel-8.10", "REDHAT_BUGZILLA_PRODUCT_VERSION", "8.10"}, // bare among quoted
		{"rhel-8.10", "ANSI_COLOR", "0;31"},                      // ';' inside quotes
		{"almalinux-9.6", "SUPPORT_END", "2032-06-01"},           // unterminated last line
		{"fedora-41-container", "VERSION_CODENAME", ""},          // empty quoted
		{"fedora-41-container", "VARIANT_ID", "container"},       // unterminated last line
		{"opensuse-tumbleweed", "VERSION", ""},                   // only in a comment
		{"flatcar-container-linux-4459.0.0", "SYSEXT_LEVEL", "1.0"},
		{"amazon-linux-2023", "PLATFORM_ID", "platform:al2023"},
	} {
		if got := read(c.file).Fields[c.key]; got != c.want {
			t.Errorf("%s %s = %q, want %q", c.file, c.key, got, c.want)
		}
	}
	if got := read("opensuse-tumbleweed").IDLike; strings.Join(got, ",") != "opensuse,suse" {
		t.Errorf("Tumbleweed ID_LIKE = %q", got)
	}
}

func TestParseQuoting(t *testing.T) {
	rel, err := ParseOSRelease([]byte("ID=x\r\n" +
		"OSTREE_VERSION='41.20241109.3.0'\n" + // single quotes, FCOS 41
		`ESC="a \"b\" \$c \\d \` + "`e`" + `"` + "\n" +
		`BARE=a\ b` + "\n" +
		`MIX="a"'b'c` + "\n" +
		"  # indented comment\n\n" +
		"TRAIL=\"v\"   # comment\n"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"ID": "x", "OSTREE_VERSION": "41.20241109.3.0", "ESC": "a \"b\" $c \\d `e`",
		"BARE": "a b", "MIX": "abc", "TRAIL": "v",
	} {
		if got := rel.Fields[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if rel.PrettyName != "Linux" {
		t.Errorf("PRETTY_NAME default = %q, want Linux", rel.PrettyName)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"",                   // nothing at all
		"# only a comment\n", // nothing at all
		"ID=\"rhel\nX=1\n",   // unterminated double quote
		"ID='rhel\n",         // unterminated single quote
		"NAME=Red Hat\n",     // unquoted space
		"ID=a;reboot\n",      // shell operator
		"just words\n",       // no '='
		"1ID=x\n",            // bad key
		"ID=$(id)\n",         // expansion
	} {
		if _, err := ParseOSRelease([]byte(in)); err == nil {
			t.Errorf("ParseOSRelease(%q) succeeded", in)
		}
	}
	_, err := ParseOSRelease([]byte("ID=x\nbad line\nY=\"z\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("errors should name every bad line: %v", err)
	}
}

func TestDetectFallbacks(t *testing.T) {
	for _, c := range []struct{ in, family string }{
		{"ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", v1alpha1.FamilyDebian},
		{"ID=eurolinux\nID_LIKE=\"rhel fedora centos\"\n", v1alpha1.FamilyEnterpriseLinux},
		{"ID=someel\nPLATFORM_ID=\"platform:el9\"\nID_LIKE=debian\n", v1alpha1.FamilyEnterpriseLinux},
		{"ID=postmarketos\nID_LIKE=alpine\n", v1alpha1.FamilyAlpine},
		{"ID=kairos\nID_LIKE=\"coreos fedora\"\n", v1alpha1.FamilyOther},
		{"ID=opensuse-microos\nID_LIKE=\"suse opensuse opensuse-tumbleweed\"\n", v1alpha1.FamilySUSE},
		{"NAME=Mystery\n", v1alpha1.FamilyOther},
	} {
		rel, err := ParseOSRelease([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := Detect(rel).Family; got != c.family {
			t.Errorf("%q: family %s, want %s", c.in, got, c.family)
		}
	}
}

// TestReadReleaseLocal reads this machine's os-release through a real shell
// and compares it with reading the file directly.
func TestReadReleaseLocal(t *testing.T) {
	path := "/etc/os-release"
	data, err := os.ReadFile(path)
	if err != nil {
		if data, err = os.ReadFile("/usr/lib/os-release"); err != nil {
			t.Skip("this machine has no os-release")
		}
	}
	want, err := ParseOSRelease(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadRelease(context.Background(), &hosttest.Local{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != want.ID || got.VersionID != want.VersionID || got.PrettyName != want.PrettyName || len(got.Fields) != len(want.Fields) {
		t.Errorf("ReadRelease = %+v, want %+v", got, want)
	}
}

func TestReadReleaseMissing(t *testing.T) {
	f := (&hosttest.Fake{}).On("os-release", "none\n")
	if _, err := ReadRelease(context.Background(), f); err == nil {
		t.Error("no os-release should be an error")
	}
}
