// Package pkgfile is cargoship's offline package: its layout as a type,
// Create (definition -> one .tar.zst), Open (one verifying pass, then
// random access to entries) and ed25519 signing.
//
// Integrity is a chain written in one place and checked in one place:
// every payload entry's sha256 is in checksums.txt; the sha256 of
// checksums.txt is in manifest.yaml; manifest.sig signs manifest.yaml. So a
// valid signature vouches for every byte of the package.
package pkgfile
