package hostos

import (
	"context"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// userHost answers getent from a model that the create script fills.
func userHost(user, group bool) (*hosttest.Fake, *[]string) {
	var created []string
	f := &hosttest.Fake{Name: "kc0", Strict: true}
	f.Handle("getent passwd", func(c hosttest.Call) (string, error) {
		if strings.Contains(c.Cmd, "useradd") {
			created = append(created, c.Cmd)
			user, group = true, true
			return "", nil
		}
		out := "user=no\n"
		if user {
			out = "user=yes\n"
		}
		if group {
			return out + "group=yes\n", nil
		}
		return out + "group=no\n", nil
	})
	return f, &created
}

// rke2's CIS profile needs an etcd system user and group: created once,
// with no home and no login shell, the name passed as an argument.
func TestSystemUserCreatesOnce(t *testing.T) {
	ctx := context.Background()
	f, created := userHost(false, false)
	u := SystemUser{Name: "etcd", Comment: "etcd user"}
	plan, err := u.Plan(ctx, f)
	if err != nil || strings.Join(plan.Actions, "|") != "create system group etcd|create system user etcd (no home, no login shell)" {
		t.Fatalf("plan = %q %v", plan.Actions, err)
	}
	if len(*created) != 0 {
		t.Fatal("the plan created the user")
	}
	if _, err := u.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	if len(*created) != 1 || !strings.Contains((*created)[0], "useradd -r -M -g") || !strings.Contains((*created)[0], "nologin") || !strings.HasSuffix((*created)[0], " sh etcd 'etcd user'") {
		t.Errorf("created = %q", *created)
	}
	again, err := u.Apply(ctx, f)
	if err != nil || again.Changed() || len(*created) != 1 {
		t.Errorf("second apply = %+v %v", again, err)
	}
	if _, err := (SystemUser{Name: "etcd;reboot"}).Plan(ctx, f); err == nil {
		t.Error("a bad name should be refused")
	}
}
