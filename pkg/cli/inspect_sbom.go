package cli

import (
	"fmt"
	"io"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// writeInspectSBOM is inspect --sbom: the SBOM's bytes as the package
// carries them (verified against checksums.txt while read), so what a
// scanner is given is exactly what the signature covers.
func writeInspectSBOM(w io.Writer, p *pkgfile.Package) error {
	data, err := p.SBOM()
	if err != nil {
		return fmt.Errorf("--sbom: %w", err)
	}
	_, err = w.Write(data)
	return err
}

// inspectSBOMRow is the SBOM line of inspect's text output.
func inspectSBOMRow(p *pkgfile.Package) string {
	e, ok := p.Entry(pkgfile.SBOMName)
	if !ok {
		return "none (built with skip_sbom, or by a cargoship that wrote none)"
	}
	return fmt.Sprintf("%s (CycloneDX, %s; cargoship inspect --sbom prints it)", e.Name, inspectBytes(e.Size))
}
