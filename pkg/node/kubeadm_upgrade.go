package node

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/colonel-byte/cargoship/pkg/engine"
	"github.com/colonel-byte/cargoship/pkg/retry"
)

// How often kubeadm upgrade node is tried, and the pause between tries.
const (
	upgradeNodeAttempts = 6
	upgradeNodeWait     = 15 * time.Second
)

// UpgradeKubeadm upgrades one kubeadm node in kubeadm's order
// (docs/reference/engines.md 7.1): the new kubeadm; kubeadm upgrade apply
// on the first controller (apply), kubeadm upgrade node on every other
// node; a controller's control-plane pods checked at the new version and
// settled; then, drained, the kubelet, kubectl and the rest of the package
// installed, the kubelet restarted, Ready at the new version, the control
// plane settled again, uncordoned.
func (s *Fleet) UpgradeKubeadm(ctx context.Context, h *Host, apply bool, phaseTitle string) error {
	u, ok := s.Engine.(engine.KubeadmUpgrader)
	if !ok {
		return fmt.Errorf("%s is not upgraded with kubeadm", s.Engine.Name())
	}
	want, err := engine.ParseVersion(s.Distro.Spec.Version)
	if err != nil {
		return fmt.Errorf("the package's spec.version: %w", err)
	}
	if err := s.InstallUpgrade(ctx, h, phaseTitle, u.UpgradeFirst()); err != nil {
		return fmt.Errorf("installing the new kubeadm: %w", err)
	}
	ignore := engine.KubeadmIgnoredPreflight(engine.HostConfig(s.Cluster, s.Distro, h.Spec))
	cmd, what := u.UpgradeNodeCommand(ignore), "kubeadm upgrade node"
	if apply {
		cmd, what = u.UpgradeApplyCommand(want, ignore), "kubeadm upgrade apply "+kubeadmTag(want)
	}
	// kubeadm upgrade node reads the cluster's kubeadm-config with the
	// node's own credentials, and right after the first controller's
	// upgrade the API server can refuse them for a while (seen on real
	// Kubernetes: "configmaps \"kubeadm-config\" is forbidden" for
	// system:node:NAME, then fine a minute later). It changes nothing
	// before it succeeds, so it is tried again; apply is not.
	attempts := 1
	if !apply {
		attempts = upgradeNodeAttempts
	}
	err = retry.Do(ctx, retry.Policy{Wait: upgradeNodeWait, Attempts: attempts}, func(ctx context.Context) error {
		_, err := h.Conn.Sudo(ctx, cmd)
		if err != nil && attempts > 1 {
			s.Logger().Info("kubeadm upgrade node failed; trying again", "host", h.String(), "err", err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	s.Report.Add(Change{Host: h.String(), Phase: phaseTitle, What: "ran " + what})
	if h.IsController() {
		if err := s.checkControlPlane(ctx, h, u, want); err != nil {
			return err
		}
		if err := s.waitControlPlaneSettled(ctx, h, u); err != nil {
			return fmt.Errorf("after %s: %w", what, err)
		}
	}
	return s.drained(ctx, h, s.Distro.Spec.Version, func(ctx context.Context) error {
		if err := s.InstallUpgrade(ctx, h, phaseTitle, nil); err != nil {
			return err
		}
		if err := DaemonReload(ctx, h); err != nil {
			return err
		}
		if _, err := h.Conn.Sudo(ctx, u.RestartKubeletCommand()); err != nil {
			return fmt.Errorf("restarting the kubelet: %w", err)
		}
		return nil
	})
}

// checkControlPlane reads the controller's static pod manifests: kubeadm
// upgrade must have moved every control-plane pod to the new version,
// which the kubelet's own version does not show.
func (s *Fleet) checkControlPlane(ctx context.Context, h *Host, u engine.KubeadmUpgrader, want engine.Version) error {
	out, err := h.Conn.Sudo(ctx, u.ControlPlaneImagesCommand())
	if err != nil {
		return fmt.Errorf("reading the control-plane versions: %w", err)
	}
	got, err := engine.ControlPlaneVersions(out)
	if err != nil {
		return fmt.Errorf("reading the control-plane versions: %w", err)
	}
	tag := kubeadmTag(want)
	var wrong []string
	for pod, v := range got {
		if v != tag {
			wrong = append(wrong, pod+" at "+v)
		}
	}
	if len(wrong) > 0 {
		sort.Strings(wrong)
		return fmt.Errorf("after kubeadm upgrade the control plane is not at %s: %s", tag, strings.Join(wrong, ", "))
	}
	return nil
}

// kubeadmTag is a version as kubeadm and the control-plane images spell
// it: v1.35.3.
func kubeadmTag(v engine.Version) string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }
