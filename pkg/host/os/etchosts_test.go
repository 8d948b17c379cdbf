package hostos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

// debianHosts is a Debian host's /etc/hosts as the installer and
// cloud-init leave it (docs/reference/hosts.md §4.1), plus an admin's own line.
const debianHosts = `127.0.0.1	localhost
127.0.1.1	kc0.cluster.example kc0

# The following lines are desirable for IPv6 capable hosts
::1     localhost ip6-localhost ip6-loopback
ff02::1 ip6-allnodes
ff02::2 ip6-allrouters
10.9.9.9 backup.example backup   # admin's own
`

var nodes = []HostsEntry{
	{Address: "10.73.0.11", Names: []string{"kw0.cluster.example", "kw0"}},
	{Address: "10.73.0.10", Names: []string{"kc0.cluster.example", "kc0"}},
	{Address: "", Names: []string{"kw1.cluster.example", "kw1"}},
	{Address: "fd00::10", Names: []string{"kc0.cluster.example", "kc0"}},
	{Address: "10.73.0.12", Names: []string{"kw2", "kw2"}},
}

const wantBlock = HostsBegin + "\n" +
	"10.73.0.10 kc0.cluster.example kc0\n" +
	"10.73.0.11 kw0.cluster.example kw0\n" +
	"10.73.0.12 kw2\n" +
	"fd00::10 kc0.cluster.example kc0\n" +
	HostsEnd + "\n"

func TestRenderHostsBlock(t *testing.T) {
	block, skipped, err := RenderHostsBlock(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if block != wantBlock {
		t.Errorf("got\n%s\nwant\n%s", block, wantBlock)
	}
	if len(skipped) != 1 || skipped[0] != "kw1.cluster.example kw1" {
		t.Errorf("skipped = %q", skipped)
	}
	for _, bad := range []HostsEntry{{Address: "10.0.0.1;reboot", Names: []string{"a"}}, {Address: "10.0.0.1", Names: []string{"a b"}}, {Address: "10.0.0.1", Names: []string{"#x"}}, {Address: "10.0.0.1"}} {
		if _, _, err := RenderHostsBlock([]HostsEntry{bad}); err == nil {
			t.Errorf("%+v should be refused", bad)
		}
	}
}

func TestUpdateHostsFileInsertReplaceRemove(t *testing.T) {
	block, _, _ := RenderHostsBlock(nodes)
	inserted, err := UpdateHostsFile([]byte(debianHosts), block)
	if err != nil {
		t.Fatal(err)
	}
	if string(inserted) != debianHosts+wantBlock {
		t.Errorf("insert:\n%s", inserted)
	}
	again, err := UpdateHostsFile(inserted, block)
	if err != nil || string(again) != string(inserted) {
		t.Errorf("second pass changed the file: %v", err)
	}
	// An admin line after the block stays after it when the block changes.
	withTail := string(inserted) + "192.168.1.1 router\n"
	smaller, _, _ := RenderHostsBlock(nodes[:1])
	replaced, err := UpdateHostsFile([]byte(withTail), smaller)
	if err != nil {
		t.Fatal(err)
	}
	if want := debianHosts + smaller + "192.168.1.1 router\n"; string(replaced) != want {
		t.Errorf("replace:\n%s\nwant\n%s", replaced, want)
	}
	removed, err := UpdateHostsFile(replaced, "")
	if err != nil || string(removed) != debianHosts+"192.168.1.1 router\n" {
		t.Errorf("remove:\n%s %v", removed, err)
	}
	noNewline, _ := UpdateHostsFile([]byte("127.0.0.1 localhost"), smaller)
	if string(noNewline) != "127.0.0.1 localhost\n"+smaller {
		t.Errorf("file without a final newline: %q", noNewline)
	}
}

func TestUpdateHostsFileRefusesBrokenMarkers(t *testing.T) {
	for _, body := range []string{
		debianHosts + HostsBegin + "\n10.0.0.1 a\n",
		debianHosts + HostsEnd + "\n",
		debianHosts + wantBlock + wantBlock,
	} {
		if _, err := UpdateHostsFile([]byte(body), wantBlock); err == nil {
			t.Errorf("should refuse:\n%s", body)
		}
	}
}

func TestHostsWarnings(t *testing.T) {
	block, _, _ := RenderHostsBlock(nodes)
	body, _ := UpdateHostsFile([]byte(debianHosts+cloudInitMarker+"\n"), block)
	w := hostsWarnings(body, nodes)
	if len(w) != 3 {
		t.Fatalf("warnings = %q", w)
	}
	all := strings.Join(w, "\n")
	if !strings.Contains(all, "maps kc0 to 127.0.1.1") || !strings.Contains(all, "maps kc0.cluster.example to 127.0.1.1") || !strings.Contains(all, "cloud-init") {
		t.Errorf("warnings = %q", w)
	}
	// A name's own IPv6 line outside the block is not a conflict.
	if w := hostsWarnings([]byte("fd00::10 kc0\n"), nodes); len(w) != 0 {
		t.Errorf("IPv6 line of the same node: %q", w)
	}
}

// TestEtcHostsStepLocal edits a copy of a real hosts file through a real
// shell: plan writes nothing, apply writes the block, apply again does
// nothing, and the lines outside the block are byte for byte the same.
func TestEtcHostsStepLocal(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte(debianHosts), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &hosttest.Local{}
	step := EtcHosts{Entries: nodes, Path: path}
	plan, err := step.Plan(ctx, r)
	if err != nil || len(plan.Actions) != 1 || len(plan.Warnings) != 3 {
		t.Fatalf("plan = %+v %v", plan, err)
	}
	if b, _ := os.ReadFile(path); string(b) != debianHosts {
		t.Fatal("Plan wrote the file")
	}
	if c, err := step.Apply(ctx, r); err != nil || !c.Changed() {
		t.Fatalf("apply = %+v %v", c, err)
	}
	if b, _ := os.ReadFile(path); string(b) != debianHosts+wantBlock {
		t.Errorf("file:\n%s", b)
	}
	if c, err := step.Apply(ctx, r); err != nil || c.Changed() {
		t.Errorf("second apply = %+v %v", c, err)
	}
}
