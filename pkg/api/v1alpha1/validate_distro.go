package v1alpha1

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// validateDistro checks a distro definition, reporting every problem.
func validateDistro(d *document, ds *Distro) {
	if ds.Kind != KindDistro {
		d.errorf("kind", "is %q; a distro definition has kind %q", ds.Kind, KindDistro)
	}
	if ds.APIVersion != "" && ds.APIVersion != GroupVersion && ds.APIVersion != LegacyGroupVersion {
		d.errorf("apiVersion", "is %q; use %q", ds.APIVersion, LegacyGroupVersion)
	}
	m := ds.Metadata
	if m.Name == "" {
		d.errorf("metadata.name", "is required: it names the package file")
	} else if !namePattern.MatchString(m.Name) {
		d.errorf("metadata.name", "%q must be lower-case letters, digits and hyphens", m.Name)
	}
	if m.Version != "" {
		if err := CheckFileNamePart(m.Version); err != nil {
			d.errorf("metadata.version", "%v; it names the package file", err)
		}
	}
	if m.Architecture != "" && !slices.Contains(Architectures, m.Architecture) {
		d.errorf("metadata.architecture", "%q is not one of %s", m.Architecture, quoteList(Architectures))
	}
	seen := map[string]bool{}
	for i, a := range m.Architectures {
		p := fmt.Sprintf("metadata.architectures[%d]", i)
		if !slices.Contains(Architectures, a) {
			d.errorf(p, "%q is not one of %s", a, quoteList(Architectures))
		} else if seen[a] {
			d.errorf(p, "%q is listed twice", a)
		}
		seen[a] = true
	}
	if m.Architecture != "" && len(m.Architectures) > 0 && !seen[m.Architecture] {
		d.errorf("metadata.architecture", "%q is not among metadata.architectures", m.Architecture)
	}
	switch {
	case ds.Spec.Type == "":
		d.errorf("spec.type", "is required: one of %s", quoteList(Engines))
	case !slices.Contains(Engines, ds.Spec.Type):
		d.errorf("spec.type", "%q is not a supported engine; use one of %s", ds.Spec.Type, quoteList(Engines))
	}
	if ds.Spec.Version == "" {
		d.errorf("spec.version", "is required: the engine version hosts are installed or upgraded to (e.g. 1.35.3-k3s1)")
	} else if CheckFileNamePart(ds.Spec.Version) != nil {
		// Without metadata.version it names the package file.
		d.errorf("spec.version", "%q is not a version: letters, digits, '.', '_', '+' and '-', as in 1.35.3-k3s1", ds.Spec.Version)
	}
	validateActions(d, ds.Spec.Actions)
	validateDistroConfig(d, ds)
}

// validateActions refuses, with their lines, the parts of Zarf's action
// format create cannot honour: it has no package variables and no cluster
// to wait for.
func validateActions(d *document, a *Actions) {
	if a == nil || a.OnCreate == nil {
		return
	}
	set := a.OnCreate
	for _, l := range []struct {
		name    string
		actions []Action
	}{{"before", set.Before}, {"after", set.After}, {"onSuccess", set.OnSuccess}, {"onFailure", set.OnFailure}} {
		for i, act := range l.actions {
			p := fmt.Sprintf("spec.actions.onCreate.%s[%d]", l.name, i)
			if act.Cmd == "" {
				d.errorf(p+".cmd", "is required: the command to run")
			}
			if len(act.Wait) > 0 {
				d.errorf(p+".wait", "wait actions are not supported: create has no cluster to wait for")
			}
			for _, v := range []struct {
				field string
				set   bool
			}{{"setVariable", act.SetVariable != ""}, {"setVariables", len(act.SetVariables) > 0}, {"setValues", len(act.SetValues) > 0}, {"template", act.Template}} {
				if v.set {
					d.errorf(p+"."+v.field, "needs package variables, which cargoship does not have")
				}
			}
		}
	}
}

