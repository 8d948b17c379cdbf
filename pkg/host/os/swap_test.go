package hostos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
)

const fstabFixture = `# /etc/fstab: static file system information.
UUID=1b2c / ext4 errors=remount-ro 0 1
# swap was on /dev/sda5 during installation
UUID=77aa none            swap    sw              0       0
/swapfile	none	swap	defaults	0	0
#/dev/sdb1 none swap sw 0 0
/dev/sr0        /media/cdrom0   udf,iso9660 user,noauto     0       0`

func TestCommentSwap(t *testing.T) {
	got, lines := CommentSwap([]byte(fstabFixture))
	want := strings.Replace(strings.Replace(fstabFixture, "UUID=77aa", "#UUID=77aa", 1), "/swapfile", "#/swapfile", 1)
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(lines) != 2 {
		t.Errorf("lines = %q", lines)
	}
	again, none := CommentSwap(got)
	if string(again) != string(got) || len(none) != 0 {
		t.Error("a second pass must change nothing")
	}
}

// TestSwapOffLocal edits a real fstab copy through a real shell; swap is
// reported inactive by a swaps file with only its header, so swapoff is
// never run here.
func TestSwapOffLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fstab, swaps := filepath.Join(dir, "fstab"), filepath.Join(dir, "swaps")
	if err := os.WriteFile(fstab, []byte(fstabFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(swaps, []byte("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	r := &hosttest.Local{}
	step := SwapOff{Fstab: fstab, Swaps: swaps}
	c, err := step.Apply(ctx, r)
	if err != nil || len(c.Actions) != 2 {
		t.Fatalf("first = %+v %v", c, err)
	}
	for _, cmd := range r.Calls() {
		if strings.Contains(cmd, "swapoff") {
			t.Error("swapoff ran with no active swap")
		}
	}
	if c, err := step.Apply(ctx, r); err != nil || c.Changed() {
		t.Errorf("second = %+v %v", c, err)
	}
}

// TestSwapOffRefused: a container sees the machine's swap and may not turn
// it off; that is reported, not fatal. zram gets a warning.
func TestSwapOffRefused(t *testing.T) {
	dir := t.TempDir()
	swaps := filepath.Join(dir, "swaps")
	if err := os.WriteFile(swaps, []byte("Filename\tType\tSize\tUsed\tPriority\n/dev/zram0 partition 8388604 0 100\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	f := (&hosttest.Fake{Else: &hosttest.Local{}}).
		Fail("swapoff -a", 1, "swapoff: /dev/zram0: swapoff failed: Operation not permitted")
	c, err := SwapOff{Swaps: swaps, Fstab: filepath.Join(dir, "no-fstab")}.Apply(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if c.Changed() || len(c.Failed) != 1 || !strings.Contains(c.Failed[0].Reason, "Operation not permitted") || len(c.Warnings) != 1 {
		t.Errorf("%+v", c)
	}
}
