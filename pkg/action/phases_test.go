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
