package pkgfile

import (
	"fmt"
	"net/url"
	"strings"
)

// imageName splits a normalised image reference
// (registry/repository[:tag][@digest]) into its repository, tag and digest.
func imageName(ref string) (repo, tag, digest string) {
	repo, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo, tag = repo[:i], repo[i+1:]
	}
	return repo, tag, digest
}

// ociPURL is the package URL of an image (purl type oci): the last path
// element of the repository as the name, the manifest digest as the
// version, and where it lives, its tag and its architecture as
// qualifiers, sorted by key as the purl spec's canonical form has them.
func ociPURL(ref, digest, arch string) string {
	repo, tag, _ := imageName(ref)
	name := strings.ToLower(repo[strings.LastIndexByte(repo, '/')+1:])
	q := [][2]string{{"arch", arch}, {"repository_url", repo}}
	if tag != "" {
		q = append(q, [2]string{"tag", tag})
	}
	return "pkg:oci/" + purlEscape(name, "") + "@" + purlEscape(digest, "") + purlQualifiers(q)
}

// genericPURL is the package URL of a downloaded file (purl type generic):
// its file name and version, with the download URL and checksum as
// qualifiers.
func genericPURL(fileName, version, downloadURL, sha256 string) string {
	p := "pkg:generic/" + purlEscape(fileName, "")
	if version != "" {
		p += "@" + purlEscape(version, "")
	}
	return p + purlQualifiers([][2]string{{"checksum", "sha256:" + sha256}, {"download_url", downloadURL}})
}

// purlQualifiers renders sorted key=value pairs, leaving out empty values.
func purlQualifiers(q [][2]string) string {
	var parts []string
	for _, kv := range q {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+purlEscape(kv[1], "/:"))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "?" + strings.Join(parts, "&")
}

// purlEscape percent-encodes what the purl spec does not allow as is:
// everything but letters, digits, ".-_~" and keep (a qualifier value
// keeps the '/' and ':' of a URL; a name or version keeps neither, so a
// digest version is "sha256%3A...").
func purlEscape(s, keep string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(".-_~", c) >= 0, strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// isDownloadURL reports whether a source is fetched over http(s), so it
// is a download location an SBOM can point at.
func isDownloadURL(source string) bool {
	u, err := url.Parse(source)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
