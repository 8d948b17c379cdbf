package v1alpha1_test

import (
	"testing"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/engine"
)

// TestEngineConfigPathsAreTheEngines: CheckEngineConfigKey states the
// data-dir and registries file k3s and rke2 are rendered with; they must
// be the engines' own paths.
func TestEngineConfigPathsAreTheEngines(t *testing.T) {
	for _, name := range []string{v1alpha1.EngineK3s, v1alpha1.EngineRKE2} {
		e, err := engine.For(name)
		if err != nil {
			t.Fatal(err)
		}
		p := e.Paths()
		for key, want := range map[string]string{"data-dir": p.DataDir, "private-registry": p.Registries} {
			if err := v1alpha1.CheckEngineConfigKey(name, key, want); err != nil {
				t.Errorf("%s %s %s: %v", name, key, want, err)
			}
			if err := v1alpha1.CheckEngineConfigKey(name, key, want+"x"); err == nil {
				t.Errorf("%s %s %sx accepted", name, key, want)
			}
		}
	}
}
