package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

func init() { extraCommands = append(extraCommands, newInspectCommand) }

type inspectFlags struct {
	verifyKeys []string
	json       bool
	sbom       bool
}

func newInspectCommand(app *App) *cobra.Command {
	var fl inspectFlags
	cmd := &cobra.Command{
		Use:   "inspect PACKAGE [--verify-key PUB ...] [--json | --sbom]",
		Short: "Verify a package and show what it carries",
		Long: "inspect reads a package once, checking every entry against checksums.txt, checksums.txt\n" +
			"against the digest in manifest.yaml, that no entry is missing or extra, and, under a trust policy\n" +
			"(--verify-key, or trusted_keys or require_signature in cargoship-config.yaml), the ed25519 signature\n" +
			"over manifest.yaml. It then prints the engine, versions, architectures, files with their targets\n" +
			"and selectors, and the images of each architecture. It exits 1 when anything does not verify,\n" +
			"naming the entry, and when the policy refuses the package (unsigned, or no trusted key signed it),\n" +
			"after printing what it holds.",
		Example:           "  cargoship inspect build/cargoship-rancher-k3s-amd64-1.35.3-k3s1.tar.zst --verify-key cargoship.pub",
		GroupID:           groupPackage,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePackageArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(cmd, app, args[0], fl)
		},
	}
	registerVerifyKey(cmd.Flags(), &fl.verifyKeys)
	cmd.Flags().BoolVar(&fl.json, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&fl.sbom, "sbom", false, "print the package's SBOM (CycloneDX JSON) instead, once the package verifies")
	cmd.MarkFlagsMutuallyExclusive("json", "sbom")
	return cmd
}

func runInspect(cmd *cobra.Command, app *App, path string, fl inspectFlags) error {
	app.logSettingsWarnings()
	trust, err := app.Settings.trustPolicy(fl.verifyKeys)
	if err != nil {
		return err
	}
	// ReportTrust: a refused package is still shown, then inspect fails.
	opts := pkgfile.OpenOptions{TmpDir: app.Settings.TmpDir, VerifyOnly: true, Trust: trust, ReportTrust: true}
	p, err := pkgfile.OpenContext(cmd.Context(), path, opts)
	if err != nil {
		return err
	}
	defer func() {
		// Close only removes what Open extracted; the output is written.
		_ = p.Close()
	}()
	switch {
	case fl.sbom && p.TrustErr != nil:
		// A refused package's SBOM is not handed to a scanner as if it
		// were trusted; the refusal below is the answer.
	case fl.sbom:
		err = writeInspectSBOM(app.Out, p)
	case fl.json:
		err = writeInspectJSON(app.Out, p)
	default:
		err = writeInspectText(app.Out, p)
	}
	if err == nil && p.TrustErr != nil {
		err = fmt.Errorf("package %s: refused: %w", path, p.TrustErr)
	}
	return err
}

// inspectReport is inspect --json: stable field names for scripts.
type inspectReport struct {
	Path              string                    `json:"path"`
	Size              int64                     `json:"size"`
	Signed            bool                      `json:"signed"`
	SignatureVerified bool                      `json:"signatureVerified"`
	KeyID             string                    `json:"keyID,omitempty"`
	Refused           string                    `json:"refused,omitempty"`
	Name              string                    `json:"name"`
	Engine            string                    `json:"engine"`
	EngineVersion     string                    `json:"engineVersion"`
	Version           string                    `json:"version,omitempty"`
	Architectures     []string                  `json:"architectures"`
	Build             *v1alpha1.Build           `json:"build"`
	Checksums         string                    `json:"checksums"`
	Entries           []pkgfile.Entry           `json:"entries"`
	Distro            *v1alpha1.Distro          `json:"distro"`
	Images            map[string][]inspectImage `json:"images"`
}

type inspectImage struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
}

