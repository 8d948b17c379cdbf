package node

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/host/hosttest"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
)

// elHost is an EL host with rke2-common uploaded and nothing installed;
// dnf --assumeno answers resolve.
func elHost(resolve string) (*Host, *hosttest.Fake) {
	f := (&hosttest.Fake{Name: "kc0", Strict: true}).
		On("command -v", "dnf\n").
		On("rpm -qp", "rke2-common|0:1.35.4~rke2r1-0.el9|x86_64\n").
		On("rpm -q ", "package rke2-common is not installed\n").
		On("localpkg_gpgcheck", "localpkg_gpgcheck=\n").
		On("rpm --import", "").
		On("--assumeno", resolve+"\ncargoship-exit=1\n").
		On("dnf -y", "")
	h := &Host{Spec: &v1alpha1.Host{Hostname: "kc0"}, Conn: f, OS: hostos.OS{Family: v1alpha1.FamilyEnterpriseLinux}}
	return h, f
}

// rke2-common needs iptables and libnftnl; with every repository disabled
// and neither uploaded, the install is refused before dnf installs
// anything, naming what is missing. The signing key queued with the rpms
// is imported, not installed.
func TestInstallPackagesResolvesBeforeInstalling(t *testing.T) {
	ctx := context.Background()
	h, f := elHost("Error: \n Problem: conflicting requests\n  - nothing provides libnftnl.so.11()(64bit) needed by rke2-common-1.35.4~rke2r1-0.el9.x86_64 from @commandline")
	s := &Fleet{Hosts: Hosts{h}, Report: &Report{}}
	s.QueuePackage(h, "/var/lib/rancher/rke2/rpm/rke2-common.rpm")
	s.QueuePackage(h, "/etc/pki/rpm-gpg/RPM-GPG-KEY-rancher")
	err := s.InstallPackages(ctx, h, "Import images")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nothing provides libnftnl.so.11()(64bit) needed by rke2-common")
	ran := strings.Join(f.Commands(), "\n")
	assert.NotContains(t, ran, "dnf -y", "nothing installed")
	assert.Contains(t, ran, "rpm --import")
	for _, c := range f.Commands() {
		if strings.Contains(c, "--assumeno") || strings.Contains(c, "rpm -qp") {
			assert.NotContains(t, c, "RPM-GPG-KEY-rancher", "the key is no package")
		}
	}

	h, f = elHost("Dependencies resolved.\nOperation aborted.")
	s = &Fleet{Hosts: Hosts{h}, Report: &Report{}}
	s.QueuePackage(h, "/var/lib/rancher/rke2/rpm/rke2-common.rpm")
	_ = s.InstallPackages(ctx, h, "Import images") // writing the record is not modelled here
	assert.True(t, f.Ran("dnf -y"), "a resolvable transaction is installed")
}
