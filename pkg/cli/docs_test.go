package cli

//go:generate go run ../../hack/gendocs

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/action"
	"github.com/colonel-byte/cargoship/pkg/phase"
)

const commandDocs = "../../docs/commands"

// TestCommandDocsCurrent regenerates the command reference with the real
// generator and fails when docs/commands differs from it.
func TestCommandDocsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs hack/gendocs")
	}
	fresh := t.TempDir()
	cmd := exec.Command(goTool(t), "run", "../../hack/gendocs", "-dir", fresh)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	require.NoError(t, cmd.Run(), "go run ./hack/gendocs: %s", stderr.String())

	diffs := compareDocDirs(t, commandDocs, fresh)
	if len(diffs) > 0 {
		t.Fatalf("docs/commands is stale; run `go run ./hack/gendocs` and commit the result:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// TestCompareDocDirsFindsStalePages proves the comparison above can fail:
// a changed, a missing and an extra page are each reported.
func TestCompareDocDirsFindsStalePages(t *testing.T) {
	want, got := t.TempDir(), t.TempDir()
	write := func(dir, name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write(want, "same.md", "x\n")
	write(got, "same.md", "x\n")
	assert.Empty(t, compareDocDirs(t, want, got))

	write(want, "changed.md", "old\n")
	write(got, "changed.md", "new\n")
	write(want, "gone.md", "a command that no longer exists\n")
	write(got, "new.md", "a command with no page yet\n")
	assert.Equal(t, []string{
		"changed.md: differs from the generated page",
		"gone.md: no such command any more (the generator writes no such page)",
		"new.md: missing (the generator writes it)",
	}, compareDocDirs(t, want, got))
}

// compareDocDirs lists how the committed pages (have) differ from freshly
// generated ones (fresh), by file name.
func compareDocDirs(t *testing.T, have, fresh string) []string {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			out[filepath.Base(p)] = b
		}
		return out
	}
	h, f := read(have), read(fresh)
	var diffs []string
	for name, body := range f {
		old, ok := h[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": missing (the generator writes it)")
		case !bytes.Equal(old, body):
			diffs = append(diffs, name+": differs from the generated page")
		}
	}
	for name := range h {
		if _, ok := f[name]; !ok {
			diffs = append(diffs, name+": no such command any more (the generator writes no such page)")
		}
	}
	sort.Strings(diffs)
	return diffs
}

// goTool is the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	// go test puts its own GOROOT/bin first on PATH, so this finds the go
	// command that runs the test.
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH to run hack/gendocs with: %v", err)
	}
	return p
}

// TestEveryCommandAndFlagHasHelp walks the tree the docs are made from.
func TestEveryCommandAndFlagHasHelp(t *testing.T) {
	root := NewRootCommand(io.Discard, io.Discard, func(string) (string, bool) { return "", false })
	root.InitDefaultCompletionCmd()
	missing := missingHelp(root)
	assert.Empty(t, missing, "give these a Short (commands) or a usage string (flags); then run `go run ./hack/gendocs`")

	// the pages list what the tree holds, so a command must be in both
	var paths []string
	walkCommands(root, func(c *cobra.Command) { paths = append(paths, c.CommandPath()) })
	for _, want := range []string{"cargoship apply", "cargoship prepare", "cargoship create", "cargoship inspect", "cargoship validate", "cargoship keygen", "cargoship version"} {
		assert.Contains(t, paths, want)
	}
	for _, p := range paths {
		assert.FileExists(t, filepath.Join(commandDocs, strings.ReplaceAll(p, " ", "_")+".md"), "run `go run ./hack/gendocs`")
	}
}

// TestMissingHelpFindsGaps proves the check above can fail.
func TestMissingHelpFindsGaps(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	root.PersistentFlags().Bool("quiet", false, "")
	bare := &cobra.Command{Use: "bare", Run: func(*cobra.Command, []string) {}}
	bare.Flags().String("name", "", "")
	bare.Flags().String("documented", "", "has help")
	bare.Flags().String("old", "", "")
	require.NoError(t, bare.Flags().MarkHidden("old"))
	hidden := &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}}
	root.AddCommand(bare, hidden)
	assert.Equal(t, []string{
		"tool --quiet: flag has no help text",
		"tool bare --name: flag has no help text",
		"tool bare: command has no short help",
	}, missingHelp(root))
}

// missingHelp names every visible command without a Short and every
// visible flag without a usage string.
func missingHelp(root *cobra.Command) []string {
	var out []string
	walkCommands(root, func(c *cobra.Command) {
		if strings.TrimSpace(c.Short) == "" {
			out = append(out, c.CommandPath()+": command has no short help")
		}
		check := func(f *pflag.Flag) {
			if !f.Hidden && strings.TrimSpace(f.Usage) == "" {
				out = append(out, c.CommandPath()+" --"+f.Name+": flag has no help text")
			}
		}
		c.LocalNonPersistentFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
	})
	sort.Strings(out)
	return out
}

