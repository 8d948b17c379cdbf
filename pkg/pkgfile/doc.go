// Package pkgfile is cargoship's offline package: its layout as a type
// (Manifest, Index, Entry, Kind), Create (definition -> one .tar.zst),
// Open (one verifying pass, then access to entries) and ed25519 signing.
//
// Integrity is a chain written in one place and checked in one place:
// every payload entry's sha256 is in checksums.txt (Checksums.Marshal,
// written by Create, checked by Open); the sha256 of checksums.txt is in
// manifest.yaml; manifest.yaml ends with its own digest line; manifest.sig
// signs manifest.yaml. So a valid signature vouches for every byte.
//
// Entry order: manifest.yaml, manifest.sig, checksums.txt come first, then
// the payload sorted by name. Writing the index first is free because
// every payload is on disk before the archive is written anyway (a tar
// header needs the size up front, which a download or an image archive
// only has at its end): downloads sit in the cache, local files where they
// are, image archives in a staging directory. A reader then knows what to
// trust before the first payload byte, and verifies in one streaming pass.
//
// Access after Open: Open verifies in one pass and writes nothing. By
// default the first OpenEntry extracts every entry (verified again as it
// is written) under TmpDir, because apply may send many entries to many
// hosts and a zstd stream has no random access; a converged apply opens no
// entry and never extracts. Close removes the copy. With VerifyOnly
// nothing is ever written and OpenEntry re-reads the package up to the
// entry. Either way an entry reader fails at EOF if the bytes are not the
// recorded ones.
package pkgfile
