package hosttest

import (
	"reflect"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/shell"
)

func TestWordsInvertsJoin(t *testing.T) {
	for _, args := range [][]string{
		{"semanage", "fcontext", "-a", "-t", "container_var_lib_t", "/var/lib/rancher(/.*)?"},
		{"sh", "-c", "echo \"$1\"; it's", "sh", ""},
		{"a b", "c'd", `e"f`, "--x=*"},
	} {
		if got := Words(shell.Join(args...)); !reflect.DeepEqual(got, args) {
			t.Errorf("Words(Join(%q)) = %q", args, got)
		}
	}
}