// walkCommands visits c and every visible command under it.
func walkCommands(c *cobra.Command, visit func(*cobra.Command)) {
	if c.Hidden || c.Deprecated != "" {
		return
	}
	visit(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, visit)
	}
}

const applyGuide = "../../docs/apply.md"

// guidePhase is one "### N. Title" section of docs/apply.md. A phase
// added between two of the earlier tool's numbered phases is "### Na.":
// the numbers users know from it stay.
type guidePhase struct {
	num      int
	sub      string // "a" in "19a", "" for a numbered phase
	title    string
	dryRun   string // the "Dry run: **...**" label
	notBuilt bool   // the section says "**Not built yet.**"
}

var (
	guideHeading = regexp.MustCompile(`^### (\d+)([a-z]?)\. (.+)$`)
	guideDryRun  = regexp.MustCompile(`^Dry run: \*\*(.+?)\*\*`)
	guidePrepare = regexp.MustCompile(`^- Phase (\d+): (.+)$`)
)

func (g guidePhase) label() string { return strconv.Itoa(g.num) + g.sub }

// order sorts "19" before "19a" before "20".
func (g guidePhase) order() int {
	o := g.num * 100
	if g.sub != "" {
		o += int(g.sub[0]-'a') + 1
	}
	return o
}

// readApplyGuide parses the phase sections and the prepare list.
func readApplyGuide(t *testing.T, text string) (phases []guidePhase, prepare []string) {
	t.Helper()
	var cur *guidePhase
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			cur = nil
		}
		if m := guideHeading.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			phases = append(phases, guidePhase{num: n, sub: m[2], title: m[3]})
			cur = &phases[len(phases)-1]
			continue
		}
		if m := guidePrepare.FindStringSubmatch(line); m != nil {
			prepare = append(prepare, m[2])
		}
		if cur == nil {
			continue
		}
		if m := guideDryRun.FindStringSubmatch(line); m != nil {
			cur.dryRun = m[1]
		}
		if strings.HasPrefix(line, "**Not built yet.**") {
			cur.notBuilt = true
		}
	}
	return phases, prepare
}

// guideProblems compares the guide's phase sections with the phase lists
// apply and prepare run: every built phase has its section, in order, with
// its dry-run label and no "not built" mark; every other section has one.
func guideProblems(guide []guidePhase, prepareList []string, apply, prepare []phase.Phase) []string {
	var out []string
	byTitle := map[string]guidePhase{}
	main := 0
	for _, g := range guide {
		switch {
		case g.sub == "":
			main++
			if g.num != main {
				out = append(out, "section "+strconv.Quote(g.title)+" is numbered "+strconv.Itoa(g.num)+", want "+strconv.Itoa(main))
			}
		case g.num != main:
			out = append(out, "section "+strconv.Quote(g.title)+" is numbered "+g.label()+", want "+strconv.Itoa(main)+g.sub+" (after phase "+strconv.Itoa(main)+")")
		}
		if g.dryRun == "" {
			out = append(out, "section "+strconv.Quote(g.title)+" has no dry-run label")
		}
		byTitle[g.title] = g
	}
	if len(guide) != len(apply) {
		out = append(out, "the guide has "+strconv.Itoa(len(guide))+" phase sections, want the "+strconv.Itoa(len(apply))+" of apply's phase list")
	}
	built := map[string]bool{}
	last := guidePhase{}
	for _, p := range apply {
		built[p.Title()] = true
		g, ok := byTitle[p.Title()]
		switch {
		case !ok:
			out = append(out, "apply runs "+strconv.Quote(p.Title())+", which has no section")
			continue
		case g.notBuilt:
			out = append(out, strconv.Quote(p.Title())+" is built now: drop its **Not built yet.** and say what it does")
		case g.order() < last.order():
			out = append(out, strconv.Quote(p.Title())+" runs after phase "+last.label()+" but is numbered "+g.label())
		}
		last = g
		mode := phase.Reported
		if d, ok := p.(phase.DryRunDeclarer); ok {
			mode = d.DryRunMode()
		}
		if g.dryRun != mode.String() {
			out = append(out, strconv.Quote(p.Title())+": the guide says a dry run "+strconv.Quote(g.dryRun)+", the phase declares "+strconv.Quote(mode.String()))
		}
	}
	for _, g := range guide {
		if !built[g.title] && !g.notBuilt {
			out = append(out, strconv.Quote(g.title)+" is not in apply's phase list: mark it **Not built yet.**")
		}
	}
	var want []string
	for _, p := range prepare {
		want = append(want, p.Title())
	}
	if strings.Join(want, "\n") != strings.Join(prepareList, "\n") {
		out = append(out, "the prepare list reads "+strconv.Quote(strings.Join(prepareList, ", "))+", prepare runs "+strconv.Quote(strings.Join(want, ", ")))
	}
	return out
}

