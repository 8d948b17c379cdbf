package v1alpha1

import (
	"cmp"
	"fmt"
	"slices"
)

// LoadClusterFileWithDistro checks an inventory against the distro it is
// applied with: the rules that need both documents (docs/validate.md,
// "With a distro"). `apply` runs it against its package's definition and
// `validate` against each --distro, so both refuse the same pairs. It
// returns only those findings, located in the inventory; the inventory's
// own are LoadClusterFile's. distro names the definition in messages.
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
	c := &Cluster{}
	d, ok := decode(file, data, c)
	if !ok || ds == nil {
		return nil
	}
	d.findings = nil // the inventory's own, reported by ParseCluster
	validateClusterWithDistro(d, c, ds, distro)
	_, fs, _ := result(c, d)
	return fs
}

func validateClusterWithDistro(d *document, c *Cluster, ds *Distro, distro string) {
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
}