func validateDistroConfig(d *document, ds *Distro) {
	cfg := &ds.Spec.Config
	arches := ds.Arches()
	for i, f := range cfg.Files {
		validateFile(d, fmt.Sprintf("spec.config.files[%d]", i), f, arches, false)
	}
	for i, f := range cfg.OS.Files {
		validateFile(d, fmt.Sprintf("spec.config.os.files[%d]", i), f, arches, true)
	}
	validateEngineConfig(d, ds.Spec.Type, &cfg.Engine)
	for i, f := range cfg.Manifests {
		p := fmt.Sprintf("spec.config.manifests[%d]", i)
		switch {
		case f.Source == "" && f.Data == "":
			d.errorf(p, "needs a source (a path or URL of a manifest) or inline data")
		case f.Source != "" && f.Data != "":
			d.errorf(p+".data", "set source or data, not both")
		}
		checkSource(d, p+".source", f.Source)
		if f.Target != "" {
			if err := CheckHostPath(f.Target); err != nil {
				d.errorf(p+".target", "%v", err)
			}
		}
		if f.Shasum != "" && !sha256Hex.MatchString(f.Shasum) {
			d.errorf(p+".shasum", "must be a SHA-256 as 64 hex digits")
		}
	}
	for _, k := range sortedKeys(cfg.OS.Sysctl) {
		if !sysctlKey.MatchString(k) {
			d.keyErrorf(joinPath("spec.config.os.sysctl", k), "%q is not a sysctl key (like net.ipv4.ip_forward)", k)
		} else if v := cfg.OS.Sysctl[k]; containsControl(v) {
			d.errorf(joinPath("spec.config.os.sysctl", k), "the value holds a newline or control character")
		}
	}
	if se := cfg.OS.SELinux; se != nil {
		for i, mod := range se.Modules {
			p := fmt.Sprintf("spec.config.os.selinux.modules[%d]", i)
			if mod.Name == "" || !labelName.MatchString(mod.Name) {
				d.errorf(p+".name", "%q is not a policy module name", mod.Name)
			}
			if mod.Source == "" {
				d.errorf(p+".source", "is required: the .pp or .cil file the package carries")
			} else if ext := path.Ext(mod.Source); ext != ".pp" && ext != ".cil" && ext != ".bz2" {
				d.errorf(p+".source", "%q is not a .pp or .cil policy module", mod.Source)
			} else {
				checkSource(d, p+".source", mod.Source)
			}
			if mod.Shasum != "" && !sha256Hex.MatchString(mod.Shasum) {
				d.errorf(p+".shasum", "must be a SHA-256 as 64 hex digits")
			}
		}
		for _, b := range sortedKeys(se.Booleans) {
			if !labelName.MatchString(b) {
				d.keyErrorf(joinPath("spec.config.os.selinux.booleans", b), "%q is not an SELinux boolean name", b)
			}
		}
		for i, fc := range se.FileContexts {
			p := fmt.Sprintf("spec.config.os.selinux.fileContexts[%d]", i)
			if !strings.HasPrefix(fc.Path, "/") || containsControl(fc.Path) {
				d.errorf(p+".path", "%q must be an absolute path pattern", fc.Path)
			}
			if !labelName.MatchString(fc.Type) || !strings.HasSuffix(fc.Type, "_t") {
				d.errorf(p+".type", "%q is not an SELinux type (like container_var_lib_t)", fc.Type)
			}
		}
	}
	ic := cfg.ImageConfig
	if ic.Compression != "" && !slices.Contains(Compressions, ic.Compression) {
		d.errorf("spec.config.imageConfig.compression", "%q is not one of %s", ic.Compression, quoteList(Compressions))
	}
	if ic.Path != "" && !isCleanAbsPath(ic.Path) {
		d.errorf("spec.config.imageConfig.path", "%q must be an absolute path without '..'", ic.Path)
	} else if want := DefaultImagesDir(ds.Spec.Type); ic.Path != "" && ds.Spec.Type != EngineUpstream && path.Clean(ic.Path) != want {
		// k3s and rke2 import only from their data-dir's agent/images, and
		// cargoship supports only their default data-dir
		// (docs/reference/engines.md 1.1, 1.2): archives anywhere else would
		// be placed and never imported.
		d.errorf("spec.config.imageConfig.path", "%q is never imported: %s imports images only from %s; leave imageConfig.path unset or set it to that", ic.Path, ds.Spec.Type, want)
	}
	seen := map[string]int{}
	for i, img := range ic.Images {
		p := fmt.Sprintf("spec.config.imageConfig.images[%d]", i)
		ref, err := name.ParseReference(img)
		if err != nil {
			d.errorf(p, "%q is not an image reference: %v", img, err)
			continue
		}
		if j, dup := seen[ref.Name()]; dup {
			d.errorf(p, "%q is the same image as spec.config.imageConfig.images[%d]", img, j)
		}
		seen[ref.Name()] = i
	}
	if kv := cfg.KubeVIP; kv != nil {
		switch ref, err := name.ParseReference(kv.Image); {
		case kv.Image == "":
			d.errorf("spec.config.kubeVip.image", "is required: the kube-vip image clusters with a kube-vip VIP run")
		case err != nil:
			d.errorf("spec.config.kubeVip.image", "%q is not an image reference: %v", kv.Image, err)
		default:
			if _, listed := seen[ref.Name()]; !listed {
				// Hosts are air-gapped: only what the package carries runs.
				d.errorf("spec.config.kubeVip.image", "%q is not among spec.config.imageConfig.images, so the package would not carry it", kv.Image)
			}
		}
	}
}

