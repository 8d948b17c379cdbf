// Package image pulls container images from OCI registries for one platform
// and writes them into the single archive an engine imports on its own
// (k3s and rke2 from agent/images/) or through `ctr images import`.
//
// The archive is a docker-archive tarball: manifest.json lists every image
// with its RepoTags, configs and layers are stored once each however many
// images share them, and entries are written in a fixed order with fixed
// metadata so the same images give the same bytes. A small index,
// cargoship-images.json, records each image's registry manifest digest,
// which the docker format has no place for; importers store it as an
// unreferenced blob and ignore it.
package image