// TestApplyGuideMatchesPhases keeps docs/apply.md honest about which
// phases exist, their order and what a dry run does with each.
func TestApplyGuideMatchesPhases(t *testing.T) {
	text, err := os.ReadFile(applyGuide)
	require.NoError(t, err)
	guide, prepareList := readApplyGuide(t, string(text))
	problems := guideProblems(guide, prepareList, action.ApplyPhases(), action.PreparePhases())
	assert.Empty(t, problems, "docs/apply.md no longer matches the phase lists of pkg/action")
}

// TestGuideProblemsFindsDrift proves the check above can fail.
func TestGuideProblemsFindsDrift(t *testing.T) {
	text := strings.Join([]string{
		"## The phases",
		"### 1. Connect to hosts",
		"Dry run: **runs, reads only**.",
		"### 2. Release exclusive host lock",
		"Dry run: **runs, reads only**.",
		"### 3. Prepare hosts",
		"Dry run: **reported, not run**.",
		"**Not built yet.** Will prepare.",
		"### 4. Import images",
		"Dry run: **reported, not run**.",
		"### 3a. Wait for it",
		"Dry run: **reported, not run**.",
		"## What prepare runs",
		"- Phase 1: Connect to hosts",
		"**Not built yet.** outside any phase section",
	}, "\n")
	guide, prepareList := readApplyGuide(t, text)
	require.Len(t, guide, 5)
	assert.False(t, guide[3].notBuilt, "a mark after the next heading belongs to no phase")
	connect := &phase.Connect{}
	lock := &phase.AcquireLock{}
	apply := []phase.Phase{connect, lock, phase.NewPrepareHosts(), &phase.ReleaseLock{Lock: lock}}
	assert.Equal(t, []string{
		`section "Wait for it" is numbered 3a, want 4a (after phase 4)`,
		"the guide has 5 phase sections, want the 4 of apply's phase list",
		`apply runs "Acquire exclusive host lock", which has no section`,
		`"Prepare hosts" is built now: drop its **Not built yet.** and say what it does`,
		`"Release exclusive host lock" runs after phase 3 but is numbered 2`,
		`"Release exclusive host lock": the guide says a dry run "runs, reads only", the phase declares "reported, not run"`,
		`"Import images" is not in apply's phase list: mark it **Not built yet.**`,
		`"Wait for it" is not in apply's phase list: mark it **Not built yet.**`,
		`the prepare list reads "Connect to hosts", prepare runs "Connect to hosts, Prepare hosts"`,
	}, guideProblems(guide, prepareList, apply, []phase.Phase{connect, phase.NewPrepareHosts()}))
}

// TestDocsIndexCurrent checks docs/README.md: every page of docs/ is
// listed, and every link it holds leads to a file.
func TestDocsIndexCurrent(t *testing.T) {
	const docs = "../../docs"
	index, err := os.ReadFile(filepath.Join(docs, "README.md"))
	require.NoError(t, err)
	pages, err := filepath.Glob(filepath.Join(docs, "*.md"))
	require.NoError(t, err)
	assert.Empty(t, indexProblems(string(index), pages, func(target string) bool {
		_, err := os.Stat(filepath.Join(docs, target))
		return err == nil
	}), "docs/README.md is the index of docs/: give each page a line there")
}

// TestIndexProblemsFindsGaps proves the check above can fail.
func TestIndexProblemsFindsGaps(t *testing.T) {
	index := "[a](a.md) [gone](gone.md) [web](https://example.com) [part](a.md#top)"
	exists := func(target string) bool { return target == "a.md" }
	assert.Equal(t, []string{
		"b.md is not listed",
		"link gone.md leads nowhere",
	}, indexProblems(index, []string{"docs/a.md", "docs/b.md", "docs/README.md"}, exists))
}

var mdLink = regexp.MustCompile(`\]\(([^)]+)\)`)

// indexProblems lists pages the index does not link and links that lead
// to no file (web links and anchors aside).
func indexProblems(index string, pages []string, exists func(string) bool) []string {
	linked := map[string]bool{}
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(index, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") {
			continue
		}
		linked[target] = true
		if !exists(target) {
			out = append(out, "link "+target+" leads nowhere")
		}
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" && !linked[name] {
			out = append(out, name+" is not listed")
		}
	}
	sort.Strings(out)
	return out
}
