package container

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestContainerPowerOffAndOn_Root cuts one host's power and restores it:
// while it is off it is silent (an open session neither ends nor answers)
// and nothing of it runs, the other host runs on; once it is on again its
// disk kept what was written and its /run did not. Throttle puts a limit on
// its link and takes it off again.
func TestContainerPowerOffAndOn_Root(t *testing.T) {
	c := newRootBackend(t)
	const name = "rtpower"
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 1, Worker: 1, Image: ImageBase})
	ctx := context.Background()
	bootID := run(t, f, "kw0", fleet.UserRoot, "cat /proc/sys/kernel/random/boot_id")
	run(t, f, "kw0", fleet.UserRoot, "echo kept > /var/tmp/disk && sync && echo gone > /run/ram")

	client, err := f.Dial(ctx, "kw0", fleet.UserRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Close() }()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("sleep 600"); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()

	if err := c.PowerOff(ctx, name, "kw0"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		t.Fatalf("a session on the powered-off host ended (%v): a pulled cord sends no FIN or RST", err)
	case <-time.After(3 * time.Second):
	}
	if n := len(procsInNetns([]string{netnsName(name, "kw0")})); n != 0 {
		t.Errorf("%d process(es) still run in the powered-off host", n)
	}
	if _, _, err := f.Run(ctx, "kw0", fleet.UserRoot, "true"); err == nil {
		t.Error("the powered-off host answers SSH")
	}
	if got := run(t, f, "kc0", fleet.UserRoot, "systemctl is-system-running"); got != "running" {
		t.Errorf("the other host: %q, want running", got)
	}

	if err := c.PowerOn(ctx, name, "kw0"); err != nil {
		t.Fatal(err)
	}
	if got := run(t, f, "kw0", fleet.UserRoot, "cat /var/tmp/disk"); got != "kept" {
		t.Errorf("the disk after the power cut holds %q, want kept", got)
	}
	if got := run(t, f, "kw0", fleet.UserRoot, "ls /run/ram 2>&1 || true"); !strings.Contains(got, "No such file") {
		t.Errorf("/run survived the power cut: %q", got)
	}
	if got := run(t, f, "kw0", fleet.UserRoot, "cat /proc/sys/kernel/random/boot_id"); got == bootID {
		t.Errorf("boot_id %s is the one before the power cut: the host did not boot again", got)
	}
	if err := c.PowerOn(ctx, name, "kw0"); err == nil || !strings.Contains(err.Error(), "not powered off") {
		t.Errorf("PowerOn of a running host: %v", err)
	}

	veth := vethName(name, "kw0")
	if err := c.Throttle(ctx, name, "kw0", 1_000_000); err != nil {
		t.Fatal(err)
	}
	if out, _ := command(ctx, "tc", "qdisc", "show", "dev", veth, "root"); !strings.Contains(out, "tbf") || !strings.Contains(out, "8Mbit") {
		t.Errorf("throttled link: %q, want a tbf at 8Mbit", out)
	}
	for range 2 { // lifting a limit that is not there is not an error
		if err := c.Throttle(ctx, name, "kw0", 0); err != nil {
			t.Fatal(err)
		}
	}
	if out, _ := command(ctx, "tc", "qdisc", "show", "dev", veth, "root"); strings.Contains(out, "tbf") {
		t.Errorf("the limit stays after it was lifted: %q", out)
	}
}