// validateEngineConfig checks the engine's own configuration for the
// engine the definition names (an unknown spec.type is reported already).
func validateEngineConfig(d *document, engine string, e *EngineConfig) {
	if !slices.Contains(Engines, engine) {
		engine = ""
	}
	for _, k := range sortedKeys(e.Config) {
		if err := CheckEngineConfigKey(engine, k, e.Config[k]); err != nil {
			d.keyErrorf(joinPath("spec.config.engine.config", k), "%v", err)
		}
	}
	if len(e.Manifest) > 0 {
		if err := CheckChartsFor(engine); err != nil {
			d.errorf("spec.config.engine.manifest", "%v", err)
		}
	}
	for _, k := range sortedKeys(e.Manifest) {
		p := joinPath("spec.config.engine.manifest", k)
		if err := CheckChartName(k); err != nil {
			d.keyErrorf(p, "%v", err)
		}
		if err := CheckChartValues(e.Manifest[k]); err != nil {
			d.errorf(p, "%v", err)
		}
	}
	validateEngineRegistries(d, engine, e.Registries)
}

// validateEngineRegistries checks the registries.yaml body's registry
// names and endpoints: with the cluster's they become registries.yaml keys
// and, for containerd, certs.d directories.
func validateEngineRegistries(d *document, engine string, reg map[string]any) {
	mirrors, _ := reg["mirrors"].(map[string]any)
	for _, name := range sortedKeys(mirrors) {
		p := joinPath("spec.config.engine.registries.mirrors", name)
		if err := CheckRegistryName(name); err != nil {
			d.keyErrorf(p, "%v", err)
		}
		m, _ := mirrors[name].(map[string]any)
		eps, isList := m["endpoint"].([]any)
		if s, ok := m["endpoint"].(string); ok {
			eps = []any{s}
		}
		for i, e := range eps {
			ep := p + ".endpoint"
			if isList {
				ep = fmt.Sprintf("%s[%d]", ep, i)
			}
			if s, ok := e.(string); !ok {
				d.errorf(ep, "want a URL, got %v", e)
			} else if err := CheckRegistryEndpoint(s); err != nil {
				d.errorf(ep, "%v", err)
			}
		}
		if m["rewrite"] != nil {
			if err := CheckRegistryRewriteFor(engine); err != nil {
				d.errorf(p+".rewrite", "%v", err)
			}
		}
	}
	configs, _ := reg["configs"].(map[string]any)
	for _, name := range sortedKeys(configs) {
		p := joinPath("spec.config.engine.registries.configs", name)
		if err := CheckRegistryName(name); err != nil {
			d.keyErrorf(p, "%v", err)
		}
		if c, _ := configs[name].(map[string]any); c["auth"] != nil {
			if err := CheckRegistryAuthFor(engine); err != nil {
				d.errorf(p+".auth", "%v", err)
			}
		}
	}
}

