package v1alpha1

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The cross corpus (testdata/cross) holds inventories that load alone but
// not with the definition their "# distro:" line names; their "# want:"
// lines are what ParseClusterWithDistro reports, in the corpus's form.
var distroLine = regexp.MustCompile(`(?m)^# distro: (\S+)$`)

func TestCrossCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cross", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("the cross corpus holds %d files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := distroLine.FindSubmatch(data)
			if m == nil {
				t.Fatal("no '# distro:' line names the definition")
			}
			ds, _, err := LoadDistroFile(filepath.Join(filepath.Dir(f), string(m[1])))
			if err != nil {
				t.Fatal(err)
			}
			if _, fs, err := ParseCluster(f, data); err != nil {
				t.Fatalf("the inventory must load alone: %v\n%s", err, fs)
			}
			wants := readExpectations(t, data)
			if len(wants) == 0 {
				t.Fatal("states no '# want:' error")
			}
			fs := ParseClusterWithDistro(f, data, ds, "distro.yaml")
			for _, p := range compareFindings(wants, fs) {
				t.Error(p)
			}
			for _, x := range fs {
				if !strings.HasPrefix(x.Message, "with distro.yaml (spec.type "+ds.Spec.Type+"): ") {
					t.Errorf("%s does not name the definition it was checked against", x)
				}
			}
		})
	}
}

func TestParseClusterWithDistroNeedsBoth(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cross", "01-upstream-profile-and-registry-auth.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := ParseClusterWithDistro("c.yaml", data, nil, "none"); fs != nil {
		t.Errorf("no distro, yet %s", fs)
	}
	if fs := ParseClusterWithDistro("c.yaml", []byte("kind: [\n"), &Distro{}, "d"); fs != nil {
		t.Errorf("an inventory that does not decode is its own load's to report: %s", fs)
	}
}
