package v1alpha1

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
)

// LoadClusterFileWithDistro checks an inventory against the distro it is
// applied with: the rules that need both documents (docs/validate.md,
// "With a distro" and "HA checks"). `apply` runs it against its package's
// definition and `validate` against each --distro, so both refuse the same
// pairs. It returns only those findings: located in the inventory, or in
// the definition when it was loaded from a file (LoadDistroFile) and the
// finding is about one of its fields; the inventory's own are
// LoadClusterFile's. distro names the definition in messages.
func LoadClusterFileWithDistro(path string, ds *Distro, distro string) (Findings, error) {
	data, err := readDocument(path)
	if err != nil {
		return nil, err
	}
	return ParseClusterWithDistro(path, data, ds, distro), nil
}

// ParseClusterWithDistro is LoadClusterFileWithDistro for bytes already
// read. An inventory that does not decode gives nothing here.
func ParseClusterWithDistro(file string, data []byte, ds *Distro, distro string) Findings {
	return parseClusterWithDistro(file, data, ds, distro, haRules)
}

func parseClusterWithDistro(file string, data []byte, ds *Distro, distro string, rules []haRule) Findings {
	c := &Cluster{}
	d, ok := decode(file, data, c)
	if !ok || ds == nil {
		return nil
	}
	d.findings = nil // the inventory's own, reported by ParseCluster
	// A definition from a package has no lines of its own to point at.
	dd := &document{file: distro}
	if ds.src != nil {
		dd = &document{file: ds.src.file, body: ds.src.body, pos: ds.src.pos}
	}
	validateClusterWithDistro(d, dd, c, ds, distro, rules)
	_, fs, _ := result(c, d)
	_, dfs, _ := result(ds, dd)
	return append(fs, dfs...)
}

func validateClusterWithDistro(d, dd *document, c *Cluster, ds *Distro, distro string, rules []haRule) {
	engine := ds.Spec.Type
	if !slices.Contains(Engines, engine) {
		return // the definition's own load reports it
	}
	with := fmt.Sprintf("with %s (spec.type %s)", distro, engine)
	// Only a profile a host names reaches the engine (HostConfig).
	used := map[string]bool{}
	for _, h := range c.Spec.Hosts {
		used[cmp.Or(h.Profile, defaultProfile(h.Role))] = true
	}
	for i, pr := range c.Spec.Config.Profiles {
		if !used[pr.Name] {
			continue
		}
		ep := fmt.Sprintf("spec.config.profiles[%d].engineConfig", i)
		for _, k := range sortedKeys(pr.EngineConfig) {
			v := pr.EngineConfig[k]
			if CheckEngineConfigKey("", k, v) != nil {
				continue // the inventory's own load reports it
			}
			if err := CheckEngineConfigKey(engine, k, v); err != nil {
				d.keyErrorf(joinPath(ep, k), "%s: %v", with, err)
			}
		}
	}
	for i, r := range c.Spec.Config.Registries {
		if a := r.Auth; a == nil || *a == (RegistryAuth{}) {
			continue // nothing reaches the engine's configuration
		}
		if err := CheckRegistryAuthFor(engine); err != nil {
			d.errorf(fmt.Sprintf("spec.config.registries[%d].auth", i), "%s: %v", with, err)
		}
	}
	checkKubeVIPImage(d, c, ds, with)
	runHAWithDistro(d, dd, c, ds, with, rules)
}

// checkKubeVIPImage: a kube-vip VIP needs an image, the cluster's or the
// distro's, and air-gapped hosts run only what they can reach.
func checkKubeVIPImage(d *document, c *Cluster, ds *Distro, with string) {
	v := c.Spec.Config.VIP
	if v == nil || v.ProviderName() != VIPKubeVIP {
		return
	}
	img := v.KubeVIPSettings().Image
	if img == "" {
		if ds.Spec.Config.KubeVIP == nil || ds.Spec.Config.KubeVIP.Image == "" {
			d.errorf("spec.config.vip", "%s: provider kube-vip needs its image, and neither spec.config.vip.kubeVip.image nor the distro's spec.config.kubeVip.image names one", with)
		}
		return
	}
	ref, err := name.ParseReference(img)
	if err != nil {
		return // the inventory's own load reports it
	}
	for _, carried := range ds.Spec.Config.ImageConfig.Images {
		if r, err := name.ParseReference(carried); err == nil && r.Name() == ref.Name() {
			return
		}
	}
	d.warnf("spec.config.vip.kubeVip.image", "%s: %q is not among the images the package carries (spec.config.imageConfig.images); every controller must pull it from a registry it reaches", with, img)
}