func validateFile(d *document, p string, f File, arches []string, osFile bool) {
	switch {
	case f.Source == "" && f.Data == "":
		d.errorf(p+".source", "is required: a path relative to the definition or an http(s) URL")
	case f.Source != "" && f.Data != "":
		d.errorf(p+".data", "set source or data, not both")
	}
	checkSource(d, p+".source", f.Source)
	if f.Target == "" {
		d.errorf(p+".target", "is required: the absolute path on the host")
	} else if err := CheckHostPath(f.Target); err != nil {
		d.errorf(p+".target", "%v", err)
	}
	if f.Shasum != "" && !sha256Hex.MatchString(strings.TrimPrefix(f.Shasum, "sha256:")) {
		d.errorf(p+".shasum", "must be a SHA-256 as 64 hex digits")
	}
	if f.ExtractPath != "" && (strings.HasPrefix(f.ExtractPath, "/") || slices.Contains(strings.Split(f.ExtractPath, "/"), "..")) {
		d.errorf(p+".extractPath", "%q must be a relative path inside the archive", f.ExtractPath)
	}
	if mode, ok := checkPerm(d, p+".perm", f.Perm, 0o755); ok && f.Executable && mode&0o111 == 0 {
		d.errorf(p+".perm", "%04o has no execute bit, but executable is true", mode)
	}
	for _, who := range []struct{ field, v string }{{"user", f.User}, {"group", f.Group}} {
		if who.v != "" && !unixUserOrGrp.MatchString(who.v) {
			d.errorf(p+"."+who.field, "%q is not a %s name", who.v, who.field)
		}
	}
	for i, s := range f.Symlinks {
		if err := CheckHostPath(s); err != nil {
			d.errorf(fmt.Sprintf("%s.symlinks[%d]", p, i), "%v", err)
		}
	}
	s := f.Selector
	if s == nil {
		if osFile {
			d.errorf(p+".selector.package", "is required for os.files: one of %s", quoteList(Routes))
		}
		return
	}
	switch {
	case s.Package == "" && osFile:
		d.errorf(p+".selector.package", "is required for os.files: one of %s", quoteList(Routes))
	case s.Package != "" && !slices.Contains(Routes, s.Package):
		d.errorf(p+".selector.package", "%q is not an install route; use one of %s", s.Package, quoteList(Routes))
	}
	if s.Profile != "" && !slices.Contains(selectorRoleOf, s.Profile) {
		d.errorf(p+".selector.profile", "%q is not one of %s", s.Profile, quoteList(selectorRoleOf))
	}
	if s.OS != "" && !slices.Contains(Families, s.OS) {
		d.errorf(p+".selector.os", "%q is not an OS family; use one of %s", s.OS, quoteList(Families))
	}
	if s.Architecture != "" {
		if !slices.Contains(Architectures, s.Architecture) {
			d.errorf(p+".selector.architecture", "%q is not one of %s", s.Architecture, quoteList(Architectures))
		} else if len(arches) > 0 && !slices.Contains(arches, s.Architecture) {
			d.errorf(p+".selector.architecture", "%q is not an architecture this definition builds (%s)", s.Architecture, quoteList(arches))
		}
	}
}
