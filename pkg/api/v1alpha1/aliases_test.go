package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAliases(t *testing.T) {
	const head = "kind: Cluster\nmetadata: {name: a}\nspec:\n  config: {loadbalancer: 10.0.0.9}\n  hosts:\n"
	cases := []struct {
		name, hosts, want string
	}{
		{"defined before use", "    - role: controller\n      ssh: &s {address: 10.0.0.1}\n    - role: worker\n      ssh: {<<: *s, address: 10.0.0.2}\n", ""},
		{"used before defined", "    - role: controller\n      ssh: *s\n    - role: worker\n      ssh: &s {address: 10.0.0.2}\n", "7:12: spec.hosts[0].ssh: alias *s names no anchor"},
		{"never defined", "    - role: controller\n      ssh: *nope\n", "7:12: spec.hosts[0].ssh: alias *nope names no anchor"},
		{"inside itself", "    - &h\n      role: controller\n      ssh: *h\n", "8:12: spec.hosts[0].ssh: alias *h is inside the node &h names"},
		{"redefined anchor takes the latest", "    - role: controller\n      ssh: &s {address: 10.0.0.1}\n    - role: worker\n      ssh: &s {address: 10.0.0.2}\n    - role: worker\n      ssh: {<<: *s, port: 2222}\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, fs, err := ParseCluster("a.yaml", []byte(head+c.hosts))
			if c.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(fs.String(), "a.yaml:"+c.want) {
				t.Fatalf("want a finding a.yaml:%s..., got %v", c.want, fs)
			}
		})
	}
}

// TestAliasExpansionBounded feeds a "billion laughs" document: nine levels
// of ten aliases each. It must fail fast with a located finding rather than
// expand 10^9 values.
func TestAliasExpansionBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("kind: Cluster\nmetadata: {name: a}\nspec:\n  config:\n    loadbalancer: 10.0.0.9\n    profiles:\n      - name: p\n        engineConfig:\n")
	b.WriteString("          l0: &l0 [ha, ha, ha, ha, ha, ha, ha, ha, ha, ha]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "          l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	b.WriteString("  hosts:\n    - role: controller\n      ssh: {address: 10.0.0.1}\n")
	start := time.Now()
	_, fs, err := ParseCluster("laughs.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("a billion laughs loaded")
	}
	if !strings.Contains(fs.String(), "laughs.yaml:1:1: aliases expand the document") {
		t.Errorf("want a located expansion finding, got %v", fs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to refuse", d)
	}
}

// TestAliasResolvesLatestAnchor checks the decoder agrees with resolve: a
// redefined anchor means its latest definition before the alias.
func TestAliasResolvesLatestAnchor(t *testing.T) {
	doc := "kind: Cluster\nmetadata: {name: a}\nspec:\n  config: {loadbalancer: 10.0.0.9}\n  hosts:\n" +
		"    - role: controller\n      ssh: &s {address: 10.0.0.1}\n" +
		"    - role: worker\n      ssh: &s {address: 10.0.0.2, user: two}\n" +
		"    - role: worker\n      ssh: {<<: *s, port: 2222}\n"
	c, _, err := ParseCluster("a.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Spec.Hosts[2].SSH; s.Address != "10.0.0.2" || s.User != "two" || s.Port != 2222 {
		t.Errorf("merged ssh = %+v, want the second anchor's address and user with port 2222", *s)
	}
}
