package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestFanoutAttribute: fan-out is on unless fanout = false, as the CLI's
// --fanout.
func TestFanoutAttribute(t *testing.T) {
	for _, c := range []struct {
		v        types.Bool
		noFanout bool
	}{{types.BoolNull(), false}, {types.BoolValue(true), false}, {types.BoolValue(false), true}} {
		m := testModel()
		m.Fanout = c.v
		o := (&runner{}).options(context.Background(), run{model: m, inv: &inventory{}})
		if o.Phase.NoFanout != c.noFanout {
			t.Errorf("fanout = %v: NoFanout %v, want %v", c.v, o.Phase.NoFanout, c.noFanout)
		}
	}
}
