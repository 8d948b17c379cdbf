package v1alpha1

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The HA corpus (testdata/ha) holds inventories for the static HA check,
// each with the definition its "# distro:" line names (*.distro.yaml).
// good-*.yaml must give no finding at all; NN-*.yaml are broken for the
// one rule their "# rule:" line names. Expectations are "# want:" and
// "# warn:" lines, in the corpus's form, in the inventory for findings
// located there and in the definition for findings about its fields.
var ruleLine = regexp.MustCompile(`(?m)^# rule: (\S+)$`)

const haDir = "testdata/ha"

// haCase is one inventory of the HA corpus and its definition.
type haCase struct {
	file, distroFile   string
	data, distroData   []byte
	distro             *Distro
	rule               string
	clusterW, distroWs []expectation
}

func loadHACase(t *testing.T, file string) haCase {
	t.Helper()
	hc := haCase{file: file}
	var err error
	if hc.data, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	m := distroLine.FindSubmatch(hc.data)
	if m == nil {
		t.Fatal("no '# distro:' line names the definition")
	}
	hc.distroFile = filepath.Join(haDir, string(m[1]))
	if hc.distroData, err = os.ReadFile(hc.distroFile); err != nil {
		t.Fatal(err)
	}
	ds, fs, err := ParseDistro(hc.distroFile, hc.distroData)
	if err != nil || len(fs) > 0 {
		t.Fatalf("the definition must load without a finding: %v\n%s", err, fs)
	}
	hc.distro = ds
	if r := ruleLine.FindSubmatch(hc.data); r != nil {
		hc.rule = string(r[1])
	}
	hc.clusterW = readExpectations(t, hc.data)
	hc.distroWs = readExpectations(t, hc.distroData)
	return hc
}

// haFindings is what validate (and apply's preflight) report for the
// pair: the inventory's own findings and those with the definition.
func haFindings(hc haCase, rules []haRule) Findings {
	_, fs, _ := parseCluster(hc.file, hc.data, rules)
	return append(fs, parseClusterWithDistro(hc.file, hc.data, hc.distro, "distro.yaml", rules)...)
}

func without(rules []haRule, name string) []haRule {
	return slices.DeleteFunc(slices.Clone(rules), func(r haRule) bool { return r.name == name })
}

func haCaseFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(haDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := slices.DeleteFunc(all, func(f string) bool { return strings.HasSuffix(f, ".distro.yaml") })
	if len(files) < len(haRules)+1 {
		t.Fatalf("the HA corpus holds %d inventories", len(files))
	}
	return files
}

// TestHACorpus: every broken case gives exactly its findings, and passes
// once its rule is left out, so each rule is what catches it; every rule
// has a case; the good inventories give nothing.
func TestHACorpus(t *testing.T) {
	caseName := regexp.MustCompile(`^(good-[a-z0-9-]+|\d\d-[a-z0-9-]+)\.yaml$`)
	covered := map[string]bool{}
	goods := 0
	for _, f := range haCaseFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if !caseName.MatchString(filepath.Base(f)) {
				t.Fatal("name HA cases good-what.yaml or NN-what-is-wrong.yaml")
			}
			hc := loadHACase(t, f)
			good := strings.HasPrefix(filepath.Base(f), "good-")
			switch {
			case good && (hc.rule != "" || len(hc.clusterW)+len(hc.distroWs) > 0):
				t.Fatal("a good inventory names no rule and expects no finding")
			case good:
				goods++
			case !slices.ContainsFunc(haRules, func(r haRule) bool { return r.name == hc.rule }):
				t.Fatalf("'# rule: %s' names no rule of haRules", hc.rule)
			case len(hc.clusterW)+len(hc.distroWs) == 0:
				t.Fatal("states no '# want:' or '# warn:' line")
			}
			fs := haFindings(hc, haRules)
			var inCluster, inDistro Findings
			for _, x := range fs {
				switch x.File {
				case hc.file:
					inCluster = append(inCluster, x)
				case hc.distroFile:
					inDistro = append(inDistro, x)
				default:
					t.Errorf("a finding in neither document: %s", x)
				}
			}
			for _, p := range compareFindings(hc.clusterW, inCluster) {
				t.Error(p)
			}
			for _, p := range compareFindings(hc.distroWs, inDistro) {
				t.Errorf("%s: %s", hc.distroFile, p)
			}
			if good {
				return
			}
			covered[hc.rule] = true
			if rest := haFindings(hc, without(haRules, hc.rule)); len(rest) > 0 {
				t.Errorf("with rule %s left out the case still fails:\n%s", hc.rule, rest)
			}
		})
	}
	for _, r := range haRules {
		if !covered[r.name] {
			t.Errorf("rule %s has no broken case in %s", r.name, haDir)
		}
	}
	if goods == 0 {
		t.Errorf("%s holds no good inventory", haDir)
	}
}

// TestStrictMakesEvenControllersAnError: the even count is a warning that
// a strict run refuses.
func TestStrictMakesEvenControllersAnError(t *testing.T) {
	hc := loadHACase(t, filepath.Join(haDir, "01-even-controllers.yaml"))
	fs := haFindings(hc, haRules)
	if fs.HasErrors() || len(fs.Warnings()) != 1 {
		t.Fatalf("want one warning and no error: %s", fs)
	}
	strict := fs.Strict()
	if !strict.HasErrors() || len(strict.Warnings()) != 0 || strict[0].Message != fs[0].Message || strict[0].Line != fs[0].Line {
		t.Errorf("Strict() = %s; want the warning as an error, unchanged otherwise", strict)
	}
	if fs[0].Severity != SeverityWarning {
		t.Error("Strict() changed the findings it was given")
	}
}

// TestHAFindingInAPackagedDefinition: a definition that comes from a
// package (no file of its own) gets its findings under the name given,
// without a line, still naming the field.
func TestHAFindingInAPackagedDefinition(t *testing.T) {
	hc := loadHACase(t, filepath.Join(haDir, "06-cluster-init-on-every-controller.yaml"))
	packaged := *hc.distro
	packaged.src = nil
	fs := ParseClusterWithDistro(hc.file, hc.data, &packaged, "pkg.tar.zst")
	if len(fs) != 1 {
		t.Fatalf("want one finding, got:\n%s", fs)
	}
	if f := fs[0]; f.File != "pkg.tar.zst" || f.Line != 0 || f.Path != "spec.config.engine.config.cluster-init" || !strings.Contains(f.Message, "sets cluster-init for cp-1, cp-2, cp-3: with it 3 of the 3 controllers") {
		t.Errorf("got %s (line %d)", f, f.Line)
	}
}
