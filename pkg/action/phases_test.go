package action

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/colonel-byte/cargoship/pkg/phase"
)

// Optional phase behaviour is found by type assertion, so a method with a
// drifted signature is silently never called. Every phase of every list
// must implement the interface each of its optional methods is named for,
// and the interface its dry-run mode needs.
func TestEveryPhaseImplementsWhatItDeclares(t *testing.T) {
	optional := map[string]reflect.Type{
		"Prepare":   reflect.TypeFor[phase.Preparer](),
		"ShouldRun": reflect.TypeFor[phase.Conditional](),
		"CleanUp":   reflect.TypeFor[phase.CleanUpper](),
		"Plan":      reflect.TypeFor[phase.Planner](),
		"DryRun":    reflect.TypeFor[phase.DryRunner](),
	}
	lists := map[string][]phase.Phase{"apply": ApplyPhases(), "prepare": PreparePhases(), "stage": StagePhases(), "reset": ResetPhases()}
	for name, list := range lists {
		for _, p := range list {
			typ := reflect.TypeOf(p)
			for method, iface := range optional {
				if _, has := typ.MethodByName(method); has {
					assert.True(t, typ.Implements(iface), "%s: %q has a %s method that does not implement %s", name, p.Title(), method, iface)
				}
			}
			_, embedsBase := typ.Elem().FieldByName("base")
			assert.True(t, embedsBase, "%s: %q does not embed the phase base, so the manager cannot bind it", name, p.Title())
			switch mode := modeOf(p); mode {
			case phase.OwnDryRun:
				assert.Implements(t, (*phase.DryRunner)(nil), p, "%s: %q declares its own dry-run path", name, p.Title())
			case phase.Reported:
				assert.Implements(t, (*phase.Planner)(nil), p, "%s: %q is reported in a dry run and must say what it would do", name, p.Title())
			}
		}
	}
}

func modeOf(p phase.Phase) phase.DryRunMode {
	if d, ok := p.(phase.DryRunDeclarer); ok {
		return d.DryRunMode()
	}
	return phase.Reported
}

// Every apply phase declares its class: an unclassified one would silently
// drop out of prepare and the staging half.
func TestEveryApplyPhaseHasAClass(t *testing.T) {
	for _, p := range ApplyPhases() {
		_, ok := phase.ClassOf(p)
		assert.True(t, ok, "%q declares no class", p.Title())
	}
}

// The lists derived from the classes, pinned: a phase that changes class
// changes what prepare and the staging half run, and should say so here.
func TestListsFromClasses(t *testing.T) {
	titles := func(ps []phase.Phase) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Title())
		}
		return out
	}
	assert.Equal(t, []string{
		"Connect to hosts", "Detect host operating systems", "Gather host facts", "Validate hosts",
		"Acquire exclusive host lock", "Prepare hosts", "Prepare hosts - Enterprise Linux support",
		"Prepare hosts - Enterprise Linux support - Fapolicyd", "Prepare hosts - Enterprise Linux support - SELinux policy",
		"Updating hosts file for clusters nodes", "Updating hosts firewall",
		"Release exclusive host lock", "Disconnect from hosts",
	}, titles(PreparePhases()))
	stage := titles(StagePhases())
	assert.Equal(t, "Configure engine", stage[len(stage)-3], "the staging half ends at Configure engine, before the lock's release and the disconnect")
	assert.NotContains(t, stage, "Install staged files")
	assert.NotContains(t, stage, "Import images")
	assert.Len(t, stage, 20)
}