func writeInspectJSON(w io.Writer, p *pkgfile.Package) error {
	d := p.Distro
	r := inspectReport{
		Path: p.Path, Size: p.Size, Signed: p.Signed, SignatureVerified: p.SignatureVerified, KeyID: p.KeyID, Refused: errString(p.TrustErr),
		Name: d.Metadata.Name, Engine: d.Spec.Type, EngineVersion: d.Spec.Version, Version: d.Build.Version,
		Architectures: p.Arches(), Build: d.Build, Checksums: p.Manifest.Package.Checksums,
		Entries: p.Entries(), Distro: d, Images: map[string][]inspectImage{},
	}
	for _, e := range p.EntriesOf(pkgfile.KindImages) {
		for _, img := range e.Images {
			r.Images[e.Architecture] = append(r.Images[e.Architecture], inspectImage{Ref: img.Ref, Digest: img.Digest})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func writeInspectText(w io.Writer, p *pkgfile.Package) error {
	d := p.Distro
	// Every line written to a tabwriter here has a tab in it, so the
	// tabwriter buffers it until Flush writes to w: a failing w shows up in
	// Flush's error, which is checked, so the writes into tw are not.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { _, _ = fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("Package", fmt.Sprintf("%s (%s)", p.Path, inspectBytes(p.Size)))
	row("Verified", fmt.Sprintf("%d entries match checksums.txt (sha256 %s…), none missing, none extra", len(p.Entries()), p.Manifest.Package.Checksums[:12]))
	switch {
	case p.TrustErr != nil:
		row("Signature", "REFUSED: "+p.TrustErr.Error())
	case p.SignatureVerified:
		row("Signature", "verified with key "+p.KeyID)
	case p.Signed:
		row("Signature", "signed, NOT verified (no key is trusted: set trusted_keys or give --verify-key)")
	default:
		row("Signature", "unsigned, NOT verified (checked against its own checksums only)")
	}
	name := d.Metadata.Name
	if d.Metadata.Description != "" {
		name += " (" + d.Metadata.Description + ")"
	}
	row("Name", name)
	row("Engine", d.Spec.Type+" "+d.Spec.Version)
	row("Version", d.Build.Version)
	row("Architectures", strings.Join(p.Arches(), ", "))
	row("Built", d.Build.Timestamp+" by cargoship "+d.Build.ToolVersion)
	row("SBOM", inspectSBOMRow(p))
	if ic := d.Spec.Config.ImageConfig; len(ic.Images) > 0 {
		row("Images path", ic.Path+" (compression "+ic.Compression+")")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	for _, kind := range []pkgfile.Kind{pkgfile.KindFiles, pkgfile.KindOS, pkgfile.KindManifests, pkgfile.KindSELinux} {
		entries := p.EntriesOf(kind)
		if len(entries) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n%s\n", inspectKindTitle[kind]); err != nil {
			return err
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "ENTRY\tTARGET\tMODE\tOWNER\tSIZE\tSHA256\tSELECTOR")
		for _, e := range entries {
			target := e.Target
			if e.Module != "" {
				target = "module " + e.Module
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, inspectOrDash(target), e.Mode, inspectOwner(e), inspectBytes(e.Size), e.SHA256[:12], inspectSelector(e.Selector))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, e := range p.EntriesOf(pkgfile.KindImages) {
		if _, err := fmt.Fprintf(w, "\nImages for %s: %s (%s, sha256 %s…)\n", e.Architecture, e.Name, inspectBytes(e.Size), e.SHA256[:12]); err != nil {
			return err
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "REF\tDIGEST\tSIZE")
		for _, img := range e.Images {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", img.Ref, img.Digest, inspectBytes(img.Size))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

var inspectKindTitle = map[pkgfile.Kind]string{
	pkgfile.KindFiles:     "Files for every host (spec.config.files)",
	pkgfile.KindOS:        "Install files chosen per host (spec.config.os.files)",
	pkgfile.KindManifests: "Manifests applied from the leader (spec.config.manifests)",
	pkgfile.KindSELinux:   "SELinux policy modules (spec.config.os.selinux.modules)",
}

func inspectOwner(e pkgfile.Entry) string {
	u, g := e.User, e.Group
	if u == "" {
		u = "root"
	}
	if g == "" {
		g = "root"
	}
	return u + ":" + g
}

func inspectSelector(s *v1alpha1.Selector) string {
	if s == nil {
		return "all hosts"
	}
	var parts []string
	for _, kv := range [][2]string{{"package", s.Package}, {"profile", s.Profile}, {"os", s.OS}, {"arch", s.Architecture}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if len(parts) == 0 {
		return "all hosts"
	}
	return strings.Join(parts, " ")
}

func inspectOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// inspectBytes prints a size in binary units.
func inspectBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
